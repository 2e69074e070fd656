#!/usr/bin/env bash
# The performance suite of scripts/report.sh: each workload with each client
# against each server and security mode, in interleaved rounds, one sample
# per line in OUT/perf.tsv:
#   workload  client  server  security  round  value  unit
# (unit MB/s, IOPS or s: for s lower is better, for the others higher).
#
#   scripts/report_perf.sh [--build DIR] [--out DIR] [--rounds N]
#                          [--servers "smbd smbkitd"] [--secs "plain sign seal"]
#                          [--clients "smbkit smbclient mount"] [--workloads "..."]
# Workloads:
#   seqread    one SIZE_MB file to /dev/null: smbkit get, smbclient get,
#              dd bs=1M through a fresh smbkit mount            (MB/s)
#   seqwrite   one SIZE_MB file up: smbkit put, smbclient put, dd bs=1M
#              conv=fsync through a fresh mount                 (MB/s)
#   rand4k-qd1, rand4k-qd16  smbkit bench --mode randread --bs 4k for
#              BENCH_TIME seconds (smbkit only: the bench is its own) (IOPS)
#   meta       a listing of 2,000 entries with their attributes, then the
#              removal of a directory of 200 files: smbkit ls -l + rm -r,
#              smbclient ls + deltree, ls -l + rm -r on the mount    (s)
#   tree       a copy of 200 small files (1-17 KiB) up: smbkit cp -r,
#              smbclient mput, cp -r into the mount              (s)
# Environment: SIZE_MB (256), BENCH_TIME (5).
# Every server runs at once (smbkit-samba nested), so one round visits each
# (server, security, client) once, in an order that alternates per round.
# Not a test: nothing here asserts a time; a failed command is recorded as
# a failure line (value "fail") and makes the exit status 1.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ "${REPORT_PERF_INNER:-}" != 1 ]; then
  build=$ROOT/build out=$ROOT/build/report rounds=3 servers="smbd smbkitd" secs="plain sign seal"
  clients="smbkit smbclient mount" workloads="seqread seqwrite rand4k-qd1 rand4k-qd16 meta tree"
  while (($#)); do
    case $1 in
      --build) build=$(cd "${2:?}" && pwd); shift ;;
      --out) out=${2:?}; shift ;;
      --rounds) rounds=${2:?}; shift ;;
      --servers) servers=${2:?}; shift ;;
      --secs) secs=${2:?}; shift ;;
      --clients) clients=${2:?}; shift ;;
      --workloads) workloads=${2:?}; shift ;;
      -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) echo "report_perf.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
  done
  for s in $servers; do case $s in smbd|smbkitd) ;; *) echo "report_perf.sh: server $s?" >&2; exit 2 ;; esac; done
  for b in smbkit smbkit-samba; do
    [ -x "$build/bin/$b" ] || { echo "report_perf.sh: $build/bin/$b not built" >&2; exit 2; }
  done
  . "$ROOT/bench/preflight.sh"
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  : >"$out/perf.tsv"
  export REPORT_PERF_INNER=1 BIN=$build/bin OUT=$out ROUNDS=$rounds SERVERS=$servers SECS=$secs
  export CLIENTS=$clients WORKLOADS=$workloads SIZE_MB=${SIZE_MB:-256} BENCH_TIME=${BENCH_TIME:-5}
  # Nest one smbkit-samba per server; each level saves its server's
  # port, password and directory under the server's name and runs the
  # next one; the innermost measures.
  cmd=(env REPORT_PERF_LEVEL=done "$0")
  for s in $servers; do
    cmd=("$BIN/smbkit-samba" --server "$s" -- env REPORT_PERF_LEVEL="$s" "$0" "${cmd[@]}")
  done
  exec "${cmd[@]}"
fi

if [ "${REPORT_PERF_LEVEL:-}" != done ]; then
  s=$REPORT_PERF_LEVEL
  export "PORT_$s=$SMBKIT_PORT" "PW_$s=$SMBKIT_PASSWORD" "DIR_$s=$SMBKIT_SAMBA_DIR"
  exec "$@"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/report-perf.XXXX")
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
samples=$OUT/perf.tsv
failures=0

