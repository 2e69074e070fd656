#!/usr/bin/env bash
# The server's data path side by side: sequential 1 MiB READ and WRITE of
# a cached 1 GiB file, plain, signed and sealed, through the same client
# (`smbkit bench`), against the harness's server (`ref`: stock smbd, or
# smbkitd) and smbkitd variants started here on the same share, in
# interleaved rounds. Per case: MB/s, the server's CPU per GiB moved (clock
# ticks, 1/100 s, of its processes and their reaped children from
# /proc/PID/stat: smbd serves each connection in a child it reaps) and the
# client's (user + system, /usr/bin/time).
#
#   TMPDIR=/dev/shm build/bin/smbkit-samba --server smbd -- bench/server-ab.sh
#
# VARIANTS: smbkitd servers to start, space-separated NAME:OPTIONS where
# OPTIONS are comma-separated `smbkitd:` parameters with `_` for spaces,
# e.g. "copy:zero_copy_reads=no zc:zero_copy_reads=yes" (default "kit:",
# smbkitd as configured by default); NAME@PATH runs the smbkitd at PATH
# (another build) under NAME.
# Environment: SIZE_MB (1024), ROUNDS (3), QD (16), BS (1M), CONNS (1:
# connections per bench run, each its own file region), MODES ("plain sign
# seal"), OPS ("read write"), PERF (a directory: perf record -g of each
# server on each case of the first round goes there), BIN (build/bin).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-3}
QD=${QD:-16}
BS=${BS:-1M}
CONNS=${CONNS:-1}
MODES=${MODES:-plain sign seal}
OPS=${OPS:-read write}
VARIANTS=${VARIANTS:-kit:}
PERF=${PERF:-}
: "${SMBKIT_PORT:?run under build/bin/smbkit-samba}"
share=$SMBKIT_SAMBA_DIR/share
w=$(mktemp -d "${TMPDIR:-/tmp}/server-ab.XXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$w"
}
trap cleanup EXIT

mkdir -p "$w/priv"
printf '%s\n' "$SMBKIT_PASSWORD" | "$BIN/smbkitd" --private-dir "$w/priv" user add smbkit > /dev/null
declare -A port pid
names=(ref)
port[ref]=$SMBKIT_PORT
for v in $VARIANTS; do
  name=${v%%:*}
  opts=${v#*:}
  exe=$BIN/smbkitd
  if [[ $name == *@* ]]; then
    exe=${name#*@}
    name=${name%%@*}
  fi
  args=()
  IFS=, read -ra kv <<< "$opts"
  for o in "${kv[@]}"; do
    [ -n "$o" ] && args+=(--option "smbkitd:${o//_/ }")
  done
  port[$name]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$exe" --port "${port[$name]}" --share "share=$share" --private-dir "$w/priv" -F "${args[@]}" \
    > "$w/$name.log" 2>&1 &
  pid[$name]=$!
  pids+=($!)
  names+=("$name")
done
sleep 1
url() { echo "smb://smbkit@127.0.0.1:${port[$1]}/share/$2"; }
export SMBKIT_PASSWORD

"$BIN/smbkit" bench --mode seqwrite --size "${SIZE_MB}M" --keep "$(url ref seq.bin)" > /dev/null || exit 1
# One file per connection: smbkit bench opens its file for itself.
for c in $(seq 2 "$CONNS"); do cp -p "$share/seq.bin" "$share/seq-$c.bin"; done
cat "$share"/seq*.bin > /dev/null

server_pids() {
  case $1 in
    ref) pgrep -f "$SMBKIT_SAMBA_CONF" ;;
    *) echo "${pid[$1]}" ;;
  esac
}
ticks() { for p in $(server_pids "$1"); do awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null; done | awk '{s+=$1} END {print s+0}'; }
field() { python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(eval(sys.argv[1]))' "$1"; }

measure() {
  local m=$1 op=$2 mode=$3 r=$4 flag= file=seq.bin bmode=seqread
  case $mode in sign) flag=--sign ;; seal) flag=--seal ;; esac
  if [ "$op" = write ]; then
    file=w-$m.bin
    bmode=seqwrite
  fi
  local perf_pid=
  if [ -n "$PERF" ] && [ "$r" = 1 ]; then
    mkdir -p "$PERF"
    # smbd forks a child per connection after perf would attach: the whole
    # system for it (perf report --comm smbd).
    local target=(-p "$(server_pids "$m" | paste -sd,)")
    [ "$m" = ref ] && target=(-a)
    perf record -q -g -o "$PERF/$m-$op-$mode.data" "${target[@]}" > /dev/null 2>&1 &
    perf_pid=$!
    sleep 0.5
  fi
  local t0 t1
  t0=$(ticks "$m")
  local c bp=()
  for c in $(seq "$CONNS"); do
    local f=$file
    [ "$c" -gt 1 ] && f=${file%.bin}-$c.bin
    /usr/bin/time -f '%U %S' -o "$w/time.$c" "$BIN/smbkit" $flag bench --mode "$bmode" --bs "$BS" --qd "$QD" \
      --size "${SIZE_MB}M" --keep --json "$(url "$m" "$f")" > "$w/out.$c.json" &
    bp+=($!)
  done
  wait "${bp[@]}"
  t1=$(ticks "$m")
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" 2>/dev/null
  fi
  local bytes=0 mbs=0 cticks=0
  for c in $(seq "$CONNS"); do
    bytes=$((bytes + $(field 'r["bytes"]' < "$w/out.$c.json")))
    mbs=$(python3 -c "print(round($mbs + $(field 'r["mb_per_s"]' < "$w/out.$c.json"), 1))")
    cticks=$(python3 -c "u,s=open('$w/time.$c').read().split()[-2:]; print($cticks + (float(u)+float(s))*100)")
  done
  printf '%-6s %-5s %-5s %-3s %9s %12s %12s\n' "$m" "$op" "$mode" "$r" "$mbs" \
    "$(python3 -c "print(round(($t1-$t0)/max($bytes,1)*2**30,1))")" \
    "$(python3 -c "print(round($cticks/max($bytes,1)*2**30,1))")"
}

printf '%-6s %-5s %-5s %-3s %9s %12s %12s\n' server op mode rnd MB/s srv_tck/GiB cli_tck/GiB
for op in $OPS; do
  for mode in $MODES; do
    for r in $(seq "$ROUNDS"); do
      for m in "${names[@]}"; do measure "$m" "$op" "$mode" "$r"; done
    done
  done
done
