#!/usr/bin/env bash
# The performance suite of scripts/report.sh: each workload with each client
# against each server and security mode, in interleaved rounds, one sample
# per line in OUT/perf.tsv:
#   workload  client  server  security  round  value  unit
# (unit MB/s, IOPS or s: for s lower is better, for the others higher).
#
#   scripts/report_perf.sh [--build DIR] [--out DIR] [--rounds N]
#                          [--servers "smbd smbkitd"] [--secs "plain sign seal"]
#                          [--clients "smbkit smbclient mount rclone"]
#                          [--workloads "..."]
# (also from the environment: PERF_WORKLOADS, PERF_CLIENTS, PERF_SERVERS,
# PERF_SECS; an option wins). A client that does not run a workload, or
# a security mode it cannot ask for, is left out of that combination.
# Workloads:
#   seqread    one SIZE_MB file to /dev/null: smbkit get, smbclient get,
#              dd bs=1M through a fresh smbkit mount, rclone cat  (MB/s)
#   seqwrite   one SIZE_MB file up: smbkit put, smbclient put, dd bs=1M
#              conv=fsync through a fresh mount, rclone copyto   (MB/s)
#   rand4k-qd1, rand4k-qd16  4 KiB random reads of that file for
#              BENCH_TIME seconds: smbkit bench --mode randread --qd 1/16;
#              mount: fio --rw=randread --ioengine=psync with 1/16 jobs
#              on a fresh cache=none mount (when fio is installed)  (IOPS)
#   meta       a listing of 2,000 entries with their attributes, then the
#              removal of a directory of 200 files: smbkit ls -l + rm -r,
#              smbclient ls + deltree, ls -l + rm -r on the mount    (s)
#   tree       a copy of 200 small files (1-17 KiB) up: smbkit cp -r,
#              smbclient mput, cp -r into the mount, rclone copy   (s)
#   seqread-50ms, tree-50ms  seqread (of a LINK_SIZE_MB file) and tree
#              through a 50 ms round trip (build/bin/smbkit-link, one
#              relay per server for the whole run), in the security
#              modes of LINK_SECS (plain): they are bound by round trips
#   untar      tar -x of UNTAR_FILES (5,000) small files (1-16 KiB, 20 to a
#              directory) onto a fresh mount, then sync -f       (s)
# rclone runs plain only: it has no option to ask for signing or
# encryption. Environment: SIZE_MB (256), BENCH_TIME (5), LINK_SIZE_MB (64),
# LINK_SECS (plain), UNTAR_FILES (5000).
# Every server runs at once (smbkit-samba nested), so one round visits each
# (server, security, client) once, in an order that alternates per round.
# Not a test: nothing here asserts a time; a failed command is recorded as
# a failure line (value "fail") and makes the exit status 1.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ "${REPORT_PERF_INNER:-}" != 1 ]; then
  build=$ROOT/build out=$ROOT/build/report rounds=3 servers=${PERF_SERVERS:-"smbd smbkitd"}
  secs=${PERF_SECS:-"plain sign seal"} clients=${PERF_CLIENTS:-"smbkit smbclient mount rclone"}
  workloads=${PERF_WORKLOADS:-"seqread seqwrite rand4k-qd1 rand4k-qd16 meta tree seqread-50ms tree-50ms untar"}
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
  for w in $workloads; do
    case $w in seqread|seqwrite|rand4k-qd1|rand4k-qd16|meta|tree|seqread-50ms|tree-50ms|untar) ;;
      *) echo "report_perf.sh: workload $w?" >&2; exit 2 ;; esac
  done
  for c in $clients; do
    case $c in smbkit|smbclient|mount) ;;
      rclone) command -v rclone >/dev/null ||
          { echo "report_perf.sh: rclone is not installed: left out" >&2; clients=${clients//rclone/}; } ;;
      *) echo "report_perf.sh: client $c?" >&2; exit 2 ;;
    esac
  done
  need=(smbkit smbkit-samba)
  link=0
  case " $workloads " in *-50ms" "*) link=1; need+=(smbkit-link) ;; esac
  for b in "${need[@]}"; do
    [ -x "$build/bin/$b" ] || { echo "report_perf.sh: $build/bin/$b not built" >&2; exit 2; }
  done
  . "$ROOT/bench/preflight.sh"
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  : >"$out/perf.tsv"
  export REPORT_PERF_INNER=1 BIN=$build/bin OUT=$out ROUNDS=$rounds SERVERS=$servers SECS=$secs
  export CLIENTS=$clients WORKLOADS=$workloads SIZE_MB=${SIZE_MB:-256} BENCH_TIME=${BENCH_TIME:-5}
  export LINK_SIZE_MB=${LINK_SIZE_MB:-64} UNTAR_FILES=${UNTAR_FILES:-5000} LINK_SECS=${LINK_SECS:-plain}
  # Nest one smbkit-samba per server, and inside it, when a 50 ms
  # workload runs, one smbkit-link (a 50 ms round trip to that server);
  # each level saves its server's port, password and directory (or its
  # link's port) under the server's name and runs the next one; the
  # innermost measures.
  cmd=(env REPORT_PERF_LEVEL=done "$0")
  for s in $servers; do
    [ $link = 1 ] &&
      cmd=("$BIN/smbkit-link" --to @PORT@ --delay-ms 50 -- env REPORT_PERF_LEVEL="link-$s" "$0" "${cmd[@]}")
    cmd=("$BIN/smbkit-samba" --server "$s" -- env REPORT_PERF_LEVEL="$s" "$0" "${cmd[@]}")
  done
  exec "${cmd[@]}"
