#!/usr/bin/env bash
# One report for a commit: the test grid, the performance suite, their
# history and charts, in OUT/index.html (default build/report) with the JSON
# it was drawn from (OUT/report.json), checked in headless Chromium.
#
#   scripts/report.sh --quick   the CI smoke: the matrix's CI slice against
#                               smbd (printed as `matrix.sh --print` does),
#                               two workloads, one server, one round; its
#                               history line goes to OUT/history.jsonl only
#   scripts/report.sh           the full run: the whole matrix and the
#                               file-system checkers (scripts/checkers.sh)
#                               against smbd and smbkitd, every workload,
#                               client, server and security mode in ROUNDS
#                               rounds; appends its line to
#                               docs/perf-history.jsonl
# Options:
#   --out DIR       where the report goes (default BUILD/report)
#   --build DIR     the build tree (default build): bin/smbkit, smbkitd,
#                   smbkit-samba, fuse_test, integration_test
#   --rounds N      perf rounds of the full run (default 3)
#   --no-grid       skip the test grid (perf and charts only)
#   --no-perf       skip the performance suite
#   --no-matrix     the full run's grid without the gtest matrix (checkers only)
#   --no-checkers   the full run's grid without the file-system checkers
#   --servers "A B" the servers of the full run (default "smbd smbkitd"):
#                   grid and performance suite
#   --workloads "W.." the performance suite's workloads (scripts/report_perf.sh
#                   --help; default all); also from $PERF_WORKLOADS
#   --clients "C.." its clients (default all); also from $PERF_CLIENTS
#   --secs "S.."    its security modes (default plain sign seal); $PERF_SECS
#   --history FILE  the history file (default docs/perf-history.jsonl)
# Environment passed to scripts/report_perf.sh: SIZE_MB, BENCH_TIME,
# LINK_SIZE_MB, UNTAR_FILES; to scripts/checkers.sh: its bounds (FSX_SECS,
# DBENCH_SECS, TAR_FILES, CHECK_TIMEOUT, ...; see its --help).
#
# Exit status: 0 when every test of the grid passed, every measurement ran
# and the page passed its browser check (scripts/report_check.py); else 1.
# Needs python3-matplotlib and chromium (scripts/install-deps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0 out= build=build rounds=3 grid=1 perf=1 history=docs/perf-history.jsonl
matrix=1 checkers=1 servers="smbd smbkitd"
workloads=${PERF_WORKLOADS:-} clients=${PERF_CLIENTS:-} secs=${PERF_SECS:-}
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --out) out=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --rounds) rounds=${2:?}; shift ;;
    --no-grid) grid=0 ;;
    --no-perf) perf=0 ;;
    --no-matrix) matrix=0 ;;
    --no-checkers) checkers=0 ;;
    --servers) servers=${2:?}; shift ;;
    --workloads) workloads=${2:?}; shift ;;
    --clients) clients=${2:?}; shift ;;
    --secs) secs=${2:?}; shift ;;
    --history) history=${2:?}; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "report.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
out=${out:-$build/report}
# Debian's python3: matplotlib is a Debian package, another python3 may come first on PATH.
PY=/usr/bin/python3; [ -x $PY ] || PY=python3
"$PY" -c 'import matplotlib' 2>/dev/null ||
  { echo "report.sh: python3-matplotlib missing (scripts/install-deps.sh)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/matrix" "$out/checkers" "$out/charts" "$out/perf.tsv" "$out/index.html" "$out/report.json"
t_start=$SECONDS
status=0
runs=()
if [ $grid = 1 ]; then
  if [ $quick = 1 ]; then
    scripts/matrix.sh --slice ci --build "$build" --out "$out/matrix" --print || status=1
  else
    if [ $matrix = 1 ]; then
      t0=$SECONDS
      scripts/matrix.sh --full --servers "$servers" --build "$build" --out "$out/matrix" || status=1
      echo "report.sh: the matrix took $((SECONDS - t0)) s"
    fi
    if [ $checkers = 1 ]; then
      t0=$SECONDS
      scripts/checkers.sh --servers "$servers" --build "$build" --out "$out/checkers" || status=1
      echo "report.sh: the checkers took $((SECONDS - t0)) s"
    fi
  fi
  [ -f "$out/matrix/runs.tsv" ] && runs=("$out/matrix/runs.tsv")
  [ -f "$out/checkers/runs.tsv" ] && runs+=("$out/checkers/runs.tsv")
fi

: >"$out/perf.tsv"
if [ $perf = 1 ]; then
  if [ $quick = 1 ]; then
    note="quick: SIZE_MB=${SIZE_MB:=64}, BENCH_TIME=${BENCH_TIME:=3}, 1 round, smbd, plain"
    SIZE_MB=$SIZE_MB BENCH_TIME=$BENCH_TIME scripts/report_perf.sh --build "$build" --out "$out" --rounds 1 \
      --servers smbd --secs plain --clients "smbkit smbclient" --workloads "seqread rand4k-qd16 meta" || status=1
  else
    note="full: SIZE_MB=${SIZE_MB:=256}, BENCH_TIME=${BENCH_TIME:=5}, $rounds interleaved rounds"
    sel=(--servers "$servers")
    [ -n "$workloads" ] && sel+=(--workloads "$workloads") && note+=", workloads: $workloads"
    [ -n "$clients" ] && sel+=(--clients "$clients") && note+=", clients: $clients"
    [ -n "$secs" ] && sel+=(--secs "$secs") && note+=", security: $secs"
    t0=$SECONDS
    SIZE_MB=$SIZE_MB BENCH_TIME=$BENCH_TIME scripts/report_perf.sh --build "$build" --out "$out" \
      --rounds "$rounds" "${sel[@]}" || status=1
    echo "report.sh: the performance suite took $((SECONDS - t0)) s"
  fi
else
  note="no performance suite in this run"
fi

# The quick run's line stays in OUT; only a full run is recorded in the repo.
append=$history
if [ $quick = 1 ] || [ $perf = 0 ]; then append=$out/history.jsonl; rm -f "$append"; fi
"$PY" scripts/report_build.py --runs "${runs[@]}" --perf "$out/perf.tsv" --history "$history" \
  --append "$append" --out "$out" --note "$note" $([ $quick = 1 ] && echo --quick) || status=1
"$PY" scripts/report_check.py "$out" || status=1
echo "report.sh: $out/index.html in $((SECONDS - t_start)) s, exit status $status"
exit $status
