#!/usr/bin/env bash
# versitygw.sh: install / start / stop a local, real S3-compatible server
# (Versity S3 Gateway, Apache-2.0, POSIX backend) for sitemapgen tests and CI (adapted from the workplace script; .ci/run uses it).
#
#   .ci/versitygw.sh install        # go install (Go module proxy only); ~3 min cold on 2 cores, 0 s if present
#   .ci/versitygw.sh start [DIR]    # 127.0.0.1:$VGW_PORT, data in DIR (default: new temp dir); ready in ~0.15 s
#   eval "$(./versitygw.sh env)"  # exports endpoint + credentials for the tests
#   .ci/versitygw.sh stop           # stops the server started by 'start' (by PID file), removes temp data
#
# Settings (environment): VGW_VERSION (default v1.8.0), VGW_PORT (default 7070; when it is
# not set and 7070 is taken by another process, start takes the next free port up to 7169,
# and env says which), VGW_ACCESS_KEY / VGW_SECRET_KEY (default sitemapgen /
# sitemapgen-secret), VGW_STATE (default ${TMPDIR:-/tmp}/sitemapgen-versitygw) for PID
# file, port + log.
#
# start says ready only once its own server listens on the port: a port another process
# holds (another session's server) fails the start when VGW_PORT was given, rather than
# sending the tests to someone else's server and data.
set -euo pipefail

VGW_VERSION=${VGW_VERSION:-v1.8.0}
VGW_PORT_GIVEN=${VGW_PORT:+yes}
VGW_PORT=${VGW_PORT:-7070}
VGW_ACCESS_KEY=${VGW_ACCESS_KEY:-sitemapgen}
VGW_SECRET_KEY=${VGW_SECRET_KEY:-sitemapgen-secret}
VGW_STATE=${VGW_STATE:-${TMPDIR:-/tmp}/sitemapgen-versitygw}
MODULE=github.com/versity/versitygw

gobin() { local b; b=$(go env GOBIN); [ -n "$b" ] || b="$(go env GOPATH)/bin"; echo "$b"; }

find_bin() {
  if [ -n "${VERSITYGW:-}" ] && [ -x "$VERSITYGW" ]; then echo "$VERSITYGW"; return; fi
  if command -v go >/dev/null 2>&1 && [ -x "$(gobin)/versitygw" ]; then echo "$(gobin)/versitygw"; return; fi
  command -v versitygw 2>/dev/null || true
}

installed_version() { go version -m "$1" 2>/dev/null | awk '$1=="mod" && $2=="'"$MODULE"'" {print $3}'; }

cmd_install() {
  local bin; bin=$(find_bin)
  if [ -n "$bin" ] && [ "$(installed_version "$bin")" = "$VGW_VERSION" ]; then
    echo "versitygw $VGW_VERSION already installed: $bin"; return
  fi
  echo "installing $MODULE/cmd/versitygw@$VGW_VERSION ..."
  local t0=$SECONDS
  go install "$MODULE/cmd/versitygw@$VGW_VERSION"
  echo "installed $(gobin)/versitygw in $((SECONDS - t0)) s"
}

