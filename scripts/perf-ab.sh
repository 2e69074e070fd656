#!/usr/bin/env bash
# A performance verdict between two commits: builds REF_A and REF_B in
# worktrees of their own, runs each workload with both clients against the
# same server in interleaved rounds (A then B, then B then A, ...), and
# prints per workload the ratio of B's median time to A's with a 95%
# bootstrap confidence interval and a verdict: slower, faster, or no change
# beyond the noise. Exits 1 when any workload is significantly slower.
#
#   scripts/perf-ab.sh [options] REF_A REF_B [WORKLOAD...]
#
# Workloads (default: all): get (SIZE_MB file to /dev/null), put (SIZE_MB
# file up), ls (a directory of 2,000 entries), tree (cp -r of 200 small
# files up), stat (one stat of a file: a round trip's cost).
# Options:
#   --rounds N      interleaved rounds (default 7)
#   --server S      smbd (default) or smbkitd (REF_A's build)
#   --noise F       a ratio within 1 +- F is no change (default 0.05)
#   --out DIR       where the builds, the samples and the verdict go
#                   (default build/perf-ab)
# Environment: SIZE_MB (256), B_CMAKE_ARGS (extra CMake arguments for
# REF_B's build, e.g. -DSMBKIT_INJECT_DELAY_US=500 to check the verdict:
# scripts/perf-ab-selftest.sh), CCACHE (set to use ccache).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${PERF_AB_INNER:-}" != 1 ]; then
  # The defaults only outside: inside, the outer run's ROUNDS, NOISE and
  # OUT come through the environment.
  ROUNDS=7
  SERVER=smbd
  NOISE=0.05
  OUT=$ROOT/build/perf-ab
  while [ $# -gt 0 ]; do
    case $1 in
      --rounds) ROUNDS=$2; shift 2 ;;
      --server) SERVER=$2; shift 2 ;;
      --noise) NOISE=$2; shift 2 ;;
      --out) OUT=$2; shift 2 ;;
      -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
      --*) echo "perf-ab: unknown option $1" >&2; exit 2 ;;
      *) break ;;
    esac
  done
  [ $# -ge 2 ] || { sed -n '2,24p' "$0" >&2; exit 2; }
  REF_A=$1 REF_B=$2
  shift 2
  # Commits now: a branch or HEAD that moves while A builds does not
  # change what B is.
  A_REV=$(git -C "$ROOT" rev-parse --verify "$REF_A^{commit}") || exit 2
  B_REV=$(git -C "$ROOT" rev-parse --verify "$REF_B^{commit}") || exit 2
  WORKLOADS=${*:-get put ls tree stat}
  for w in $WORKLOADS; do
    case $w in get|put|ls|tree|stat) ;; *) echo "perf-ab: unknown workload $w" >&2; exit 2 ;; esac
  done
  case $SERVER in smbd|smbkitd) ;; *) echo "perf-ab: --server is smbd or smbkitd" >&2; exit 2 ;; esac
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)

  # One build per distinct (commit, arguments); a ref named twice with the
  # same arguments is built once and measured against itself.
  build() {  # side commit extra-cmake-args
    local side=$1 commit=$2 extra=$3 dir
    dir=$OUT/src-$side
    if [ -d "$dir" ]; then
      git -C "$ROOT" worktree remove --force "$dir" 2>/dev/null || rm -rf "$dir"
    fi
    git -C "$ROOT" worktree add --detach "$dir" "$commit" > /dev/null 2>&1
    local launcher=()
    [ -n "${CCACHE:-}" ] && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # shellcheck disable=SC2086
    cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSMBKIT_TESTS=OFF \
      "${launcher[@]}" $extra > "$OUT/build-$side.log" 2>&1
    ninja -C "$dir/build" smbkit smbkitd smbkit-samba >> "$OUT/build-$side.log" 2>&1 ||
      { tail -30 "$OUT/build-$side.log"; echo "perf-ab: building $commit failed" >&2; exit 1; }
    echo "$commit"
  }
  echo "== building $REF_A"
  A_COMMIT=$(build A "$A_REV" "")
  A_BIN=$OUT/src-A/build/bin
  if [ "$B_REV" = "$A_COMMIT" ] && [ -z "${B_CMAKE_ARGS:-}" ]; then
    B_COMMIT=$A_COMMIT
    B_BIN=$A_BIN
  else
    echo "== building $REF_B ${B_CMAKE_ARGS:-}"
    B_COMMIT=$(build B "$B_REV" "${B_CMAKE_ARGS:-}")
    B_BIN=$OUT/src-B/build/bin
  fi
  export PERF_AB_INNER=1 ROUNDS NOISE OUT WORKLOADS A_BIN B_BIN REF_A REF_B A_COMMIT B_COMMIT
  # The rest runs against one server started for it.
  exec "$A_BIN/smbkit-samba" --server "$SERVER" -- "$0"
