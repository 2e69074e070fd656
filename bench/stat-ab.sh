#!/usr/bin/env bash
# Metadata latency A/B: stat(2) of one file through `smbkit mount`
# (actimeo=0, so every stat asks the server) directly at 0 ms and through
# smbkit-link at a round trip of DELAY ms (50), for two binaries,
# interleaved in ROUNDS rounds (3). Prints ms per stat and the ratio.
#   bench/stat-ab.sh   (BEFORE, AFTER, N0=2000 stats at 0 ms, N=20 through the link)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${_STAT_AB_INSIDE:-}" ]; then
  export BEFORE=$(realpath "${BEFORE:-.before/build/bin/smbkit}") AFTER=$(realpath "${AFTER:-build/bin/smbkit}")
  export LINK=$(realpath "${LINK:-build/bin/smbkit-link}")
  export _STAT_AB_INSIDE=1
  exec build/bin/smbkit-samba -- bash "$0"
fi
work=$(mktemp -d); share=$SMBKIT_SAMBA_DIR/share; link_pid=""
cleanup() { mountpoint -q "$work/m" && fusermount3 -u "$work/m"; [ -n "$link_pid" ] && { pkill -P "$link_pid"; kill "$link_pid"; } 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
echo data > "$share/f"; chown "$(stat -c %u:%g "$share")" "$share/f"
"$LINK" --to "$SMBKIT_PORT" --delay-ms "${DELAY:-50}" -- bash -c 'echo "$SMBKIT_LINK_PORT" > "$0"; exec sleep 100000' "$work/port" &
link_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
lport=$(cat "$work/port"); mkdir -p "$work/m"
run() {  # BIN PORT COUNT -> ms per stat
  SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$1" mount "//127.0.0.1:$2/share" "$work/m" -o "username=smbkit,actimeo=0"
  stat "$work/m/f" > /dev/null
  local t0 t1; t0=$(date +%s%N)
  for _ in $(seq "$3"); do stat -c %s "$work/m/f" > /dev/null; done
  t1=$(date +%s%N)
  fusermount3 -u "$work/m"; sleep 0.3
  awk -v ns=$((t1 - t0)) -v n="$3" 'BEGIN{printf "%.2f", ns / 1e6 / n}'
}
declare -A all
for r in $(seq "${ROUNDS:-3}"); do
  for t in before after; do
    bin=$BEFORE; [ $t = after ] && bin=$AFTER
    z=$(run "$bin" "$SMBKIT_PORT" "${N0:-2000}"); l=$(run "$bin" "$lport" "${N:-20}")
    echo "round $r $t: 0 ms $z ms/stat, ${DELAY:-50} ms $l ms/stat (load $(cut -d' ' -f1 /proc/loadavg))"
    all[$t.0]="${all[$t.0]:-} $z"; all[$t.l]="${all[$t.l]:-} $l"
  done
done
med() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for k in 0 l; do
  b=$(echo "${all[before.$k]}" | med); a=$(echo "${all[after.$k]}" | med)
  echo "$([ $k = 0 ] && echo "0 ms" || echo "${DELAY:-50} ms"): before $b ms/stat, after $a ms/stat, before/after $(awk -v a=$a -v b=$b 'BEGIN{printf "%.2f", b/a}')x"
done
