#!/usr/bin/env bash
# Installs what the test suite needs beside npm and cargo: a Python virtualenv with the official
# `mcp` SDK (at .venv/), nginx for the load-balancer test, redis-server for the fleet test, and Node 22 for the MCP conformance
# suite's runner when the system Node is older, and Chromium for the `toolnexus ui` browser tests.
# Idempotent; CI runs it before npm test.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import mcp, opentelemetry.proto' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r __test__/python/requirements.txt
fi

# The conformance suite's CLI imports fs.globSync (Node >= 22). Node 22 comes from npm into its own
# folder, not the root devDependencies, so that `node` in npm scripts stays the system Node.
if [ "$(node -p 'Number(process.versions.node.split(".")[0]) < 22')" = true ] \
  && [ ! -f __test__/conformance/node22/node_modules/.package-lock.json ]; then
  npm ci --prefix __test__/conformance/node22 --no-audit --no-fund --loglevel=error
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

# Prometheus for the /metrics test (Debian's package; the tests run their own instance on
# 127.0.0.1:0, so the one the package may start is stopped).
if ! command -v prometheus >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    (service prometheus stop || pkill -x prometheus || true) >/dev/null 2>&1
    (service prometheus-node-exporter stop || pkill -f prometheus-node-exporter || true) >/dev/null 2>&1
  else
    echo "setup-test-deps: prometheus is missing and this is not root; install it (apt-get install prometheus)" >&2
    exit 1
  fi
fi

# redis-server for the fleet tests (a state store replicas share; __test__/lib/redis.mjs runs its
# own instances on 127.0.0.1, so the one the package starts is stopped).
if ! command -v redis-server >/dev/null 2>&1 && [ ! -x /usr/bin/redis-server ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends redis-server >/dev/null
    (service redis-server stop || pkill -x redis-server || true) >/dev/null 2>&1
  else
    echo "setup-test-deps: redis-server is missing and this is not root; install it (apt-get install redis-server)" >&2
    exit 1
  fi
fi

# Chromium for the `toolnexus ui` browser tests (__test__/ui.test.mjs drives Debian's
# /usr/bin/chromium with playwright-core; no browser is downloaded by npm).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    # With its recommended packages (fonts among them), as the tests were written against.
    apt-get install -y -qq chromium >/dev/null
  else
    echo "setup-test-deps: chromium is missing and this is not root; install it (apt-get install chromium)" >&2
    exit 1
  fi
fi
