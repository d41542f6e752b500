"""The CLI's commands, one module each (`command`, a click.Command), listed by name in
bot/entry.py (`rtcbot …`) or bot/cli/evaluate.py (`rtcbot eval …`)."""