fi

if [ "${REPORT_PERF_LEVEL:-}" != done ]; then
  s=$REPORT_PERF_LEVEL
  case $s in
    link-*) export "LINKPORT_${s#link-}=$SMBKIT_LINK_PORT"; exec "$@" ;;
  esac
  export "PORT_$s=$SMBKIT_PORT" "PW_$s=$SMBKIT_PASSWORD" "DIR_$s=$SMBKIT_SAMBA_DIR"
  # A link level next relays to this server's port.
  [ "$2" = --to ] && [ "$3" = @PORT@ ] && exec "$1" --to "$SMBKIT_PORT" "${@:4}"
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
case " $WORKLOADS " in *" untar "*)
  # The untar tree: UNTAR_FILES files of 1-16 KiB, 20 to a directory.
  /usr/bin/python3 - "$work/untar" "$UNTAR_FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
r = random.Random(5)
pool = r.randbytes(64 * 1024)
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 20))
    os.makedirs(d, exist_ok=True)
    size = r.randint(1024, 16 * 1024)
    off = r.randint(0, len(pool) - size)
    with open(os.path.join(d, "f%05d.c" % i), "wb") as f:
        f.write(pool[off:off + size])
PY
  tar -C "$work/untar" -cf "$work/untar.tar" . && rm -rf "$work/untar" ;;
esac
for s in $SERVERS; do
  d=DIR_$s; share=${!d}/share
  cp "$work/up.bin" "$share/big.bin"
  head -c $((LINK_SIZE_MB << 20)) /dev/urandom >"$share/link.bin"
  mkdir -p "$share/wide"
  for i in $(seq 1 2000); do : >"$share/wide/f$i"; done
  chmod -R a+rwX "$share"
done
if command -v rclone >/dev/null; then
  # rclone's smb remote "S" from the environment (as bench/compare.sh): no
  # config file, the password obscured per server below.
  export RCLONE_CONFIG=$work/rclone.conf RCLONE_CONFIG_S_TYPE=smb RCLONE_CONFIG_S_HOST=127.0.0.1
  export RCLONE_CONFIG_S_USER=smbkit
  : >"$RCLONE_CONFIG"
  for s in $SERVERS; do
    pw=PW_$s
    export "RCPW_$s=$(rclone obscure "${!pw}")"
  done
