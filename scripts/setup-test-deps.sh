#!/usr/bin/env bash
# Installs what the test suite needs beside npm and cargo: a Python virtualenv with the official
# `mcp` SDK (at .venv/), and nginx for the load-balancer test. Idempotent; CI runs it before npm test.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import mcp' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r __test__/python/requirements.txt
fi

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends nginx-light >/dev/null 2>&1 \
      || apt-get install -y -qq --no-install-recommends nginx >/dev/null
    # The package starts a default site on port 80; the tests run their own instances only.
    (service nginx stop || pkill -x nginx || true) >/dev/null 2>&1
  else
    echo "setup-test-deps: nginx is missing and this is not root; install it (apt-get install nginx)" >&2
    exit 1
  fi
fi
