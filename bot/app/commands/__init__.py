"""The App's long-running commands: `rtcbot serve` (webhooks, dashboard) and `rtcbot worker`."""
