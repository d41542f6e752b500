#!/usr/bin/env bash
# Runs a command beside N CPU-burning processes, as on a machine shared with other builds, and
# stops them after: `make test-loaded` runs the test suite so (issue 49: a suite a busy machine
# cannot break). Each burner is a bounded busy loop in Python (no system package needed): it
# ends when this script does, or after LOAD_MAX_S seconds (default 2 h) if it was killed
# without its trap running.
#
#   scripts/with_load.sh N -- COMMAND [ARG...]      (exit status: COMMAND's)
set -euo pipefail

[ $# -ge 3 ] && [ "$2" = "--" ] && [[ "$1" =~ ^[0-9]+$ ]] \
  || { echo "usage: $0 N -- COMMAND [ARG...]   (N: how many busy processes)" >&2; exit 2; }
N=$1
shift 2
PYTHON=${PYTHON:-python3}
BURN='
import os, sys, time
parent, end = os.getppid(), time.monotonic() + float(sys.argv[1])
while os.getppid() == parent and time.monotonic() < end:
    for _ in range(200_000):
        pass
'

pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq 1 "$N"); do
  "$PYTHON" -c "$BURN" "${LOAD_MAX_S:-7200}" &
  pids+=($!)
done
export LOAD_PIDS="${pids[*]}"  # for the command, if it wants to look
echo "load: $N busy processes (pids ${pids[*]}) beside: $*" >&2
status=0
"$@" || status=$?
exit "$status"
