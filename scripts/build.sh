#!/usr/bin/env bash
# Configures and builds into build/ (BUILD_DIR and extra cmake args may be
# given). A development build: warnings are errors and the tests are
# required. BUILD_TYPE picks the CMake build type (default RelWithDebInfo).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DSMBKIT_WERROR=ON \
  -DSMBKIT_TESTS=ON -DSMBKIT_UNIT_TESTS=ON "$@" >/dev/null
ninja -C "$BUILD_DIR"