head -c $((SIZE_MB << 20)) /dev/urandom >"$work/up.bin"
mkdir -p "$work/tree"
for i in $(seq 1 200); do head -c $((1024 + (i * 337) % 16384)) /dev/urandom >"$work/tree/s$i"; done
for s in $SERVERS; do
  d=DIR_$s; share=${!d}/share
  cp "$work/up.bin" "$share/big.bin"
  mkdir -p "$share/wide"
  for i in $(seq 1 2000); do : >"$share/wide/f$i"; done
  chmod -R a+rwX "$share"
done

now() { date +%s%N; }
record() {  # workload client server sec round value unit
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$samples"
}
fail() {  # workload client server sec round
  record "$@" fail -
  failures=$((failures + 1))
  echo "report_perf: $1 with $2 against $3 ($4) failed; the end of its output:" >&2
  tail -5 "$work/out" >&2
}
sec_args() {  # client sec
  case $1.$2 in
    smbkit.plain|smbclient.plain|mount.plain) ;;
    smbkit.sign) echo --sign ;;
    smbkit.seal) echo --seal ;;
    smbclient.sign) echo --client-protection=sign ;;
    smbclient.seal) echo --client-protection=encrypt ;;
    mount.sign) echo ,sign ;;
    mount.seal) echo ,seal ;;
  esac
}
mount_it() {  # server sec: mounts a fresh mount point, sets MP
  local p=PORT_$1 pw=PW_$1
  MP=$(mktemp -d "$work/mnt.XXXX")
  SMBKIT_PASSWORD=${!pw} "$BIN/smbkit" mount "//127.0.0.1:${!p}/share" "$MP" \
    -o "username=smbkit$(sec_args mount "$2")" >>"$work/out" 2>&1 || return 1
  mounts+=("$MP")
  for _ in $(seq 100); do mountpoint -q "$MP" && return 0; sleep 0.1; done
  return 1
}
umount_it() { fusermount3 -u "$1" 2>/dev/null || umount -l "$1"; rmdir "$1" 2>/dev/null || true; }

