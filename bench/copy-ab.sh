#!/usr/bin/env bash
# Copying a SIZE_MB file within one share through an smbkit mount, two ways
# interleaved for ROUNDS rounds, each after drop_caches:
#   server: cp SRC DST             (copy_file_range -> FSCTL_SRV_COPYCHUNK_WRITE)
#   client: cp --reflink=never     (coreutils 9.1 then reads and writes itself:
#                                   every byte through the client)
# Prints per copy: elapsed seconds and the bytes the mount's connection
# received meanwhile (its "fuse conn: bytes_in=" log line at each release),
# then the median elapsed of each and their ratio.
#
#   TMPDIR=/dev/shm build/bin/smbkit-samba -- bench/copy-ab.sh
#
# Environment: SIZE_MB (1024), ROUNDS (5), OPTS (mount options, cache=strict),
# BIN (build/bin). Needs root (drop_caches).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-5}
OPTS=${OPTS:-cache=strict}
share=$SMBKIT_SAMBA_DIR/share
w=$(mktemp -d "${TMPDIR:-/tmp}/copy-ab.XXXX")
cleanup() {
  fusermount3 -u "$w/mp" 2>/dev/null || true
  rm -rf "$w" "$share/src.bin" "$share/dst.bin" "$share/warm"
}
trap cleanup EXIT
head -c $((SIZE_MB << 20)) /dev/urandom > "$share/src.bin"
mkdir -p "$w/mp"
SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$BIN/smbkit" mount "//127.0.0.1:$SMBKIT_PORT/share" "$w/mp" \
  -o "username=smbkit,$OPTS" -f -v > "$w/mount.log" 2>&1 &
for _ in $(seq 100); do mountpoint -q "$w/mp" && break; sleep 0.1; done
mountpoint -q "$w/mp" || { echo "mount failed"; cat "$w/mount.log"; exit 1; }
# The connection's bytes received so far: the last release's log line
# (a release logs after its CLOSE; give the kernel's RELEASE a moment).
bytes_in() {
  sleep 0.5
  grep -o 'fuse conn: bytes_in=[0-9]*' "$w/mount.log" | tail -1 | grep -o '[0-9]*$' || echo 0
}
: > "$w/server.t"; : > "$w/client.t"
touch "$w/mp/warm" && cat "$w/mp/warm" > /dev/null  # a first release line
for r in $(seq "$ROUNDS"); do
  for how in server client; do
    rm -f "$w/mp/dst.bin"
    sync; echo 3 > /proc/sys/vm/drop_caches
    b0=$(bytes_in)
    t0=$(date +%s.%N)
    if [ $how = server ]; then cp "$w/mp/src.bin" "$w/mp/dst.bin"; else cp --reflink=never "$w/mp/src.bin" "$w/mp/dst.bin"; fi
    t1=$(date +%s.%N)
    b1=$(bytes_in)
    cmp -s "$share/src.bin" "$share/dst.bin" || echo "round $r $how: COPY DIFFERS"
    s=$(echo "$t1 - $t0" | bc)
    echo "$s" >> "$w/$how.t"
    printf 'round %d %-6s %6.2f s  %7.0f MB/s  bytes_in %d\n' "$r" "$how" "$s" \
      "$(echo "$SIZE_MB * 1.048576 / $s" | bc -l)" $((b1 - b0))
  done
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms=$(med "$w/server.t"); mc=$(med "$w/client.t")
printf 'median: server %.2f s, client %.2f s, ratio %.1fx\n' "$ms" "$mc" "$(echo "$mc / $ms" | bc -l)"