fi

# Inside: SMBKIT_PORT, SMBKIT_PASSWORD and the share's directory are set.
. "$ROOT/bench/preflight.sh"
SIZE_MB=${SIZE_MB:-256}
share=$SMBKIT_SAMBA_DIR/share
url=smb://smbkit@127.0.0.1:$SMBKIT_PORT/share
work=$(mktemp -d "${TMPDIR:-/tmp}/perf-ab.XXXX")
trap 'rm -rf "$work"' EXIT
samples=$OUT/samples.tsv
: > "$samples"

# The data: one large file each way, a wide directory, a small tree.
head -c $((SIZE_MB << 20)) /dev/urandom > "$share/big.bin"
cp "$share/big.bin" "$work/up.bin"
mkdir -p "$share/wide" "$work/tree"
for i in $(seq 1 2000); do : > "$share/wide/f$i"; done
for i in $(seq 1 200); do head -c $((1024 + (i * 337) % 16384)) /dev/urandom > "$work/tree/s$i"; done
chmod -R a+rwX "$share"

run_workload() {  # bin workload
  local bin=$1 w=$2
  case $w in
    get) "$bin/smbkit" -q get "$url/big.bin" /dev/null ;;
    put) "$bin/smbkit" -q put "$work/up.bin" "$url/up.bin" ;;
    ls) "$bin/smbkit" ls "$url/wide" > /dev/null ;;
    tree) rm -rf "$share/tree" && "$bin/smbkit" -q cp -r "$work/tree" "$url/tree" ;;
    stat) "$bin/smbkit" stat "$url/big.bin" > /dev/null ;;
  esac
}
measure() {  # side bin workload round
  local t0 t1
  t0=$(date +%s%N)
  if ! run_workload "$2" "$3" > "$work/out" 2>&1; then
    cat "$work/out" >&2
    echo "perf-ab: $3 failed with $1's build" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  printf '%s\t%s\t%s\t%s\n' "$3" "$1" "$4" "$(((t1 - t0) / 1000))" >> "$samples"
}
echo "== $ROUNDS interleaved rounds of: $WORKLOADS"
for r in $(seq 1 "$ROUNDS"); do
  for w in $WORKLOADS; do
    run_workload "$A_BIN" "$w" > /dev/null 2>&1 || true  # warm the server's cache for this workload
    if [ $((r % 2)) = 1 ]; then
      measure A "$A_BIN" "$w" "$r"; measure B "$B_BIN" "$w" "$r"
    else
      measure B "$B_BIN" "$w" "$r"; measure A "$A_BIN" "$w" "$r"
    fi
  done
done
python3 "$ROOT/scripts/perf_verdict.py" --noise "$NOISE" --a "$REF_A ($A_COMMIT)" --b "$REF_B ($B_COMMIT)" \
  "$samples" | tee "$OUT/verdict.txt"
exit "${PIPESTATUS[0]}"
