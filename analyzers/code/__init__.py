"""Code as data: unified diffs, where a line sits (enclosing definitions, places), paths from
strangers, parsing, suppressions, and the files rtcbot reads by a fixed name."""
