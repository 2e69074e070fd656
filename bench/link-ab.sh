#!/usr/bin/env bash
# dd bs=1M read through `smbkit mount` (cache=strict, readahead) at 0 ms
# (direct), through smbkit-link at 0 ms (what the relay itself costs on
# these 2 shared cores) and through smbkit-link at a round trip of DELAY ms
# (50), for two binaries, interleaved in ROUNDS rounds (3) against one
# smbd: the "50 ms >= 80% of 0 ms" target, A/B, against both 0 ms
# baselines. Prints per-run MB/s, medians and ratios.
#   bench/link-ab.sh   (BEFORE, AFTER, SIZE_MB=2048, OPTS: more -o, LINK: relay binary)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
cd "$(dirname "$0")/.."
if [ -z "${_LINK_AB_INSIDE:-}" ]; then
  export BEFORE=$(realpath "${BEFORE:-.before/build/bin/smbkit}") AFTER=$(realpath "${AFTER:-build/bin/smbkit}")
  export LINK=$(realpath "${LINK:-build/bin/smbkit-link}")
  [ -w /dev/shm ] && export TMPDIR=/dev/shm
  export _LINK_AB_INSIDE=1
  exec build/bin/smbkit-samba -- bash "$0"
fi
work=$(mktemp -d); share=$SMBKIT_SAMBA_DIR/share; link_pids=()
cleanup() { mountpoint -q "$work/m" && fusermount3 -u "$work/m"; for p in "${link_pids[@]}"; do { pkill -P "$p"; kill "$p"; } 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
head -c $((${SIZE_MB:-2048} << 20)) /dev/urandom > "$share/read.bin"; chown "$(stat -c %u:%g "$share")" "$share/read.bin"
start_link() {  # DELAY_MS PORTFILE
  "$LINK" --to "$SMBKIT_PORT" --delay-ms "$1" -- bash -c 'echo "$SMBKIT_LINK_PORT" > "$0"; exec sleep 100000' "$2" &
  link_pids+=($!)
  for _ in $(seq 50); do [ -s "$2" ] && break; sleep 0.1; done
}
start_link "${DELAY:-50}" "$work/port"; start_link 0 "$work/port0"
lport=$(cat "$work/port"); l0port=$(cat "$work/port0"); mkdir -p "$work/m"
run() {  # BIN PORT -> "MB/s daemon-CPU-seconds"
  SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$1" mount "//127.0.0.1:$2/share" "$work/m" -o "username=smbkit${OPTS:+,$OPTS}"
  local pid; pid=$(pgrep -n -f "mount //127.0.0.1:$2/share $work/m")
  sync; echo 3 > /proc/sys/vm/drop_caches
  local c0; c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  local mbs; mbs=$(dd if="$work/m/read.bin" of=/dev/null bs=1M 2>&1 | awk '/copied/ {for (i = 1; i <= NF; i++) if ($i == "s,") print int(('"${SIZE_MB:-2048}"' * 1048576 / $(i-1)) / 1e6)}')
  echo "$mbs $(awk -v c=$(( $(awk '{print $14 + $15}' "/proc/$pid/stat") - c0 )) -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", c / hz}')"
  fusermount3 -u "$work/m"; sleep 0.5
}
declare -A all
for r in $(seq "${ROUNDS:-3}"); do
  for t in before after; do
    bin=$BEFORE; [ $t = after ] && bin=$AFTER
    read -r z zc <<< "$(run "$bin" "$SMBKIT_PORT")"; read -r l0 l0c <<< "$(run "$bin" "$l0port")"
    read -r l lc <<< "$(run "$bin" "$lport")"
    echo "round $r $t: 0 ms $z MB/s (daemon CPU ${zc} s), link 0 ms $l0 MB/s (${l0c} s), ${DELAY:-50} ms $l MB/s (${lc} s):" \
      "$(awk -v a=$z -v b=$l 'BEGIN{printf "%.0f", 100*b/a}')% of 0 ms, $(awk -v a=$l0 -v b=$l 'BEGIN{printf "%.0f", 100*b/a}')% of link 0 ms," \
      "load $(cut -d' ' -f1 /proc/loadavg)"
    all[$t.0]="${all[$t.0]:-} $z"; all[$t.l]="${all[$t.l]:-} $l"; all[$t.l0]="${all[$t.l0]:-} $l0"
  done
done
med() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for t in before after; do
  z=$(echo "${all[$t.0]}" | med); l=$(echo "${all[$t.l]}" | med); l0=$(echo "${all[$t.l0]}" | med)
  echo "$t: median 0 ms $z MB/s, link 0 ms $l0 MB/s, ${DELAY:-50} ms $l MB/s (ratio of medians: $(awk -v a=$z -v b=$l 'BEGIN{printf "%.0f", 100*b/a}')% of 0 ms, $(awk -v a=$l0 -v b=$l 'BEGIN{printf "%.0f", 100*b/a}')% of link 0 ms)"
done
