#!/usr/bin/env bash
# samebytes.sh: prove that a change keeps the output bytes. Builds sitemapgen
# at BASE (a git revision) and from the working tree, runs both on the same
# inputs with the same flags, and compares every file they write (sitemaps,
# indexes, robots lines, rejects), the manifest without its clock fields.
#
#   bench/samebytes.sh BASE [ROWS]     # ROWS: generated CSV rows, default 1000000 (0: none)
#   FLAGS="--lastmod-tz UTC" bench/samebytes.sh BASE   # flags for both builds (both must know them)
#
# Both builds run with --now 2026-01-01T00:00:00Z unless FLAGS sets --now:
# the index lastmods and the manifest's times would otherwise be the clock's.
#   SKIP=multilingual bench/samebytes.sh BASE   # leave out the inputs whose path matches (a change meant to alter them)
#   STRIP='s/"xml_(sha256|blake3)": "[0-9a-f]*",?//' bench/samebytes.sh BASE   # also strip what a change meant to alter from the manifests (a sed -E script)
#
# Inputs: the README sample, testdata/multilingual.{csv,parquet}, every
# fixture in testdata/columnar, and ROWS generated rows (5% bad) as CSV and as
# Parquet; each with the default flags and with small shards and a nested
# index (--max-urls 1000 --index-fanout 3), in UTC and in Europe/Berlin.
# Exit 0 when every pair is byte-identical; otherwise it names what differs.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/samebytes.sh BASE [ROWS]}
rows=${2:-1000000}
case " ${FLAGS:-} " in
*" --now "* | *" --now="*) ;;
*) FLAGS="${FLAGS:-} --now 2026-01-01T00:00:00Z" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/samebytes.XXXXXX")
cleanup() { git worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

echo "--- building $base and the working tree"
git worktree add -q --detach "$work/src" "$base"
(cd "$work/src" && go build -o "$work/before" ./cmd/sitemapgen)
go build -o "$work/after" ./cmd/sitemapgen

inputs=(testdata/sample.csv testdata/multilingual.csv testdata/multilingual.parquet testdata/columnar/*)
if [ "$rows" -gt 0 ]; then
  go run ./bench/cmd/gen -rows "$rows" -bad 0.05 > "$work/gen.csv"
  go run ./bench/cmd/gen -rows "$rows" -bad 0.05 -format parquet > "$work/gen.parquet"
  inputs+=("$work/gen.csv" "$work/gen.parquet")
fi

# The manifest records when and how long a run took: compare the rest.
strip() { sed -E -e 's/"(time|seconds)": [^,]*,?//' ${STRIP:+-e "$STRIP"} "$1"; }

fail=0 n=0
for in in "${inputs[@]}"; do
  if [ -n "${SKIP:-}" ] && [[ $in =~ $SKIP ]]; then
    echo "skipped: $in"; continue
  fi
  for flags in "" "--max-urls 1000 --index-fanout 3" "--lastmod-tz Europe/Berlin"; do
    for b in before after; do
      rm -rf "$work/out-$b" "$work/rej-$b"
      # shellcheck disable=SC2086 # flags are words
      "$work/$b" generate --public-url https://www.example.com/ --out "$work/out-$b" \
        --rejects "$work/rej-$b" ${FLAGS:-} $flags "$in" > "$work/stdout-$b" 2>/dev/null || echo "exit $?" >> "$work/stdout-$b"
    done
    n=$((n + 1))
    what="$in ${flags:-(default flags)}"
    if ! cmp -s "$work/stdout-before" "$work/stdout-after"; then
      echo "DIFFERS: $what: stdout (submit lines or exit code)"; fail=1
    fi
    if ! cmp -s "$work/rej-before" "$work/rej-after"; then
      echo "DIFFERS: $what: rejects"; fail=1
    fi
    a=$(cd "$work/out-before" && ls | sort) b=$(cd "$work/out-after" && ls | sort)
    if [ "$a" != "$b" ]; then
      echo "DIFFERS: $what: file names"; { diff <(echo "$a") <(echo "$b") || true; } | head -5; fail=1; continue
    fi
    for f in $a; do
      case $f in
        *.manifest.json) cmp -s <(strip "$work/out-before/$f") <(strip "$work/out-after/$f") ;;
        *) cmp -s "$work/out-before/$f" "$work/out-after/$f" ;;
      esac || { echo "DIFFERS: $what: $f"; fail=1; }
    done
  done
done
if [ $fail -eq 0 ]; then
  echo "same bytes: $n runs over ${#inputs[@]} inputs, $base vs the working tree"
fi
exit $fail
