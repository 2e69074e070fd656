#!/usr/bin/env bash
# Side-by-side throughput against ONE throwaway Samba, in one run:
#   tools  smbkit, smbclient, and rclone (its smb backend) when installed
#   modes  plain, signed, sealed
#   links  0ms (direct), 50ms (round trip, unlimited rate), 1g50ms (1 Gbit/s, 50 ms),
#          the last two through build/bin/smbkit-link
#   ops    put (upload) and get (download) of one file
# and prints MB/s (1 MB = 10^6 bytes, wall time of the whole command,
# connect and logon included), the ratio to smbclient in the same row group,
# and each client's peak RSS. Every download is compared byte for byte with
# the source, every upload is compared with what landed in the share.
#
#   bench/compare.sh [SIZE_MB]
#
# Environment (defaults in brackets):
#   SIZE_MB         file size in MiB [2048]
#   RCLONE_SIZE_MB  rclone's file size on the 50 ms links, where it is slow [256]
#   TOOLS           [smbkit smbclient rclone]
#   MODES           [plain signed sealed]
#   LINKS           [0ms 50ms 1g50ms]
#   REPEAT          runs of every transfer; the table shows the median [1]
#                   (rclone runs once on the 50 ms links)
#   TIMEOUT_S       per-transfer limit; default 60 s + 1 s per MiB (a 1 MB/s floor)
#   BENCH_SAMPLE    also run the `smbkit bench` sample (0 ms, plain) [1]
#   BENCH_SIZE      its file size [1G];  BENCH_TIME  seconds per random mode [10]
#   BUILD           build directory holding bin/smbkit* [build]
#   BENCH_TMPDIR    where the source, the downloads and Samba's shares live;
#                   default /dev/shm when it has room (keeps the disk out of the
#                   numbers), else $TMPDIR or /tmp
#
# Sealed rows use the share "secure" (smb encrypt = required) for every tool,
# so all of them encrypt the same way; smbkit and smbclient also ask for it
# (--seal, --client-protection=encrypt). rclone has no option to ask for
# signing or encryption: it follows what the server requires, so it runs
# plain and (on the encrypt-required share) sealed, and its signed rows are
# skipped.
#
# Not a test: nothing here asserts a time. Exit status 1 if any transfer
# failed, timed out or came back different.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
cd "$(dirname "$0")/.."

