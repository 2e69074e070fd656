#!/usr/bin/env bash
# Runs every test: unit, integration and FUSE mount tests against real
# servers the tests start themselves (smbd and smbkitd), built optimized
# (gcc Release, -Werror) and under ASan+UBSan (clang), the CI slice of the
# matrix, and a bounded fuzzing pass over every decoder.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The optimized build is the one users and packagers make (Release, -O3),
# with warnings as errors; of the tests it builds the client suites, the
# only ones it runs.
BUILD_TYPE=Release scripts/build.sh -DSMBKIT_UNIT_TESTS=OFF
FUZZ_SECONDS=${FUZZ_SECONDS:-6}
# The sanitized build: clang with ASan+UBSan; it builds the fuzz targets
# and every test.
CXX=clang++ BUILD_DIR=build-fuzz scripts/build.sh -DSMBKIT_FUZZ=ON
# Fuzz targets (libFuzzer), each for a fixed time, two at a time (one per
# core): the first failure's log is shown and the run fails.
fuzz_one() {
  f=$1; name=$(basename "$f")
  corpus=fuzz/corpus/$name; mkdir -p "build-fuzz/corpus/$name"
  dirs=("build-fuzz/corpus/$name"); [ -d "$corpus" ] && dirs+=("$corpus")
  log=build-fuzz/$name.log
  if ! "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -print_final_stats=1 \
      "${dirs[@]}" >"$log" 2>&1; then
    tail -50 "$log"; echo "fuzz target $name failed"; return 1
  fi
  echo "== fuzz $name: $(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$") runs in ${FUZZ_SECONDS}s"
}
export -f fuzz_one
export FUZZ_SECONDS
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  ls build-fuzz/bin/*_fuzz | xargs -P 2 -I{} bash -c 'fuzz_one {}' || { echo "fuzzing failed"; exit 1; }
fi
# Each build runs what it is best at, so every test runs at least once per
# server and none twice: the optimized build runs the client suites
# against smbkitd and the matrix against smbd; the sanitized build runs
# the unit tests, everything against smbd and smbkitd's own tests
# (smbclient, impacket, smbtorture) below.
# cmake --install: the program, the man page and the bash completion land
# and work (the completion as bash runs it).
echo "== install check"
scripts/check-install.sh build
# The client suites with smbkitd as the server, less the known failures
# (tests/smbkitd/known_failures.txt, each with its reason).
echo "== client suites against smbkitd (gcc, optimized)"
scripts/smbkitd-suites.sh build
# The report's smoke (scripts/report.sh --quick): the dialect x security x
# cache matrix's CI slice (the diagonal; prints its status table), a few
# workloads measured once, the charts, and the page checked in headless
# Chromium. The full report: scripts/report.sh.
echo "== report smoke: test matrix (CI slice), perf, charts, browser check"
scripts/report.sh --quick
echo "== tests under ASan+UBSan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Everything but the mounts, and of the mount suite the FUSE layer's own
# logic and the hostile servers; the mounts' everyday tests run in the
# optimized build (the matrix cells and against smbkitd): under ASan they
# took 4 of the 45 minutes CI has.
(cd build-fuzz && ctest --output-on-failure -j2 --timeout 900 -LE fuse &&
  ctest --output-on-failure -j2 --timeout 900 -L fuse \
    -R '^(MountArgs|MountOptions|Credentials|InodeTable|InodeTableRace|HostileMount|PosixErrorsNames|MemoryBudget|LostWrites)\.')
