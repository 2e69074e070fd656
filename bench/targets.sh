#!/usr/bin/env bash
# smbkitd against issue 18's server-side targets, side by side with stock
# smbd in one run: the harness's smbd (run this under build/bin/smbkit-samba
# --server smbd) and an smbkitd started here on the same share directory,
# the same client binaries, interleaved rounds (the order of the two
# servers alternates each round). Prints every measurement as it comes,
# then one table: target, smbkitd's median [range], smbd's (or the
# reference's), the ratio of the medians and whether the target is met.
#
#   build/bin/smbkit-samba --server smbd -- bench/targets.sh
#
# What is measured, per round and server:
#   rand16   smbkit bench --mode randread --bs 4k --qd 16 --time RAND_S: IOPS
#   rand1    the same at --qd 1: p99 latency
#   seqread  smbkit bench --mode seqread --bs 1M --qd 16 of a cached SIZE_MB
#            file: MB/s, and the server's CPU per GiB read (clock ticks,
#            1/100 s, of its processes and their reaped children from
#            /proc/PID/stat: smbd serves each connection in a child)
#   sealget  smbkit --seal get of the same file to /dev/null: MB/s, and
#            the server's CPU per GiB as for seqread (sealcpu_tck_GiB)
#   meta     smbkit-metabench --qd META_QD --count META_N: create+close,
#            stat, rename, unlink per second on one connection
#   list     smbkit ls of a directory of LIST_N empty files made on the
#            share's disk directly: seconds
# and once per round, raw TCP over loopback: iperf3 -t TCP_S (one stream).
#
# Environment: ROUNDS (3), SIZE_MB (1024), RAND_S (10), META_N (2000),
# META_QD (8), LIST_N (100000), TCP_S (5), KITD (smbkitd binary, default
# build/bin/smbkitd), KIT_OPTS (comma-separated `smbkitd:` parameters with
# `_` for spaces), PERF (a directory: perf record -g of each server in the
# sequential, sealed, metadata and listing phases of round 1 goes there,
# as SERVER-PHASE.data; use it in a run of its own, ROUNDS=1, as recording
# slows what it records), BIN (build/bin), PHASES (which of rand seq seal
# meta list to run, default all; the table shows the targets measured),
# KITD_BASE (a second smbkitd binary, e.g. a build of main, started the
# same way and measured in the same interleaved rounds as "base": a
# before/after of one change, with its ratios to smbkitd and smbd).
# With the defaults a run took 384-406 s on the 2-core machine at load
# 8-15 (set-up under a minute, each round about 2 minutes); ROUNDS=1
# RAND_S=3 META_N=500 took 130 s, and SIZE_MB=128 LIST_N=5000 cut it to
# about one minute.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
KITD=${KITD:-$BIN/smbkitd}
ROUNDS=${ROUNDS:-3}
SIZE_MB=${SIZE_MB:-1024}
RAND_S=${RAND_S:-10}
META_N=${META_N:-2000}
META_QD=${META_QD:-8}
LIST_N=${LIST_N:-100000}
TCP_S=${TCP_S:-5}
KIT_OPTS=${KIT_OPTS:-}
PERF=${PERF:-}
PHASES=${PHASES:-rand seq seal meta list}
KITD_BASE=${KITD_BASE:-}
has() { [[ " $PHASES " == *" $1 "* ]]; }
: "${SMBKIT_PORT:?run under build/bin/smbkit-samba --server smbd}"
command -v iperf3 > /dev/null || { echo "targets: iperf3 is missing (scripts/install-deps.sh)" >&2; exit 2; }
share=$SMBKIT_SAMBA_DIR/share
owner=$(stat -c %u:%g "$share")
w=$(mktemp -d "${TMPDIR:-/tmp}/targets.XXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$w" "$share/list" "$share/meta"
}
trap cleanup EXIT
T0=$SECONDS

mkdir -p "$w/priv"
printf '%s\n' "$SMBKIT_PASSWORD" | "$KITD" --private-dir "$w/priv" user add smbkit > /dev/null
declare -A port
port[smbd]=$SMBKIT_PORT
port[kit]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
args=()
IFS=, read -ra kv <<< "$KIT_OPTS"
for o in "${kv[@]}"; do [ -n "$o" ] && args+=(--option "smbkitd:${o//_/ }"); done
"$KITD" --port "${port[kit]}" --share "share=$share" --private-dir "$w/priv" -F "${args[@]}" > "$w/kit.log" 2>&1 &
kit_pid=$!
pids+=($!)
servers="kit smbd"
base_pid=
if [ -n "$KITD_BASE" ]; then
  port[base]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$KITD_BASE" --port "${port[base]}" --share "share=$share" --private-dir "$w/priv" -F "${args[@]}" > "$w/base.log" 2>&1 &
  base_pid=$!
  pids+=($!)
  servers="kit smbd base"