if [ -z "${_COMPARE_INSIDE:-}" ]; then
  export SIZE_MB=${SIZE_MB:-${1:-2048}}
  export RCLONE_SIZE_MB=${RCLONE_SIZE_MB:-256}
  export TOOLS=${TOOLS:-"smbkit smbclient rclone"}
  export MODES=${MODES:-"plain signed sealed"}
  export LINKS=${LINKS:-"0ms 50ms 1g50ms"}
  export TIMEOUT_S=${TIMEOUT_S:-} REPEAT=${REPEAT:-1}
  export BENCH_SAMPLE=${BENCH_SAMPLE:-1} BENCH_SIZE=${BENCH_SIZE:-1G} BENCH_TIME=${BENCH_TIME:-10}
  BUILD=${BUILD:-build}
  export BIN=$PWD/$BUILD/bin
  if [ ! -x "$BIN/smbkit" ] || [ ! -x "$BIN/smbkit-samba" ] || [ ! -x "$BIN/smbkit-link" ]; then
    if [ "$BUILD" = build ]; then scripts/build.sh; else
      echo "compare.sh: $BIN lacks smbkit, smbkit-samba or smbkit-link (build them first)" >&2; exit 2
    fi
  fi
  [ -x /usr/bin/time ] || { echo "compare.sh: /usr/bin/time missing (apt-get install -y time)" >&2; exit 2; }
  # Room for the source, one upload and one download on tmpfs, with margin.
  need_kb=$(( (SIZE_MB * 4 + 1024) * 1024 ))
  if [ -z "${BENCH_TMPDIR:-}" ]; then
    BENCH_TMPDIR=${TMPDIR:-/tmp}
    if [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR==2{print $4}')" -gt "$need_kb" ]; then
      BENCH_TMPDIR=/dev/shm
    fi
  fi
  export TMPDIR=$BENCH_TMPDIR _COMPARE_INSIDE=1
  exec "$BIN/smbkit-samba" -- bash "$0"
fi

# ---- inside: smbd is up; SMBKIT_PORT, SMBKIT_PASSWORD, SMBKIT_SAMBA_DIR are set.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export work
PW=$SMBKIT_PASSWORD
# smbclient reads the password from $PASSWD: never in its argv (ps, the
# tool log below).
export PASSWD=$PW
have_rclone=0
if command -v rclone >/dev/null 2>&1; then have_rclone=1; fi

log() { printf '%s\n' "$*" >&2; }

log "compare.sh: Samba $(smbd --version | sed 's/Version //') on 127.0.0.1:$SMBKIT_PORT, files in $TMPDIR"
log "compare.sh: writing the ${SIZE_MB} MiB source file"
head -c "${SIZE_MB}M" /dev/urandom > "$work/src.bin"
chmod 0644 "$work/src.bin"
small_mb=$(( RCLONE_SIZE_MB < SIZE_MB ? RCLONE_SIZE_MB : SIZE_MB ))
head -c "${small_mb}M" "$work/src.bin" > "$work/src-small.bin"
chmod 0644 "$work/src-small.bin"
# Touch the memory the transfers will use once, untimed: in a VM the first
# touch of guest pages is slow, and would be charged to whichever run
# comes first.
dd if=/dev/zero of="$work/warm" bs=1M count=$(( SIZE_MB * 3 )) status=none
rm -f "$work/warm"
# The files to download, in both shares (hard links: no extra space).
for share in share secure; do
  ln "$work/src.bin" "$SMBKIT_SAMBA_DIR/$share/get.bin"
  ln "$work/src-small.bin" "$SMBKIT_SAMBA_DIR/$share/get-small.bin"
done

if [ "$have_rclone" = 1 ]; then
  export RCLONE_CONFIG=$work/rclone.conf
  : > "$RCLONE_CONFIG"
  export RCLONE_CONFIG_S_TYPE=smb RCLONE_CONFIG_S_HOST=127.0.0.1 RCLONE_CONFIG_S_USER=smbkit
  RCLONE_CONFIG_S_PASS=$(rclone obscure - <<<"$PW")
  export RCLONE_CONFIG_S_PASS
  rclone_version=$(rclone version 2>/dev/null | sed -n 1p)
fi

# xfer PORT CMD...: runs CMD with @PORT@ replaced by PORT, timed from here
# (inside the link, so the relay's start is not counted). Writes
# "seconds rss_kib exit_status" to $work/res.
xfer() {
  local port=$1 t0 t1 rc=0
  shift
  rm -f "$work/rss"
  t0=$(date +%s.%N)
  timeout "$XFER_TIMEOUT" /usr/bin/time -f %M -o "$work/rss" "${@//@PORT@/$port}" >>"$work/tool.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') $(tail -1 "$work/rss" 2>/dev/null || echo 0) $rc" > "$work/res"
}
export -f xfer

# through LINK CMD...: runs xfer directly or through smbkit-link.
through() {
  local link=$1
  shift
  case $link in
    0ms) xfer "$SMBKIT_PORT" "$@" ;;
    50ms) "$BIN/smbkit-link" --to "$SMBKIT_PORT" --delay-ms 50 -- bash -c 'xfer "$SMBKIT_LINK_PORT" "$@"' _ "$@" ;;
    1g50ms) "$BIN/smbkit-link" --to "$SMBKIT_PORT" --delay-ms 50 --rate-mbit 1000 -- \
              bash -c 'xfer "$SMBKIT_LINK_PORT" "$@"' _ "$@" ;;
    *) log "unknown link $link"; exit 2 ;;
  esac
}

raw=$work/raw  # link mode op tool size_mb seconds rss_kib status (one line per run)
: > "$raw"
failures=0