fi
have_fio=0
command -v fio >/dev/null && have_fio=1
[ $have_fio = 1 ] || echo "report_perf: fio is not installed: no rand4k figures through the mount" >&2

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
mount_it() {  # server sec port [options]: mounts a fresh mount point, sets MP
  local pw=PW_$1
  MP=$(mktemp -d "$work/mnt.XXXX")
  SMBKIT_PASSWORD=${!pw} "$BIN/smbkit" mount "//127.0.0.1:$3/share" "$MP" \
    -o "username=smbkit$(sec_args mount "$2")${4:+,$4}" >>"$work/out" 2>&1 || return 1
  mounts+=("$MP")
  for _ in $(seq 100); do mountpoint -q "$MP" && return 0; sleep 0.1; done
  return 1
}
umount_it() { fusermount3 -u "$1" 2>/dev/null || umount -l "$1"; rmdir "$1" 2>/dev/null || true; }
fio_iops() {  # file jobs: 4 KiB random reads for BENCH_TIME seconds -> IOPS on stdout
  fio --name=rr --filename="$1" --rw=randread --bs=4k --ioengine=psync --numjobs="$2" --group_reporting \
    --time_based --runtime="$BENCH_TIME" --size=$((SIZE_MB))m --output-format=terse --terse-version=3 \
    2>>"$work/out" | tee -a "$work/out" | awk -F';' 'NF > 8 {printf "%.0f", $8; found = 1} END {exit !found}'
}

