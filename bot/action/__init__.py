"""The GitHub Action: one pull request reviewed inline in a workflow step (`rtcbot action`)."""