run_one() {  # link mode op tool rep
  local link=$1 mode=$2 op=$3 tool=$4 rep=$5 share=share mb=$SIZE_MB src=$work/src.bin getname=get.bin
  local kopt=() copt=(--client-protection=off)
  case $mode in
    signed) kopt=(--sign); copt=(--client-protection=sign) ;;
    sealed) kopt=(--seal); copt=(--client-protection=encrypt); share=secure ;;
  esac
  if [ "$tool" = rclone ]; then
    if [ "$mode" = signed ]; then
      if [ "$rep" = 1 ]; then echo "$link $mode $op $tool - - - skipped" >> "$raw"; fi
      return 0
    fi
    if [ "$link" != 0ms ]; then
      if [ "$rep" != 1 ]; then return 0; fi  # once is enough at 1-15 MB/s
      mb=$small_mb; src=$work/src-small.bin; getname=get-small.bin
    fi
  fi
  export XFER_TIMEOUT=${TIMEOUT_S:-$(( 60 + mb ))}
  local dst=$work/dl.bin put=$SMBKIT_SAMBA_DIR/$share/put-$tool.bin
  rm -f "$dst" "$put"
  local url="smb://smbkit@127.0.0.1:@PORT@/$share"
  local cmd=()
  case $tool.$op in
    smbkit.put) cmd=("$BIN/smbkit" -q "${kopt[@]}" put "$src" "$url/put-$tool.bin") ;;
    smbkit.get) cmd=("$BIN/smbkit" -q "${kopt[@]}" get "$url/$getname" "$dst") ;;
    smbclient.put) cmd=(smbclient -s /dev/null "//127.0.0.1/$share" -p @PORT@ -U smbkit "${copt[@]}"
                        -c "put $src put-$tool.bin") ;;
    smbclient.get) cmd=(smbclient -s /dev/null "//127.0.0.1/$share" -p @PORT@ -U smbkit "${copt[@]}"
                        -c "get $getname $dst") ;;
    rclone.put) cmd=(env RCLONE_CONFIG_S_PORT=@PORT@ rclone -q copyto "$src" "S:$share/put-$tool.bin") ;;
    rclone.get) cmd=(env RCLONE_CONFIG_S_PORT=@PORT@ rclone -q copyto "S:$share/$getname" "$dst") ;;
  esac
  echo "== $link $mode $op $tool: ${cmd[*]}" >> "$work/tool.log"
  through "$link" "${cmd[@]}" || true
  local secs rss rc status
  read -r secs rss rc < "$work/res"
  if [ "$rc" = 124 ]; then status=timeout
  elif [ "$rc" != 0 ]; then status="exit-$rc"
  else
    local got=$dst
    [ "$op" = put ] && got=$put
    if cmp -s "$src" "$got"; then status=ok; else status=MISMATCH; fi
  fi
  [ "$status" = ok ] || failures=$((failures + 1))
  rm -f "$dst" "$put"
  echo "$link $mode $op $tool $mb $secs $rss $status" >> "$raw"
  log "$(printf '%-7s %-6s %-3s %-9s %6s MiB %8.2f s  %s' "$link" "$mode" "$op" "$tool" "$mb" "$secs" "$status")"
}

start=$(date +%s)
for link in $LINKS; do
  for mode in $MODES; do
    for op in put get; do
      for rep in $(seq 1 "$REPEAT"); do  # tools take turns, so drift hits all alike
        for tool in $TOOLS; do
          if [ "$tool" = rclone ] && [ "$have_rclone" = 0 ]; then continue; fi
          run_one "$link" "$mode" "$op" "$tool" "$rep"
        done
      done
    done
  done
done
elapsed=$(( $(date +%s) - start ))

echo
echo "Samba $(smbd --version | sed 's/Version //'); smbclient $(smbclient --version | sed 's/Version //');" \
     "${rclone_version:-rclone not installed}; files in $TMPDIR; ${elapsed} s of transfers"
echo "MB/s = 10^6 bytes per second of wall time (connect and logon included); ratio = MB/s / smbclient's MB/s"
echo "in the same link/mode/op group; RSS = peak resident set of the client process."
if [ "$have_rclone" = 1 ] && [[ " $TOOLS " == *" rclone "* ]] && [ "$small_mb" != "$SIZE_MB" ] &&
   [ "$LINKS" != 0ms ]; then
  echo "rclone moves ${small_mb} MiB instead of ${SIZE_MB} MiB on the 50 ms links (it is slow there)."
