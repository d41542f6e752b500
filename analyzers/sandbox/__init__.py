"""The sandbox for untrusted programs: its launcher, runs, warm runner, watchdog, and a repository's test suite."""
