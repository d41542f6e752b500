"""The command line: `rtcbot review` on a patch or a git range, `eval …`, `qualify`, `config`,
`stats`."""
