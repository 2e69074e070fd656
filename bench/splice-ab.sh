#!/usr/bin/env bash
# dd read (bs=1M) of SIZE_MB through two smbkit mounts of one smbd, one with
# -o splice (readahead payloads socket -> pipe -> /dev/fuse) and one without,
# alternating for ROUNDS rounds, each read after drop_caches. Prints per
# read: MB/s and the CPU (clock ticks, 1/100 s) smbd and the mount daemon
# spent. libfuse splices a 1 MiB reply only through a pipe above 1 MiB, so
# fs.pipe-max-size is raised to 2 MiB for the run (and put back) unless
# KEEP_PIPE_MAX=1.
#
#   TMPDIR=/dev/shm build/bin/smbkit-samba -- bench/splice-ab.sh
#
# Environment: SIZE_MB (2048), ROUNDS (5), BIN (build/bin). Needs root.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
SIZE_MB=${SIZE_MB:-2048}
ROUNDS=${ROUNDS:-5}
share=$SMBKIT_SAMBA_DIR/share
w=$(mktemp -d "${TMPDIR:-/tmp}/splice-ab.XXXX")
old_max=$(cat /proc/sys/fs/pipe-max-size)
cleanup() {
  for m in on off; do fusermount3 -u "$w/$m" 2>/dev/null || true; done
  echo "$old_max" > /proc/sys/fs/pipe-max-size
  rm -rf "$w"
}
trap cleanup EXIT
[ "${KEEP_PIPE_MAX:-0}" = 1 ] || echo 2097152 > /proc/sys/fs/pipe-max-size
head -c $((SIZE_MB << 20)) /dev/urandom > "$share/big.bin"
mkdir -p "$w/on" "$w/off"
for m in on off; do
  opt=splice; [ $m = off ] && opt=nosplice
  SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$BIN/smbkit" mount "//127.0.0.1:$SMBKIT_PORT/share" "$w/$m" \
    -o "username=smbkit,$opt" -f -v > "$w/$m.log" 2>&1 &
done
for _ in $(seq 100); do mountpoint -q "$w/on" && mountpoint -q "$w/off" && break; sleep 0.1; done
grep -h "splice o" "$w/on.log" "$w/off.log"
ticks() { for p in $(pgrep -f "$1"); do awk '{print $14+$15}' "/proc/$p/stat"; done | awk '{s+=$1} END {print s+0}'; }
for r in $(seq "$ROUNDS"); do
  for m in on off; do
    sync; echo 3 > /proc/sys/vm/drop_caches
    s0=$(ticks smbd); k0=$(ticks "smbkit mount .*$w/$m")
    rate=$(dd if="$w/$m/big.bin" of=/dev/null bs=1M 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
    s1=$(ticks smbd); k1=$(ticks "smbkit mount .*$w/$m")
    echo "round $r splice=$m: $rate  smbd $((s1 - s0)) daemon $((k1 - k0)) ticks"
  done
done
for m in on off; do
  fusermount3 -u "$w/$m"
  sleep 0.5
  echo "splice=$m: $(grep -o 'ra_spliced=[0-9]* ra_pipe_copied=[0-9]*' "$w/$m.log" | tail -1)"
done
