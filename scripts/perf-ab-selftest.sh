#!/usr/bin/env bash
# scripts/perf-ab.sh's own test: a commit measured against itself is "no
# change" everywhere (exit 0), and the same commit built with a known cost
# per frame sent (-DSMBKIT_INJECT_DELAY_US=20000) is "slower" (exit 1).
# The cost is 20 ms a frame (about 1.3x on a stat or a listing): on a
# shared 2-core machine the rounds of one build spread by +-50%, and 5 ms a
# frame (1.1x) was lost in that noise. ROUNDS (11) rounds: each is short.
#
#   scripts/perf-ab-selftest.sh [REF]   (default HEAD; two builds, ~10 min)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# One commit for every build, whatever HEAD does meanwhile.
REF=$(git -C "$ROOT" rev-parse --verify "${1:-HEAD}^{commit}") || exit 2
OUT=${OUT:-$ROOT/build/perf-ab-selftest}
WORKLOADS="stat ls"
ROUNDS=${ROUNDS:-11}
fail=0
"$ROOT/scripts/perf-ab.sh" --rounds "$ROUNDS" --out "$OUT/same" "$REF" "$REF" $WORKLOADS
s=$?
if [ $s != 0 ] || [ "$(grep -c 'no change$' "$OUT/same/verdict.txt")" != 2 ]; then
  echo "perf-ab-selftest: FAIL: a build against itself was not 'no change' everywhere (exit $s)"
  fail=1
fi
B_CMAKE_ARGS=-DSMBKIT_INJECT_DELAY_US=20000 "$ROOT/scripts/perf-ab.sh" --rounds "$ROUNDS" --out "$OUT/delay" "$REF" "$REF" $WORKLOADS
s=$?
if [ $s != 1 ] || [ "$(grep -c 'slower$' "$OUT/delay/verdict.txt")" != 2 ]; then
  echo "perf-ab-selftest: FAIL: 20 ms more per frame was not 'slower' everywhere (exit $s)"
  fail=1
fi
[ $fail = 0 ] && echo "perf-ab-selftest: ok"
exit $fail