fi
sleep 1
kill -0 "$kit_pid" 2>/dev/null || { echo "targets: smbkitd did not start:" >&2; cat "$w/kit.log" >&2; exit 1; }
[ -z "$base_pid" ] || kill -0 "$base_pid" 2>/dev/null || { echo "targets: KITD_BASE did not start:" >&2; cat "$w/base.log" >&2; exit 1; }
url() { echo "smb://smbkit@127.0.0.1:${port[$1]}/share/$2"; }
export SMBKIT_PASSWORD

server_pids() {
  case $1 in
    smbd) pgrep -f "$SMBKIT_SAMBA_CONF" ;;
    kit) echo "$kit_pid" ;;
    base) echo "$base_pid" ;;
  esac
}
ticks() { for p in $(server_pids "$1"); do awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null; done | awk '{s+=$1} END {print s+0}'; }
field() { python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(eval(sys.argv[1]))' "$1"; }
now() { date +%s%N; }
# One figure: round, server, metric, value (raw.tsv feeds the table).
put() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$w/raw.tsv"
  printf '  round %s %-5s %-14s %s\n' "$1" "$2" "$3" "$4"
}

echo "targets: set-up: ${SIZE_MB} MiB file, ${LIST_N}-entry directory; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/smbkit" bench --mode seqwrite --size "${SIZE_MB}M" --keep "$(url smbd seq.bin)" > /dev/null || exit 1
cat "$share/seq.bin" > /dev/null
mkdir -p "$share/list" "$share/meta"
has list && python3 -c 'import os,sys
d,n=sys.argv[1],int(sys.argv[2])
for i in range(n): os.close(os.open(os.path.join(d,"f%07d"%i), os.O_CREAT|os.O_WRONLY, 0o644))' "$share/list" "$LIST_N"
chown -R "$owner" "$share/list" "$share/meta"
# Both servers list it once untimed: the dentries and inodes are then cached
# for both alike.
if has list; then for m in $servers; do "$BIN/smbkit" ls "$(url $m list)" > /dev/null || exit 1; done; fi

perf_start() {  # SERVER WHAT: perf record of SERVER into $PERF in round 1
  perf_pid=
  [ -n "$PERF" ] && [ "$r" = 1 ] || return 0
  mkdir -p "$PERF"
  # smbd forks a child per connection after perf would attach: the whole
  # system for it (perf report --comm smbd).
  local target=(-p "$(server_pids "$1")")
  [ "$1" = smbd ] && target=(-a)
  perf record -q -g -o "$PERF/$1-$2.data" "${target[@]}" > /dev/null 2>&1 &
  perf_pid=$!
  sleep 0.5
}
perf_stop() { [ -n "$perf_pid" ] && { kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null; }; perf_pid=; }

measure() {  # SERVER ROUND
  local m=$1 r=$2 t0 t1 k0 k1
  if has rand; then
    "$BIN/smbkit" bench --mode randread --bs 4k --qd 16 --size "${SIZE_MB}M" --time "$RAND_S" --keep --json \
      "$(url $m seq.bin)" > "$w/o.json" && put "$r" "$m" rand16_iops "$(field 'round(r["iops"])' < "$w/o.json")"
    "$BIN/smbkit" bench --mode randread --bs 4k --qd 1 --size "${SIZE_MB}M" --time "$RAND_S" --keep --json \
      "$(url $m seq.bin)" > "$w/o.json" && put "$r" "$m" rand1_p99_us "$(field 'r["latency_us"]["p99"]' < "$w/o.json")"
  fi
  if has seq; then
    perf_start $m seq
    k0=$(ticks $m)
    "$BIN/smbkit" bench --mode seqread --bs 1M --qd 16 --size "${SIZE_MB}M" --keep --json \
      "$(url $m seq.bin)" > "$w/o.json" || return 1
    k1=$(ticks $m)
    perf_stop
    put "$r" "$m" seq_MBps "$(field 'r["mb_per_s"]' < "$w/o.json")"
    put "$r" "$m" cpu_tck_GiB "$(python3 -c "print(round(($k1-$k0)/$SIZE_MB*1024,1))")"
  fi
  if has seal; then
    perf_start $m seal
    k0=$(ticks $m)
    t0=$(now)
    "$BIN/smbkit" -q --seal get "$(url $m seq.bin)" - > /dev/null || return 1
    t1=$(now)
    k1=$(ticks $m)
    perf_stop
    put "$r" "$m" sealget_MBps "$(python3 -c "print(round($SIZE_MB*1048576/(($t1-$t0)/1e9)/1e6,1))")"
    put "$r" "$m" sealcpu_tck_GiB "$(python3 -c "print(round(($k1-$k0)/$SIZE_MB*1024,1))")"
  fi
  if has meta; then
    perf_start $m meta
    "$BIN/smbkit-metabench" --count "$META_N" --qd "$META_QD" "$(url $m meta)" > "$w/meta.txt" || return 1
    perf_stop
    awk 'NR>1 {print $1, $4}' "$w/meta.txt" | while read -r op rate; do put "$r" "$m" "${op}_ops" "$rate"; done
  fi
  if has list; then
    perf_start $m list
    t0=$(now)
    "$BIN/smbkit" ls "$(url $m list)" > "$w/ls.txt" || return 1
    t1=$(now)
    perf_stop
    local n; n=$(wc -l < "$w/ls.txt")
    [ "$n" -ge "$LIST_N" ] || { echo "targets: $m listed $n of $LIST_N entries" >&2; return 1; }
    put "$r" "$m" list_s "$(python3 -c "print(round(($t1-$t0)/1e9,3))")"
  fi
}

