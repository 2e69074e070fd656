#!/usr/bin/env bash
# The full file-system checker runs against a fresh smbkit mount per cache
# mode (strict, none, loose), with a throwaway embedded Samba:
#   smbkit-fsx       FSX_OPS operations (default 100000)
#   smbkit-fsstress  FSS_PROCS processes x FSS_OPS operations (default 8 x 10000)
#   smbkit-posixcheck the POSIX errno/behaviour cases
#   smbkit-twoclient --checks data --strict on two mounts of the share (same
#                    cache mode; strict and none, TWOCLIENT_MODES to change)
# Usage: scripts/fstests.sh            (build dir: $BUILD_DIR or build)
#        MODES="strict" FSX_OPS=20000 FSS_OPS=2000 scripts/fstests.sh
# Seeds: SEED (default 1); mode m uses SEED+100*m, printed with every result,
# so a failure reproduces with the tool's own --seed (docs/design/fstools.md).
# MOUNT_LOG=1 mounts in the foreground with -v, logging to $LOG_DIR/mount.*.log.
# Exit status: number of failed runs (0: all passed). Failure logs are kept
# in $LOG_DIR (default a fresh temp dir, printed).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BIN=$(cd "$BUILD_DIR/bin" && pwd)
if [ -z "${SMBKIT_PORT:-}" ]; then
  # Re-run inside a throwaway smbd (sets SMBKIT_PORT, SMBKIT_PASSWORD, ...).
  exec "$BIN/smbkit-samba" -- "$0" "$@"
fi
MODES=${MODES:-"strict none loose"}
FSX_OPS=${FSX_OPS:-100000}
FSS_PROCS=${FSS_PROCS:-8}
FSS_OPS=${FSS_OPS:-10000}
SEED=${SEED:-1}
# SMB refuses rename over an open file (EACCES / EBUSY); see fstools.md.
FSS_TOLERATE=${FSS_TOLERATE:-EACCES,EBUSY}
# The mounts keep attributes for actimeo (1 s): let visibility checks retry.
TC_WAIT=${TC_WAIT:-3}
LOG_DIR=${LOG_DIR:-$(mktemp -d /tmp/smbkit-fstests.XXXXXX)}
mkdir -p "$LOG_DIR"
target="//127.0.0.1:$SMBKIT_PORT/share"
failed=0
results=()

mountpoints=()
cleanup() {
  for mp in "${mountpoints[@]+"${mountpoints[@]}"}"; do
    fusermount3 -u "$mp" 2>/dev/null || fusermount3 -uz "$mp" 2>/dev/null
    rmdir "$mp" 2>/dev/null
  done
}
trap cleanup EXIT

MP=
mount_share() {  # mode -> MP (no subshell: the cleanup list must grow)
  local mp
  mp=$(mktemp -d /tmp/smbkit-fstests-mp.XXXXXX)
  mountpoints+=("$mp")
  if [ -n "${MOUNT_LOG:-}" ]; then
    # Foreground mount with -v logging to $LOG_DIR/mount.<mode>.<n>.log.
    local log="$LOG_DIR/mount.$1.${#mountpoints[@]}.log"
    "$BIN/smbkit" mount "$target" "$mp" -o "username=smbkit,cache=$1" -f -v >"$log" 2>&1 &
    for _ in $(seq 100); do
      grep -q " $mp " /proc/self/mountinfo && break
      sleep 0.1
    done
  elif ! "$BIN/smbkit" mount "$target" "$mp" -o "username=smbkit,cache=$1" >&2; then
    echo "mount (cache=$1) failed" >&2
    return 1
  fi
  grep -q " $mp " /proc/self/mountinfo || { echo "mount (cache=$1) failed" >&2; return 1; }
  MP=$mp
}

run() {  # name log-file command...
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  echo "== $name: $*"
  if "$@" >"$log" 2>&1; then
    results+=("PASS $name ($((SECONDS - t0)) s): $(grep -m1 '^summary:' "$log")")
  else
    failed=$((failed + 1))
    results+=("FAIL $name ($((SECONDS - t0)) s): see $log")
    grep -E 'FAIL|ERROR|disabled' "$log" | head -20
  fi
  grep -E '^(disabled|note):' "$log" | sed "s/^/   $name /"
}

m=0
for mode in $MODES; do
  m=$((m + 1))
  seed=$((SEED + 100 * m))
  mount_share "$mode" || { failed=$((failed + 1)); results+=("FAIL mount cache=$mode"); continue; }
  mp=$MP
  # A fresh directory per mode on the share so runs do not see each other.
  dir="$mp/fstests.$mode.$seed"
  mkdir -p "$dir"
  run "fsx cache=$mode seed=$seed" "$LOG_DIR/fsx.$mode.log" \
    "$BIN/smbkit-fsx" --seed "$seed" --ops "$FSX_OPS" --log "$LOG_DIR/fsx.$mode.replay" "$dir"
  run "posixcheck cache=$mode" "$LOG_DIR/posixcheck.$mode.log" "$BIN/smbkit-posixcheck" "$dir"
  run "fsstress cache=$mode seed=$seed" "$LOG_DIR/fsstress.$mode.log" \
    "$BIN/smbkit-fsstress" -p "$FSS_PROCS" -n "$FSS_OPS" --seed "$seed" --tolerate "$FSS_TOLERATE" "$dir"
  # loose keeps page caches across opens (no coherence promised): skipped
  # unless TWOCLIENT_MODES names it.
  case " ${TWOCLIENT_MODES:-strict none} " in *" $mode "*) ;; *) continue ;; esac
  mount_share "$mode" || { failed=$((failed + 1)); results+=("FAIL second mount cache=$mode"); continue; }
  mp2=$MP
  run "twoclient cache=$mode" "$LOG_DIR/twoclient.$mode.log" \
    "$BIN/smbkit-twoclient" --checks data --strict --wait "$TC_WAIT" --release-wait 5 "$dir" "$mp2/fstests.$mode.$seed"
done

echo
echo "== results (logs in $LOG_DIR)"
printf '%s\n' "${results[@]}"
exit "$failed"
