"""Starting the programs rtcbot uses, bounded, with a lifeline."""
