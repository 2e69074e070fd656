#!/usr/bin/env bash
# The test matrix: the real FUSE and integration tests, run once per cell of
# dialect (2.1, 3.0, 3.1.1) x security (plain, sign, seal) x mount cache
# mode (strict, none, loose), with a status table at the end:
#   build/matrix/status.md and build/matrix/status.html
#
#   scripts/matrix.sh              the CI slice (the default; same as --slice ci)
#   scripts/matrix.sh --slice ci   the diagonal: 2.1/plain/strict, 3.0/sign/none,
#                                  3.1.1/seal/loose (2-3 minutes on 2 shared cores)
#   scripts/matrix.sh --full       all 27 cells (3 of them, 2.1 with seal, are
#                                  reported as not applicable: SMB 2.1 has no
#                                  encryption)
# Options:
#   --build DIR          the build tree with bin/fuse_test, bin/integration_test
#                        (default: build)
#   --out DIR            where the XML, logs and tables go (default: BUILD/matrix)
#   --fuse-filter F      gtest filter for bin/fuse_test per cell
#   --it-filter F        gtest filter for bin/integration_test per (dialect, security)
#   --servers "A B"      the server axis: smbd, smbkitd or both (default: smbd);
#                        each cell runs once per server, labelled SERVER:cell
#                        when the server is not smbd
#   --print              print status.md when done (scripts/test.sh does)
#
# Each cell runs the gtest binaries with the cell in the environment, which
# the fixtures read (tests/fuse/mount_fixture.h, tests/integration/fixture.h):
#   SMBKIT_TEST_MOUNT_OPTS  e.g. "vers=3.0,sign,cache=none", merged under the
#                           options a test names itself (the test's win)
#   SMBKIT_TEST_VERS, SMBKIT_TEST_SEC  dialect and plain|sign|seal for
#                           connect() without arguments
#   SMBKIT_TEST_SERVER      smbd or smbkitd (tests/support/samba_server.h)
# New tests/fuse/*_test.cc suites are picked up without editing this file:
# the default FUSE filter is "everything except" the suites that do not
# depend on the cell (pure unit tests of option parsing and the inode
# table) or that choose their own modes and would only repeat (Workloads,
# Faults). A test that cannot pass in a cell by design skips itself with
# "not applicable in this cell: REASON" and is reported as n/a. The exit
# status is 0 only if every test in every cell passed.
set -uo pipefail
cd "$(dirname "$0")/.."

slice=ci
build=build
out=
fuse_filter='*-MountOptions.*:MountArgs.*:Credentials.*:InodeTable.*:*Workloads*:*Faults*'
# Integration suites that take the cell's dialect and security: connect()
# without arguments (Files, Errors, Sizes), and the smbkit binary run by
# run_smbkit (Cli, BenchCli, LinkTest; tests/integration/fixture.h).
# LinkTest.StalledServerTimesOut never gets as far as negotiating, so it
# is the same in every cell.
it_filter='Files.*:Errors.*:*Sizes*:Cli.*:BenchCli.*:LinkTest.*-LinkTest.StalledServerTimesOut'
print=0
servers=smbd
while (($#)); do
  case "$1" in
    --full) slice=full ;;
    --slice) slice=${2:?--slice needs ci or full}; shift ;;
    --slice=*) slice=${1#--slice=} ;;
    --build) build=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --fuse-filter) fuse_filter=${2:?}; shift ;;
    --it-filter) it_filter=${2:?}; shift ;;
    --servers) servers=${2:?}; shift ;;
    --print) print=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "matrix.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$slice" in ci|full) ;; *) echo "matrix.sh: --slice must be ci or full" >&2; exit 2 ;; esac
out=${out:-$build/matrix}
for b in fuse_test integration_test; do
  [ -x "$build/bin/$b" ] || { echo "matrix.sh: $build/bin/$b not built (scripts/build.sh)" >&2; exit 2; }
done
rm -rf "$out"; mkdir -p "$out"
runs=$out/runs.tsv
: >"$runs"

cells=()
if [ "$slice" = ci ]; then
  cells=("2.1 plain strict" "3.0 sign none" "3.1.1 seal loose")
else
  for v in 2.1 3.0 3.1.1; do
    for s in plain sign seal; do
      for c in strict none loose; do cells+=("$v $s $c"); done
    done
  done
fi

# run KIND LABEL FILTER BINARY [ENV...]: one gtest run, recorded in runs.tsv.
run() {
  local kind=$1 label=$2 filter=$3 bin=$4; shift 4
  local base=$out/$kind-${label//\//_}
  local t0=$SECONDS
  echo "== matrix: $kind $label"
  env "$@" timeout -k 10 900 "$build/bin/$bin" --gtest_filter="$filter" \
    --gtest_output="xml:$base.xml" >"$base.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$label" "$base.xml" "$base.log" "$rc" \
    "$((SECONDS - t0))" >>"$runs"
  tail -1 "$base.log"
}

# The cells' runs, in two lanes side by side (one per core): the FUSE cells
# one after the other, and the integration runs one after the other.
declare -A it_done=()
fuse_runs=()
it_runs=()
for srv in $servers; do
for cell in "${cells[@]}"; do
  read -r v s c <<<"$cell"
  pfx=; [ "$srv" = smbd ] || pfx="$srv:"
  label="$pfx$v/$s/$c"
  if [ "$v" = 2.1 ] && [ "$s" = seal ]; then
    printf '%s\t%s\t\t\tna\t0\n' fuse "$label" >>"$runs"
    if [ -n "$it_filter" ] && [ -z "${it_done[$pfx$v/$s]:-}" ]; then
      it_done[$pfx$v/$s]=1
      printf '%s\t%s\t\t\tna\t0\n' integration "$pfx$v/$s" >>"$runs"
    fi
    continue
  fi
  mopts="vers=$v,cache=$c"
  [ "$s" = plain ] || mopts="vers=$v,$s,cache=$c"
  fuse_runs+=("$label|$mopts|$srv")
  # The client library has no cache mode: once per dialect and security.
  if [ -n "$it_filter" ] && [ -z "${it_done[$pfx$v/$s]:-}" ]; then
    it_done[$pfx$v/$s]=1
    it_runs+=("$pfx$v/$s|$v|$s|$srv")
  fi
done
done
(
  for r in "${it_runs[@]}"; do
    IFS='|' read -r label v s srv <<<"$r"
    run integration "$label" "$it_filter" integration_test SMBKIT_TEST_VERS="$v" SMBKIT_TEST_SEC="$s" \
      SMBKIT_TEST_SERVER="$srv"
  done
) &
it_lane=$!
for r in "${fuse_runs[@]}"; do
  IFS='|' read -r label mopts srv <<<"$r"
  run fuse "$label" "$fuse_filter" fuse_test SMBKIT_TEST_MOUNT_OPTS="$mopts" SMBKIT_TEST_SERVER="$srv"
done
wait "$it_lane"

python3 scripts/matrix_report.py --runs "$runs" --slice "$slice" --md "$out/status.md" --html "$out/status.html"
rc=$?
[ "$print" = 1 ] && cat "$out/status.md"
echo "matrix: $out/status.md, $out/status.html"
exit $rc
