#!/usr/bin/env bash
# dd through `smbkit mount` (and optionally an older smbkit binary, rclone
# mount and libfuse's passthrough_ll) against a throwaway smbd whose share
# is on tmpfs; prints "LABEL TOOL-MODE read|write SECONDS MB/s".
#
#   TMPDIR=/dev/shm build/bin/smbkit-samba -- bench/mount-ab.sh
#   TMPDIR=/dev/shm build/bin/smbkit-samba -- build/bin/smbkit-link --to PORT ...
#     (see docs/benchmarks.md for the 50 ms form)
#
# Environment: SIZE_MB (2048), COUNT_MB (read only this much), WHAT (rw),
# MODES ("strict none loose"), TOOLS ("before after"; "none" for neither),
# AFTER / BEFORE (smbkit binaries; BEFORE defaults to .before/build/bin/smbkit),
# EXTRA (more -o options), RCLONE=1, PASSTHROUGH=1 (needs PASSTHROUGH_BIN,
# built from /usr/share/doc/libfuse3-dev/examples/passthrough_ll.c), LABEL.
# Needs root (drop_caches, mounts).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE_MB=${SIZE_MB:-2048}
AFTER=${AFTER:-$ROOT/build/bin/smbkit}
BEFORE=${BEFORE:-$ROOT/.before/build/bin/smbkit}
PORT=${SMBKIT_LINK_PORT:-$SMBKIT_PORT}
LABEL=${LABEL:-0ms}
MP=$(mktemp -d "${TMPDIR:-/tmp}/bench-mp.XXXX")
SHARE=$SMBKIT_SAMBA_DIR/share
if [ ! -f "$SHARE/big.bin" ]; then
  head -c $((SIZE_MB << 20)) /dev/urandom > "$SHARE/big.bin"
  chown smbkit "$SHARE/big.bin" 2>/dev/null
fi
secs() { awk '/copied/ {for (i = 1; i <= NF; i++) if ($i == "s,") print $(i-1), $(i+1), $(i+2)}'; }
run() {
  local name=$1 bin=$2 mode=$3 what=$4
  if [ "$bin" = rclone ]; then
    RCLONE_SMB_PASS=$(rclone obscure - <<<"$SMBKIT_PASSWORD") \
      rclone mount :smb:share "$MP" --smb-host 127.0.0.1 --smb-port "$PORT" --smb-user smbkit --daemon 2>/dev/null || { echo "$LABEL rclone mount failed"; return; }
    for _ in $(seq 50); do mountpoint -q "$MP" && break; sleep 0.1; done
  elif [ "$bin" = passthrough ]; then
    "$PASSTHROUGH_BIN" -o source="$SHARE" "$MP"
  else
    "$bin" mount "//127.0.0.1:$PORT/share" "$MP" -o "username=smbkit,$mode${EXTRA:+,$EXTRA}" || { echo "mount failed"; return; }
  fi
  sync; echo 3 > /proc/sys/vm/drop_caches
  if [[ $what == *r* ]]; then
    echo "$LABEL $name read $(dd if="$MP/big.bin" of=/dev/null bs=1M ${COUNT_MB:+count=$COUNT_MB} 2>&1 | secs)"
  fi
  if [[ $what == *w* ]]; then
    echo "$LABEL $name write $(dd if=/dev/zero of="$MP/w.bin" bs=1M count="$SIZE_MB" conv=fsync 2>&1 | secs)"
    rm -f "$MP/w.bin"
  fi
  if [ "$bin" = rclone ] || [ "$bin" = passthrough ]; then fusermount3 -u "$MP"; else "$bin" umount "$MP"; fi
  sleep 0.5
}
for t in ${TOOLS:-before after}; do
  [ "$t" = none ] && continue
  for mode in ${MODES:-strict none loose}; do
    b=$AFTER; [ "$t" = before ] && b=$BEFORE
    run "$t-cache=$mode" "$b" "cache=$mode" "${WHAT:-rw}"
  done
done
[ -n "${RCLONE:-}" ] && run rclone rclone - "${WHAT:-rw}"
[ -n "${PASSTHROUGH:-}" ] && run passthrough passthrough - r
rmdir "$MP"
