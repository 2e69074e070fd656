#!/usr/bin/env bash
# Runs every test: unit and integration tests (against a real smbd the
# tests start themselves) and a bounded fuzzing pass over every decoder.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
# Fuzz targets: clang + libFuzzer with ASan/UBSan, each for a fixed time.
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  CXX=clang++ BUILD_DIR=build-fuzz scripts/build.sh -DSMBKIT_FUZZ=ON
  for f in build-fuzz/bin/*_fuzz; do
    name=$(basename "$f")
    corpus=fuzz/corpus/$name; mkdir -p "build-fuzz/corpus/$name"
    echo "== fuzz $name for ${FUZZ_SECONDS}s"
    dirs=("build-fuzz/corpus/$name"); [ -d "$corpus" ] && dirs+=("$corpus")
    log=build-fuzz/$name.log
    if ! "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -print_final_stats=1 \
        "${dirs[@]}" >"$log" 2>&1; then
      tail -50 "$log"; echo "fuzz target $name failed"; exit 1
    fi
    grep -E "stat::number_of_executed_units" "$log" || true
  done
fi
cd build
ctest --output-on-failure -j2 --timeout 900
