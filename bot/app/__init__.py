"""The GitHub App: webhooks in (web), jobs through the queue (jobs, queue, sweep), check runs
and reviews out (publish), the dashboard, and the `serve` and `worker` commands."""