# one W C S SEC R: one measurement, recorded.
one() {
  local w=$1 c=$2 s=$3 sec=$4 r=$5
  local p=PORT_$s pw=PW_$s d=DIR_$s
  local port=${!p} share=${!d}/share url="smb://smbkit@127.0.0.1:${!p}/share"
  local sk=("$BIN/smbkit" -q $(sec_args smbkit "$sec"))
  local sc=(smbclient -s /dev/null //127.0.0.1/share -p "$port" -U smbkit $(sec_args smbclient "$sec"))
  local t0 t1 mp ok=1 value unit
  # The password through the environment, never argv (smbclient reads PASSWD).
  export SMBKIT_PASSWORD=${!pw} PASSWD=${!pw}
  : >"$work/out"
  case $w.$c in
    seqread.smbkit|seqwrite.smbkit|seqread.smbclient|seqwrite.smbclient|seqread.mount|seqwrite.mount) unit=MB/s ;;
    rand4k-qd1.smbkit|rand4k-qd16.smbkit) unit=IOPS ;;
    meta.*|tree.*) unit=s ;;
    *) return 0 ;;  # this client does not run this workload
  esac
  if [ "$c" = mount ]; then
    mount_it "$s" "$sec" || { fail "$w" "$c" "$s" "$sec" "$r"; umount_it "$MP"; return; }
    mp=$MP
  fi
  rm -rf "$share/up.bin" "$share/tree" "$share/meta"
  [ "$w" = meta ] && mkdir -p "$share/meta" && chmod a+rwx "$share/meta"
  [ "$w" = meta ] && for i in $(seq 1 200); do : >"$share/meta/m$i"; done && chmod -R a+rw "$share/meta"
  t0=$(now)
  case $w.$c in
    seqread.smbkit) "${sk[@]}" get "$url/big.bin" /dev/null ;;
    seqread.smbclient) "${sc[@]}" -c "get big.bin /dev/null" ;;
    seqread.mount) dd if="$mp/big.bin" of=/dev/null bs=1M status=none ;;
    seqwrite.smbkit) "${sk[@]}" put "$work/up.bin" "$url/up.bin" ;;
    seqwrite.smbclient) "${sc[@]}" -c "put $work/up.bin up.bin" ;;
    seqwrite.mount) dd if="$work/up.bin" of="$mp/up.bin" bs=1M conv=fsync status=none ;;
    rand4k-qd1.smbkit) "${sk[@]}" bench --json --keep --mode randread --bs 4k --qd 1 --time "$BENCH_TIME" \
        "$url/big.bin" >"$work/json" ;;
    rand4k-qd16.smbkit) "${sk[@]}" bench --json --keep --mode randread --bs 4k --qd 16 --time "$BENCH_TIME" \
        "$url/big.bin" >"$work/json" ;;
    meta.smbkit) "${sk[@]}" ls -l "$url/wide" >/dev/null && "${sk[@]}" rm -r "$url/meta" ;;
    meta.smbclient) "${sc[@]}" -c "ls wide/*; deltree meta" >/dev/null ;;
    meta.mount) ls -l "$mp/wide" >/dev/null && rm -r "$mp/meta" ;;
    tree.smbkit) "${sk[@]}" cp -r "$work/tree" "$url/tree" ;;
    tree.smbclient) "${sc[@]}" -c "mkdir tree; cd tree; lcd $work/tree; prompt; mput *" ;;
    tree.mount) cp -r "$work/tree" "$mp/tree" ;;
  esac >>"$work/out" 2>&1 || ok=0
  t1=$(now)
  [ "$c" = mount ] && umount_it "$mp"
  # What the command was to do is done: a client that exits 0 having done
  # nothing must not give a figure.
  case $w in
    seqwrite) [ "$(stat -c %s "$share/up.bin" 2>/dev/null)" = $((SIZE_MB << 20)) ] ||
        { echo "up.bin has the wrong size" >>"$work/out"; ok=0; } ;;
    meta) [ ! -e "$share/meta" ] || { echo "meta/ was not removed" >>"$work/out"; ok=0; } ;;
    tree) [ "$(find "$share/tree" -type f 2>/dev/null | wc -l)" = 200 ] ||
        { echo "tree/ does not hold 200 files" >>"$work/out"; ok=0; } ;;
  esac
  if [ $ok = 0 ]; then fail "$w" "$c" "$s" "$sec" "$r"; return; fi
  case $unit in
    MB/s) value=$(awk -v b=$((SIZE_MB << 20)) -v ns=$((t1 - t0)) 'BEGIN{printf "%.1f", b / (ns / 1e9) / 1e6}') ;;
    IOPS) value=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["iops"]))' \
        "$work/json") || { fail "$w" "$c" "$s" "$sec" "$r"; return; } ;;
    s) value=$(awk -v ns=$((t1 - t0)) 'BEGIN{printf "%.3f", ns / 1e9}') ;;
  esac
  record "$w" "$c" "$s" "$sec" "$r" "$value" "$unit"
}

combos=()
for w in $WORKLOADS; do
  for s in $SERVERS; do
    for sec in $SECS; do
      for c in $CLIENTS; do combos+=("$w $c $s $sec"); done
    done
  done
done
for r in $(seq 1 "$ROUNDS"); do
  echo "== report_perf: round $r of $ROUNDS (${#combos[@]} measurements)"
  # Odd rounds forwards, even rounds backwards: no pairing always runs first.
  if [ $((r % 2)) = 1 ]; then order=("${combos[@]}"); else
    order=(); for ((i = ${#combos[@]} - 1; i >= 0; i--)); do order+=("${combos[i]}"); done
  fi
  for combo in "${order[@]}"; do
    read -r w c s sec <<<"$combo"
    one "$w" "$c" "$s" "$sec" "$r"
  done
done
echo "report_perf: $(wc -l <"$samples") samples in $samples, $failures failed"
[ $failures = 0 ]
