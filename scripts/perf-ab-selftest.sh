#!/usr/bin/env bash
# scripts/perf-ab.sh's own test: a commit measured against itself is "no
# change" everywhere (exit 0), and the same commit built with a known cost
# per frame sent (-DSMBKIT_INJECT_DELAY_US) is "slower" (exit 1).
#
#   scripts/perf-ab-selftest.sh [REF]   (default HEAD; two builds, ~10 min)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# One commit for every build, whatever HEAD does meanwhile.
REF=$(git -C "$ROOT" rev-parse --verify "${1:-HEAD}^{commit}") || exit 2
OUT=${OUT:-$ROOT/build/perf-ab-selftest}
WORKLOADS="stat ls"
fail=0
"$ROOT/scripts/perf-ab.sh" --rounds 7 --out "$OUT/same" "$REF" "$REF" $WORKLOADS
s=$?
if [ $s != 0 ] || [ "$(grep -c 'no change$' "$OUT/same/verdict.txt")" != 2 ]; then
  echo "perf-ab-selftest: FAIL: a build against itself was not 'no change' everywhere (exit $s)"
  fail=1
fi
B_CMAKE_ARGS=-DSMBKIT_INJECT_DELAY_US=5000 "$ROOT/scripts/perf-ab.sh" --rounds 7 --out "$OUT/delay" "$REF" "$REF" $WORKLOADS
s=$?
if [ $s != 1 ] || [ "$(grep -c 'slower$' "$OUT/delay/verdict.txt")" != 2 ]; then
  echo "perf-ab-selftest: FAIL: 5 ms more per frame was not 'slower' everywhere (exit $s)"
  fail=1
fi
[ $fail = 0 ] && echo "perf-ab-selftest: ok"
exit $fail
