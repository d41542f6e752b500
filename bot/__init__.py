"""The GitHub surfaces of rtcbot: the App (webhooks, jobs), the Action and the CLI."""
