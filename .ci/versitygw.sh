#!/usr/bin/env bash
# versitygw.sh: install / start / stop a local, real S3-compatible server
# (Versity S3 Gateway, Apache-2.0, POSIX backend) for sitemapgen tests and CI (adapted from the workplace script; .ci/run uses it).
#
#   .ci/versitygw.sh install        # go install (Go module proxy only); ~3 min cold on 2 cores, 0 s if present
#   .ci/versitygw.sh start [DIR]    # 127.0.0.1:$VGW_PORT, data in DIR (default: new temp dir); ready in ~0.15 s
#   eval "$(./versitygw.sh env)"  # exports endpoint + credentials for the tests
#   .ci/versitygw.sh stop           # stops the server started by 'start' (by PID file), removes temp data
#
# Settings (environment): VGW_VERSION (default v1.8.0), VGW_PORT (default 7070),
# VGW_ACCESS_KEY / VGW_SECRET_KEY (default sitemapgen / sitemapgen-secret),
# VGW_STATE (default ${TMPDIR:-/tmp}/sitemapgen-versitygw) for PID file + log.
set -euo pipefail

VGW_VERSION=${VGW_VERSION:-v1.8.0}
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

cmd_start() {
  local bin data; bin=$(find_bin)
  [ -n "$bin" ] || { echo "versitygw not found; run: $0 install" >&2; exit 1; }
  mkdir -p "$VGW_STATE"
  if [ -f "$VGW_STATE/pid" ] && kill -0 "$(cat "$VGW_STATE/pid")" 2>/dev/null; then
    echo "already running (pid $(cat "$VGW_STATE/pid"))"; return
  fi
  if [ $# -ge 1 ]; then data=$1; mkdir -p "$data"; rm -f "$VGW_STATE/tempdata"
  else data=$(mktemp -d "${TMPDIR:-/tmp}/sitemapgen-s3data.XXXXXX"); echo "$data" > "$VGW_STATE/tempdata"; fi
  "$bin" --access "$VGW_ACCESS_KEY" --secret "$VGW_SECRET_KEY" --port "127.0.0.1:$VGW_PORT" --quiet \
    posix "$data" > "$VGW_STATE/log" 2>&1 &
  echo $! > "$VGW_STATE/pid"
  local _
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$VGW_PORT") 2>/dev/null; then
      echo "versitygw ready on http://127.0.0.1:$VGW_PORT (pid $(cat "$VGW_STATE/pid"), data $data)"; return
    fi
    kill -0 "$(cat "$VGW_STATE/pid")" 2>/dev/null || { echo "versitygw exited:" >&2; cat "$VGW_STATE/log" >&2; exit 1; }
    sleep 0.05
  done
  echo "versitygw did not become ready in 10 s" >&2; cat "$VGW_STATE/log" >&2; exit 1
}

cmd_env() {
  cat <<ENV
export SITEMAPGEN_TEST_S3_ENDPOINT=http://127.0.0.1:$VGW_PORT
export AWS_ACCESS_KEY_ID=$VGW_ACCESS_KEY
export AWS_SECRET_ACCESS_KEY=$VGW_SECRET_KEY
export AWS_REGION=us-east-1
ENV
}

cmd_stop() {
  if [ -f "$VGW_STATE/pid" ]; then
    local pid; pid=$(cat "$VGW_STATE/pid")
    if kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
    rm -f "$VGW_STATE/pid"; echo "stopped versitygw (pid $pid)"
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