for r in $(seq "$ROUNDS"); do
  # The order turns each round (with a base: kit smbd base, smbd base kit, ...).
  read -r -a ring <<< "$servers"
  k=$(( (r - 1) % ${#ring[@]} ))
  order="${ring[*]:k} ${ring[*]:0:k}"
  for m in $order; do measure "$m" "$r" || { echo "targets: round $r on $m failed" >&2; exit 1; }; done
  iperf3 -s -1 -B 127.0.0.1 -p "$((port[kit] + 1))" > /dev/null 2>&1 &
  ip=$!
  sleep 0.5
  iperf3 -c 127.0.0.1 -p "$((port[kit] + 1))" -t "$TCP_S" -J > "$w/iperf.json" || exit 1
  wait "$ip"
  put "$r" tcp tcp_MBps "$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/8e6,1))' "$w/iperf.json")"
  put "$r" load load1 "$(cut -d' ' -f1 /proc/loadavg)"
done

python3 - "$w/raw.tsv" "$SIZE_MB" "$LIST_N" "$KITD_BASE" <<'EOF'
import statistics, sys
from collections import defaultdict
v = defaultdict(list)
for line in open(sys.argv[1]):
    r, m, k, x = line.split("\t")
    v[(m, k)].append(float(x))
def med(m, k): return statistics.median(v[(m, k)])
def rng(m, k): return f"[{min(v[(m, k)]):g}-{max(v[(m, k)]):g}]"
def fig(m, k): return f"{med(m, k):g} {rng(m, k)}"
# target, metric, unit, reference server, ratio wanted; "more" means
# smbkitd/reference >= want, "less" smbkitd/reference <= want, "faster"
# reference/smbkitd >= want.
rows = [
    ("4 KiB rand read qd16 IOPS >= 2x smbd", "rand16_iops", "smbd", "more", 2),
    ("4 KiB rand read qd1 p99 us <= 0.6x smbd", "rand1_p99_us", "smbd", "less", 0.6),
    ("sealed 1 MiB get MB/s >= 2x smbd", "sealget_MBps", "smbd", "more", 2),
    ("seq read MB/s >= 1.3x smbd", "seq_MBps", "smbd", "more", 1.3),
    ("seq read MB/s >= 0.7x TCP loopback", "seq_MBps", "tcp", "more", 0.7),
    ("create+close ops/s >= 2x smbd", "create_ops", "smbd", "more", 2),
    ("stat ops/s >= 2x smbd", "stat_ops", "smbd", "more", 2),
    ("rename ops/s >= 2x smbd", "rename_ops", "smbd", "more", 2),
    ("unlink ops/s >= 2x smbd", "unlink_ops", "smbd", "more", 2),
    (f"list {int(sys.argv[3]):,} entries s, >= 3x faster", "list_s", "smbd", "faster", 3),
    ("server CPU ticks/GiB read <= 0.5x smbd", "cpu_tck_GiB", "smbd", "less", 0.5),
    ("server CPU ticks/GiB sealed get (no target)", "sealcpu_tck_GiB", "smbd", "less", 1),
]
print()
print(f"{'target':<42} {'smbkitd':>22} {'smbd / reference':>22} {'ratio':>6}  verdict")
for name, k, ref, how, want in rows:
    rk = "tcp_MBps" if ref == "tcp" else k
    if not v[("kit", k)] or not v[(ref, rk)]:
        continue  # a phase not run (PHASES)
    a, b = med("kit", k), med(ref, rk)
    ratio = b / a if how == "faster" else a / b
    ok = ratio >= want if how in ("more", "faster") else ratio <= want
    print(f"{name:<42} {fig('kit', k):>22} {fig(ref, rk):>22} {ratio:>6.2f}  {'met' if ok else 'NOT MET'}")
if sys.argv[4]:
    # Before/after: the same metrics of KITD_BASE, measured in the same rounds.
    print(f"\n{'metric (base: ' + sys.argv[4] + ')':<42} {'smbkitd':>22} {'base':>22} {'kit/base':>8} {'base/smbd':>9}")
    for k in sorted({k for (m, k) in v if m == "base"}):
        if v[("kit", k)] and v[("smbd", k)]:
            print(f"{k:<42} {fig('kit', k):>22} {fig('base', k):>22} {med('kit', k) / med('base', k):>8.2f} "
                  f"{med('base', k) / med('smbd', k):>9.2f}")
loads = v[("load", "load1")]
print(f"\nmedians [ranges] of {len(loads)} rounds; load average (1 min) at the end of each round: "
      + ", ".join(f"{x:g}" for x in loads))
EOF
echo "targets: $((SECONDS - T0)) s"