fi
if [ "$REPEAT" -gt 1 ]; then
  echo "Each transfer ran $REPEAT times, tools taking turns; MB/s is the median run, min-max the spread."
fi
echo
# One row per link/mode/op/tool: the median of its runs (any failed run
# makes the row fail), the largest RSS.
awk '
  function median(s,   n, a, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    row = $1 " " $2 " " $3 " " $4
    if (!(row in seen)) { seen[row] = 1; order[++n] = row; size[row] = $5; status[row] = "ok"; rss[row] = 0 }
    if ($8 == "skipped") { status[row] = "skipped"; next }
    if ($8 != "ok") { status[row] = $8; next }
    mb = $5 * 1048576 / $6 / 1e6
    runs[row] = runs[row] " " mb
    if (!(row in lo) || mb < lo[row]) lo[row] = mb
    if (!(row in hi) || mb > hi[row]) hi[row] = mb
    if ($7 > rss[row]) rss[row] = $7
  }
  END {
    for (i = 1; i <= n; i++) {
      r = order[i]
      if (status[r] == "ok") med[r] = median(runs[r])
      split(r, f, " ")
      if (f[4] == "smbclient" && status[r] == "ok") ref[f[1] " " f[2] " " f[3]] = med[r]
    }
    printf "%-10s %-7s %-7s %-4s %8s %9s %13s %13s %8s  %s\n", "tool", "mode", "link", "op", "size", "MB/s",
           "min-max", "vs smbclient", "RSS MiB", "check"
    prev = ""
    for (i = 1; i <= n; i++) {
      r = order[i]
      split(r, f, " ")
      key = f[1] " " f[2] " " f[3]
      if (prev != "" && key != prev) print ""
      prev = key
      if (status[r] == "skipped") {
        printf "%-10s %-7s %-7s %-4s %8s %9s %13s %13s %8s  %s\n", f[4], f[2], f[1], f[3], "-", "-", "-", "-", "-",
               "skipped (cannot ask for signing)"
        continue
      }
      ok = status[r] == "ok"
      ratio = (ok && (key in ref)) ? sprintf("%.2fx", med[r] / ref[key]) : "-"
      spread = ok ? (lo[r] == hi[r] ? "-" : sprintf("%.0f-%.0f", lo[r], hi[r])) : "-"
      printf "%-10s %-7s %-7s %-4s %7sM %9s %13s %13s %8.0f  %s\n", f[4], f[2], f[1], f[3], size[r],
             ok ? sprintf("%.1f", med[r]) : "-", spread, ratio, rss[r] / 1024, status[r]
    }
  }' "$raw"

if [ "$BENCH_SAMPLE" = 1 ]; then
  echo
  echo "smbkit bench sample (0 ms link, plain, share 'share'):"
  U="smb://smbkit@127.0.0.1:$SMBKIT_PORT/share/bench.bin"
  B=$BIN/smbkit
  bt=$(( 60 + BENCH_TIME * 2 + 600 ))
  run_bench() { echo "\$ smbkit bench $*"; timeout "$bt" "$B" bench "$@" "$U" || { echo "smbkit bench failed"; failures=$((failures + 1)); }; }
  run_bench --keep --size "$BENCH_SIZE" --mode seqwrite,seqread --bs 1M --qd 16
  run_bench --keep --size "$BENCH_SIZE" --mode randread --bs 4k --qd 1 --time "$BENCH_TIME"
  run_bench --keep --size "$BENCH_SIZE" --mode randread --bs 4k --qd 16 --time "$BENCH_TIME"
  run_bench --keep --size "$BENCH_SIZE" --mode randwrite --bs 4k --qd 16 --time "$BENCH_TIME"
  rm -f "$SMBKIT_SAMBA_DIR/share/bench.bin"
fi

if [ "$failures" != 0 ]; then
  echo "compare.sh: $failures transfer(s) failed, timed out or came back different; log:" >&2
  grep -v '^$' "$work/tool.log" | tail -40 >&2
  exit 1
fi
