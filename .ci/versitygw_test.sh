#!/usr/bin/env bash
# versitygw_test.sh: versitygw.sh start never says ready for a server that is not its own.
# A second start on a port a running server holds (another session's, as on a shared
# machine) must fail naming the port, leaving the first server serving; it used to print
# "ready" while its own server had exited with "address already in use", and the tests
# then ran against the other session's server and data.
#
#   .ci/versitygw_test.sh [SCRIPT]   # SCRIPT: the versitygw.sh to test (default: the one beside this)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=${1:-$here/versitygw.sh}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/versitygw-test.XXXXXX")
cleanup() {
  VGW_STATE=$tmp/b bash "$script" stop >/dev/null 2>&1 || true
  VGW_STATE=$tmp/a bash "$script" stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

port=
for p in $(seq 17400 17499); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "no free port in 17400-17499" >&2; exit 1; }

VGW_PORT=$port VGW_STATE=$tmp/a bash "$script" start "$tmp/data-a" >/dev/null
first=$(cat "$tmp/a/pid")
if VGW_PORT=$port VGW_STATE=$tmp/b bash "$script" start "$tmp/data-b" >"$tmp/out" 2>&1; then
  echo "FAIL: a second start on port $port, held by pid $first, succeeded:" >&2
  cat "$tmp/out" >&2
  exit 1
fi
grep -q "port $port" "$tmp/out" || { echo "FAIL: the refusal does not name port $port:" >&2; cat "$tmp/out" >&2; exit 1; }
kill -0 "$first" || { echo "FAIL: the first server (pid $first) is gone" >&2; exit 1; }
echo "ok: a second start on port $port (held by pid $first) failed: $(head -1 "$tmp/out")"