# answers PORT: something accepts TCP connections on 127.0.0.1:PORT.
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# owns PID PORT: process PID holds the listening socket of 127.0.0.1:PORT (0), does not
# (1), or this system cannot tell (2: no /proc/net/tcp, as outside Linux).
owns() {
  [ -r /proc/net/tcp ] && [ -d "/proc/$1/fd" ] || return 2
  local hex inode; hex=$(printf '%04X' "$2")
  # /proc/net/tcp: local_address is ADDR:PORT in hex, st 0A is LISTEN, field 10 the inode.
  for inode in $(awk -v p=":$hex" '$4 == "0A" && $2 ~ (p "$") {print $10}' /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
    if find "/proc/$1/fd" -maxdepth 1 -lname "socket:\[$inode\]" 2>/dev/null | grep -q .; then return 0; fi
  done
  return 1
}

# port: the server's port, as start recorded it (it may have taken another than VGW_PORT).
port() {
  if [ -f "$VGW_STATE/port" ] && [ -f "$VGW_STATE/pid" ] && kill -0 "$(cat "$VGW_STATE/pid")" 2>/dev/null; then
    cat "$VGW_STATE/port"
  else
    echo "$VGW_PORT"
  fi
}

cmd_start() {
  local bin data pid; bin=$(find_bin)
  [ -n "$bin" ] || { echo "versitygw not found; run: $0 install" >&2; exit 1; }
  mkdir -p "$VGW_STATE"
  if [ -f "$VGW_STATE/pid" ] && kill -0 "$(cat "$VGW_STATE/pid")" 2>/dev/null; then
    echo "already running (pid $(cat "$VGW_STATE/pid"), port $(port))"; return
  fi
  # A port another process holds would answer for the server: the tests would run
  # against someone else's server and data.
  if answers "$VGW_PORT"; then
    if [ -n "$VGW_PORT_GIVEN" ]; then
      echo "port $VGW_PORT (VGW_PORT) is taken by another process; set VGW_PORT to a free port, or leave it unset to take one" >&2
      exit 1
    fi
    local p
    for p in $(seq $((VGW_PORT + 1)) $((VGW_PORT + 99))); do
      if ! answers "$p"; then break; fi
    done
    if answers "$p"; then echo "ports $VGW_PORT to $p are all taken; set VGW_PORT to a free port" >&2; exit 1; fi
    echo "port $VGW_PORT is taken by another process: using $p"
    VGW_PORT=$p
  fi
  if [ $# -ge 1 ]; then data=$1; mkdir -p "$data"; rm -f "$VGW_STATE/tempdata"
  else data=$(mktemp -d "${TMPDIR:-/tmp}/sitemapgen-s3data.XXXXXX"); echo "$data" > "$VGW_STATE/tempdata"; fi
  "$bin" --access "$VGW_ACCESS_KEY" --secret "$VGW_SECRET_KEY" --port "127.0.0.1:$VGW_PORT" --quiet \
    posix "$data" > "$VGW_STATE/log" 2>&1 &
  pid=$!
  echo "$pid" > "$VGW_STATE/pid"
  echo "$VGW_PORT" > "$VGW_STATE/port"
  local _ own
  for _ in $(seq 1 200); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "versitygw exited:" >&2; cat "$VGW_STATE/log" >&2; cmd_stop >/dev/null; exit 1
    fi
    if answers "$VGW_PORT"; then
      own=0; owns "$pid" "$VGW_PORT" || own=$?
      if [ "$own" = 2 ]; then
        # Cannot see who listens: a server that failed to bind says so in its log (and
        # may live on a while: kill -0 alone does not tell).
        sleep 0.3
        if kill -0 "$pid" 2>/dev/null && ! grep -q "failed to bind" "$VGW_STATE/log"; then own=0; else own=1; fi
      fi
      if [ "$own" = 0 ]; then
        echo "versitygw ready on http://127.0.0.1:$VGW_PORT (pid $pid, data $data)"; return
      fi
      # Another process took the port between the check and the bind.
      echo "port $VGW_PORT is held by another process, not by versitygw (pid $pid):" >&2
      cat "$VGW_STATE/log" >&2; cmd_stop >/dev/null; exit 1
    fi
    sleep 0.05
  done
  echo "versitygw did not become ready in 10 s" >&2; cat "$VGW_STATE/log" >&2; cmd_stop >/dev/null; exit 1
}

cmd_env() {
  cat <<ENV
export SITEMAPGEN_TEST_S3_ENDPOINT=http://127.0.0.1:$(port)
export AWS_ACCESS_KEY_ID=$VGW_ACCESS_KEY
export AWS_SECRET_ACCESS_KEY=$VGW_SECRET_KEY
export AWS_REGION=us-east-1
ENV
}

cmd_stop() {
  if [ -f "$VGW_STATE/pid" ]; then
    local pid; pid=$(cat "$VGW_STATE/pid")
    if kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
    rm -f "$VGW_STATE/pid" "$VGW_STATE/port"; echo "stopped versitygw (pid $pid)"
  fi
  if [ -f "$VGW_STATE/tempdata" ]; then rm -rf "$(cat "$VGW_STATE/tempdata")"; rm -f "$VGW_STATE/tempdata"; fi
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  env) cmd_env ;;
  stop) cmd_stop ;;
  *) echo "usage: $0 install|start [DATA_DIR]|env|stop" >&2; exit 2 ;;
esac
