"""Pure analyses of code changes and review comments (no GitHub, Flask or queues here)."""
