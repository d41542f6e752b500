#!/usr/bin/env bash
# Builds an artefact into a cache folder that several set-ups share (clones on one machine),
# one build at a time: the first set-up builds under a lock (flock(1), util-linux), a second
# one waits for it and then reuses what it built instead of building it again.
#
#   scripts/build_once.sh DIR GLOB NAME -- COMMAND [ARG...]
#
# DIR: the cache folder; GLOB: the artefact's file name pattern in it (done when one matches);
# NAME: what is built, for the messages. COMMAND runs with a fresh folder inside DIR as its last
# argument and writes the artefact there; on success the files are moved into DIR (a rename: a
# set-up that looks without the lock never sees half a file), on failure the folder is removed.
# BUILD_LOG, when set, takes COMMAND's output; this script's own lines go to stderr.
set -euo pipefail

[ $# -ge 5 ] && [ "$4" = "--" ] || { echo "usage: $0 DIR GLOB NAME -- COMMAND [ARG...]" >&2; exit 2; }
DIR=$1 GLOB=$2 NAME=$3
shift 4

built() { compgen -G "$DIR/$GLOB" >/dev/null; }

mkdir -p "$DIR"
LOCK="$DIR/.$NAME.lock"
if command -v flock >/dev/null 2>&1; then
  exec 9>>"$LOCK"
  if ! flock -n 9; then
    echo "waiting for another set-up building $NAME (lock $LOCK)" >&2
    flock 9
  fi
else
  echo "warning: flock (util-linux) not found: building $NAME without a lock" >&2
fi

if built; then
  echo "reusing $NAME from $DIR (built by another set-up)" >&2
  exit 0
fi
TMP=$(mktemp -d "$DIR/.$NAME.build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
if [ -n "${BUILD_LOG:-}" ]; then
  "$@" "$TMP" 9>&- >>"$BUILD_LOG" 2>&1
else
  "$@" "$TMP" 9>&-
fi
shopt -s nullglob
made=("$TMP"/*)
[ ${#made[@]} -gt 0 ] && mv -f "${made[@]}" "$DIR"/
built || { echo "error: building $NAME left no $GLOB in $DIR" >&2; exit 1; }