# one W C S SEC R: one measurement, recorded.
one() {
  local w=$1 c=$2 s=$3 sec=$4 r=$5
  local p=PORT_$s pw=PW_$s d=DIR_$s rp=RCPW_$s
  local port=${!p} share=${!d}/share
  case $w in *-50ms)
    # The 50 ms workloads are round-trip bound: LINK_SECS (plain) only.
    [[ " $LINK_SECS " == *" $sec "* ]] || return 0
    p=LINKPORT_$s; port=${!p} ;;
  esac
  local url="smb://smbkit@127.0.0.1:$port/share" base=${w%-50ms}
  local sk=("$BIN/smbkit" -q $(sec_args smbkit "$sec"))
  local sc=(smbclient -s /dev/null //127.0.0.1/share -p "$port" -U smbkit $(sec_args smbclient "$sec"))
  local rc=(env "RCLONE_CONFIG_S_PORT=$port" "RCLONE_CONFIG_S_PASS=${!rp:-}" rclone -q)
  local t0 t1 mp ok=1 value unit bytes=$((SIZE_MB << 20)) big=big.bin mopts=
  [ "$w" = seqread-50ms ] && bytes=$((LINK_SIZE_MB << 20)) big=link.bin
  # The password through the environment, never argv (smbclient reads PASSWD).
  export SMBKIT_PASSWORD=${!pw} PASSWD=${!pw}
  : >"$work/out"
  case $base.$c in
    seqread.*|seqwrite.smbkit|seqwrite.smbclient|seqwrite.mount|seqwrite.rclone) unit=MB/s ;;
    rand4k-qd1.smbkit|rand4k-qd16.smbkit) unit=IOPS ;;
    rand4k-qd1.mount|rand4k-qd16.mount) [ $have_fio = 1 ] || return 0; unit=IOPS; mopts=cache=none ;;
    meta.smbkit|meta.smbclient|meta.mount|tree.*|untar.mount) unit=s ;;
    *) return 0 ;;  # this client does not run this workload
  esac
  # rclone cannot ask for signing or encryption.
  [ "$c" = rclone ] && [ "$sec" != plain ] && return 0
  if [ "$c" = mount ]; then
    mount_it "$s" "$sec" "$port" "$mopts" || { fail "$w" "$c" "$s" "$sec" "$r"; umount_it "$MP"; return; }
    mp=$MP
  fi
  rm -rf "$share/up.bin" "$share/tree" "$share/meta" "$share/untar"
  [ "$w" = meta ] && mkdir -p "$share/meta" && chmod a+rwx "$share/meta"
  [ "$w" = meta ] && for i in $(seq 1 200); do : >"$share/meta/m$i"; done && chmod -R a+rw "$share/meta"
  t0=$(now)
  case $base.$c in
    seqread.smbkit) "${sk[@]}" get "$url/$big" /dev/null ;;
    seqread.smbclient) "${sc[@]}" -c "get $big /dev/null" ;;
    seqread.mount) dd if="$mp/$big" of=/dev/null bs=1M status=none ;;
    seqread.rclone) "${rc[@]}" cat "S:share/$big" >/dev/null ;;
    seqwrite.smbkit) "${sk[@]}" put "$work/up.bin" "$url/up.bin" ;;
    seqwrite.smbclient) "${sc[@]}" -c "put $work/up.bin up.bin" ;;
    seqwrite.mount) dd if="$work/up.bin" of="$mp/up.bin" bs=1M conv=fsync status=none ;;
    seqwrite.rclone) "${rc[@]}" copyto "$work/up.bin" S:share/up.bin ;;
    rand4k-qd1.smbkit) "${sk[@]}" bench --json --keep --mode randread --bs 4k --qd 1 --time "$BENCH_TIME" \
        "$url/big.bin" >"$work/json" ;;
    rand4k-qd16.smbkit) "${sk[@]}" bench --json --keep --mode randread --bs 4k --qd 16 --time "$BENCH_TIME" \
        "$url/big.bin" >"$work/json" ;;
    rand4k-qd1.mount) fio_iops "$mp/big.bin" 1 >"$work/iops" ;;
    rand4k-qd16.mount) fio_iops "$mp/big.bin" 16 >"$work/iops" ;;
    meta.smbkit) "${sk[@]}" ls -l "$url/wide" >/dev/null && "${sk[@]}" rm -r "$url/meta" ;;
    meta.smbclient) "${sc[@]}" -c "ls wide/*; deltree meta" >/dev/null ;;
    meta.mount) ls -l "$mp/wide" >/dev/null && rm -r "$mp/meta" ;;
    tree.smbkit) "${sk[@]}" cp -r "$work/tree" "$url/tree" ;;
    tree.smbclient) "${sc[@]}" -c "mkdir tree; cd tree; lcd $work/tree; prompt; mput *" ;;
    tree.mount) cp -r "$work/tree" "$mp/tree" ;;
    tree.rclone) "${rc[@]}" copy "$work/tree" S:share/tree ;;
    untar.mount) mkdir "$mp/untar" && tar -C "$mp/untar" -xf "$work/untar.tar" --no-same-owner &&
        sync -f "$mp/untar" ;;
  esac >>"$work/out" 2>&1 || ok=0
  t1=$(now)
  [ "$c" = mount ] && umount_it "$mp"
  # What the command was to do is done: a client that exits 0 having done
  # nothing must not give a figure.
  case $base in
    seqwrite) [ "$(stat -c %s "$share/up.bin" 2>/dev/null)" = $((SIZE_MB << 20)) ] ||
        { echo "up.bin has the wrong size" >>"$work/out"; ok=0; } ;;
    meta) [ ! -e "$share/meta" ] || { echo "meta/ was not removed" >>"$work/out"; ok=0; } ;;
    tree) [ "$(find "$share/tree" -type f 2>/dev/null | wc -l)" = 200 ] ||
        { echo "tree/ does not hold 200 files" >>"$work/out"; ok=0; } ;;
    untar) [ "$(find "$share/untar" -type f 2>/dev/null | wc -l)" = "$UNTAR_FILES" ] ||
        { echo "untar/ does not hold $UNTAR_FILES files" >>"$work/out"; ok=0; } ;;
  esac
  if [ $ok = 0 ]; then fail "$w" "$c" "$s" "$sec" "$r"; return; fi
  case $unit.$c in
    MB/s.*) value=$(awk -v b=$bytes -v ns=$((t1 - t0)) 'BEGIN{printf "%.1f", b / (ns / 1e9) / 1e6}') ;;
    IOPS.mount) value=$(cat "$work/iops") ;;
    IOPS.*) value=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["iops"]))' \
        "$work/json") || { fail "$w" "$c" "$s" "$sec" "$r"; return; } ;;
    s.*) value=$(awk -v ns=$((t1 - t0)) 'BEGIN{printf "%.3f", ns / 1e9}') ;;
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
