"""The command line's shared parts, under every surface's click command (`rtcbot review`,
`serve`, `action`, …) and above the core: a lazily importing click group and option lists
(commands.py), and how a command ends on settings a person must fix (exits.py). The surfaces
never import each other, so what their commands share sits here."""
