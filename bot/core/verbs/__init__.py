"""The commands people write to rtcbot on a pull request, one module each (rerun, explain,
ignore/unignore, dismissals), listed once in table.py; base.py holds what they share."""
