#!/usr/bin/env bash
# Cached reads while other reads wait for the disk: smbkitd with
# `smbkitd:nowait reads` on and off, and the harness's server (smbd or
# smbkitd) as a reference, interleaved in one run.
#
# Per server and round: a 1 MiB random-read load on a cold file (its pages
# dropped from the page cache every 0.2 s, so those reads wait for the
# disk), and beside it a probe of 4 KiB random reads at queue depth 1 on a
# hot (cached) file. Prints the probe's IOPS and latency, the load's MB/s,
# and the CPU the server spent per GiB served (clock ticks, 1/100 s, of its
# processes and their reaped children: smbd serves each connection in a
# child it reaps).
#
#   build/bin/smbkit-samba --server smbd -- bench/nowait-ab.sh
#
# Phases (PHASES, default all three): mixed, the probe alone, the load alone.
# Environment: COLD_MB (2048), HOT_MB (64), SECONDS_EACH (10), ROUNDS (3),
# LOAD_QD (16), PHASES, BIN (build/bin).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
COLD_MB=${COLD_MB:-2048}
HOT_MB=${HOT_MB:-64}
SECONDS_EACH=${SECONDS_EACH:-10}
ROUNDS=${ROUNDS:-3}
LOAD_QD=${LOAD_QD:-16}
: "${SMBKIT_PORT:?run under build/bin/smbkit-samba}"
share=$SMBKIT_SAMBA_DIR/share
w=$(mktemp -d "${TMPDIR:-/tmp}/nowait-ab.XXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$w"
}
trap cleanup EXIT

# Two more servers on the same directory: smbkitd with the fast path on
# and off.
mkdir -p "$w/priv"
printf '%s\n' "$SMBKIT_PASSWORD" | "$BIN/smbkitd" --private-dir "$w/priv" user add smbkit > /dev/null
declare -A port
port[ref]=$SMBKIT_PORT
for m in on off; do
  port[$m]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  nw=yes; [ $m = off ] && nw=no
  "$BIN/smbkitd" --port "${port[$m]}" --share "share=$share" --private-dir "$w/priv" -F \
    --option "smbkitd:nowait reads = $nw" > "$w/$m.log" 2>&1 &
  pids+=($!)
done
sleep 1
url() { echo "smb://smbkit@127.0.0.1:${port[$1]}/share/$2"; }
export SMBKIT_PASSWORD

"$BIN/smbkit" bench --mode seqwrite --size "${COLD_MB}M" --keep "$(url ref cold.bin)" > /dev/null || exit 1
"$BIN/smbkit" bench --mode seqwrite --size "${HOT_MB}M" --keep "$(url ref hot.bin)" > /dev/null || exit 1
sync

server_pids() {
  case $1 in
    ref) pgrep -f "$SMBKIT_SAMBA_CONF" ;;
    *) echo "${pids[$([ "$1" = on ] && echo 0 || echo 1)]}" ;;
  esac
}
ticks() { for p in $(server_pids "$1"); do awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null; done | awk '{s+=$1} END {print s+0}'; }
evict() {
  python3 -c 'import os,sys
fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)' "$share/cold.bin"
}
field() { python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(eval(sys.argv[1]))' "$1"; }

# One measurement: `what` is mixed (load and probe together), probe (the
# probe alone: the cost of a cached read) or load (the load alone: the
# cost of a read that waits for the disk).
measure() {
  local m=$1 what=$2 r=$3 lp= ev= bytes=0
  # Warm the probe's file on this server, then keep the cold one cold.
  "$BIN/smbkit" bench --mode randread --bs 1M --qd 4 --size "${HOT_MB}M" --keep "$(url $m hot.bin)" > /dev/null
  evict
  (end=$((SECONDS + SECONDS_EACH + 2)); while [ $SECONDS -lt $end ]; do evict; sleep 0.2; done) &
  ev=$!
  echo '{"results":[{"bytes":0,"iops":0,"mb_per_s":0,"latency_us":{"p50":0,"p99":0,"max":0}}]}' > "$w/load.json"
  cp "$w/load.json" "$w/probe.json"
  local t0; t0=$(ticks $m)
  if [ "$what" != probe ]; then
    "$BIN/smbkit" bench --mode randread --bs 1M --qd "$LOAD_QD" --size "${COLD_MB}M" --time "$SECONDS_EACH" --keep \
      --json "$(url $m cold.bin)" > "$w/load.json" &
    lp=$!
  fi
  if [ "$what" != load ]; then
    "$BIN/smbkit" bench --mode randread --bs 4k --qd 1 --size "${HOT_MB}M" --time "$SECONDS_EACH" --keep \
      --json "$(url $m hot.bin)" > "$w/probe.json"
  fi
  [ -n "$lp" ] && wait "$lp"
  local t1; t1=$(ticks $m)
  kill $ev 2>/dev/null; wait $ev 2>/dev/null
  bytes=$(($(field 'r["bytes"]' < "$w/load.json") + $(field 'r["bytes"]' < "$w/probe.json")))
  printf '%-6s %-6s %-4s %10s %10s %10s %10s %12s %10s\n' "$m" "$what" "$r" \
    "$(field 'round(r["iops"])' < "$w/probe.json")" \
    "$(field 'r["latency_us"]["p50"]' < "$w/probe.json")" \
    "$(field 'r["latency_us"]["p99"]' < "$w/probe.json")" \
    "$(field 'r["latency_us"]["max"]' < "$w/probe.json")" \
    "$(field 'r["mb_per_s"]' < "$w/load.json")" \
    "$(python3 -c "print(round(($t1-$t0)/max($bytes,1)*2**30,1))")"
}

printf '%-6s %-6s %-4s %10s %10s %10s %10s %12s %10s\n' server what rnd probe_iops p50_us p99_us max_us load_MB/s ticks/GiB
for what in ${PHASES:-mixed probe load}; do
  for r in $(seq "$ROUNDS"); do
    for m in on off ref; do measure $m $what $r; done
  done
done
