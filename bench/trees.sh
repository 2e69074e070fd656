#!/usr/bin/env bash
# Trees of small files, side by side in one run against ONE throwaway smbd:
#   tools  smbkit cp -r (two connections, the default), smbkit1 (cp -r
#          with --connections 1; not in the default TOOLS), smbclient
#          (recurse on, prompt off; mput / mget),
#          rclone copy (its smb backend, default --transfers) when installed
#   links  50ms (a 50 ms round trip through build/bin/smbkit-link) and 0ms
#          (loopback)
#   ops    up (local tree -> share) and down (share -> local tree)
# Each (link, op) runs every tool in turn, REPEAT rounds interleaved; the
# table gives the median seconds, files per second, the client's CPU
# (user+sys) and the ratio of each tool's time to smbkit's. Every result is
# compared with the source (diff -r).
#
#   bench/trees.sh
#
# Environment (defaults in brackets):
#   FILES        files in the 50 ms tree [500]; sizes 1-64 KiB, seeded
#   LOOP_FILES   files in the loopback tree [5000]
#   LINKS        [50ms 0ms]
#   TOOLS        [smbkit smbclient rclone]
#   REPEAT       rounds [3]
#   BUILD        build directory holding bin/smbkit* [build]
#
# Not a test: nothing here asserts a time. Exit status 1 if a copy failed or
# came back different.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
cd "$(dirname "$0")/.."

if [ -z "${_TREES_INSIDE:-}" ]; then
  export FILES=${FILES:-500} LOOP_FILES=${LOOP_FILES:-5000} LINKS=${LINKS:-"50ms 0ms"}
  export TOOLS=${TOOLS:-"smbkit smbclient rclone"} REPEAT=${REPEAT:-3}
  export BIN=$PWD/${BUILD:-build}/bin
  for b in smbkit smbkit-samba smbkit-link; do
    [ -x "$BIN/$b" ] || { echo "trees.sh: $BIN/$b missing (build it first)" >&2; exit 2; }
  done
  if [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
  export _TREES_INSIDE=1
  exec "$BIN/smbkit-samba" -- bash "$0"
fi

# ---- inside: smbd is up; SMBKIT_PORT, SMBKIT_PASSWORD, SMBKIT_SAMBA_DIR are set.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export work
share=$SMBKIT_SAMBA_DIR/share
log() { printf '%s\n' "$*" >&2; }
if [[ " $TOOLS " == *" rclone "* ]] && ! command -v rclone >/dev/null 2>&1; then
  log "trees.sh: rclone not installed, left out"
  TOOLS=${TOOLS//rclone/}
fi
if command -v rclone >/dev/null 2>&1; then
  export RCLONE_CONFIG=$work/rclone.conf
  : > "$RCLONE_CONFIG"
  export RCLONE_CONFIG_S_TYPE=smb RCLONE_CONFIG_S_HOST=127.0.0.1 RCLONE_CONFIG_S_USER=smbkit
  RCLONE_CONFIG_S_PASS=$(rclone obscure - <<<"$SMBKIT_PASSWORD")
  export RCLONE_CONFIG_S_PASS
fi
# smbclient reads the password from $PASSWD (kept out of argv).
export PASSWD=$SMBKIT_PASSWORD

# make_tree N DIR: N files of 1-64 KiB (seeded sizes and content), 50 to a
# directory.
make_tree() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import os, random, sys
n, root = int(sys.argv[1]), sys.argv[2]
r = random.Random(19)
pool = r.randbytes(128 * 1024)
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 50))
    os.makedirs(d, exist_ok=True)
    size = r.randint(1024, 64 * 1024)
    off = r.randint(0, len(pool) - size)
    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
        f.write(pool[off:off + size])
PY
}

# run LINK OP TOOL N: one copy; appends "link op tool n seconds cpu status" to $work/rows.
run() {
  local link=$1 op=$2 tool=$3 n=$4 port src dst cmd
  local tree=$work/tree-$n
  if [ "$op" = up ]; then
    src=$tree; dst=up-$tool-$n
    rm -rf "${share:?}/$dst"
  else
    src=tree-$n; dst=$work/down-$tool-$n
    rm -rf "$dst"
  fi
  sync
  case $tool.$op in
    smbkit.up) cmd='env SMBKIT_PASSWORD="$PASSWD" "$BIN/smbkit" -q cp -r "$SRC" "smb://smbkit@127.0.0.1:$PORT/share/$DST"' ;;
    smbkit.down) cmd='env SMBKIT_PASSWORD="$PASSWD" "$BIN/smbkit" -q cp -r "smb://smbkit@127.0.0.1:$PORT/share/$SRC" "$DST"' ;;
    smbkit1.up) cmd='env SMBKIT_PASSWORD="$PASSWD" "$BIN/smbkit" -q --connections 1 cp -r "$SRC" "smb://smbkit@127.0.0.1:$PORT/share/$DST"' ;;
    smbkit1.down) cmd='env SMBKIT_PASSWORD="$PASSWD" "$BIN/smbkit" -q --connections 1 cp -r "smb://smbkit@127.0.0.1:$PORT/share/$SRC" "$DST"' ;;
    smbclient.up) cmd='smbclient -s /dev/null //127.0.0.1/share -p "$PORT" -U smbkit -c "prompt off; recurse on; mkdir $DST; cd $DST; lcd $SRC; mput *"' ;;
    smbclient.down) cmd='mkdir -p "$DST" && smbclient -s /dev/null //127.0.0.1/share -p "$PORT" -U smbkit -c "prompt off; recurse on; lcd $DST; cd $SRC; mget *"' ;;
    rclone.up) cmd='RCLONE_CONFIG_S_PORT=$PORT rclone -q copy "$SRC" "S:share/$DST"' ;;
    rclone.down) cmd='RCLONE_CONFIG_S_PORT=$PORT rclone -q copy "S:share/$SRC" "$DST"' ;;
  esac
  export SRC=$src DST=$dst CMD=$cmd
  # Timed inside the link (its start is not counted); CPU of the client.
  local inner='export PORT=${1:-$SMBKIT_LINK_PORT}; t0=$(date +%s.%N); rc=0
    /usr/bin/time -f "%U %S" -o "$work/cpu" bash -c "$CMD" >>"$work/tool.log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    echo "$(awk -v a="$t0" -v b="$t1" "BEGIN{printf \"%.3f\", b-a}") $(tail -1 "$work/cpu" | awk "{print \$1+\$2}") $rc" > "$work/res"'
  if [ "$link" = 0ms ]; then bash -c "$inner" _ "$SMBKIT_PORT"
  else "$BIN/smbkit-link" --to "$SMBKIT_PORT" --delay-ms "${link%ms}" -- bash -c "$inner" _; fi
  read -r secs cpu rc < "$work/res"
  local got=$share/$dst want=$tree
  if [ "$op" = down ]; then got=$dst; fi
  local status=ok
  if [ "$rc" != 0 ]; then status="exit$rc"; elif ! diff -rq "$want" "$got" >/dev/null 2>&1; then status=differs; fi
  echo "$link $op $tool $n $secs $cpu $status" >> "$work/rows"
  log "  $link $op $tool $n files: ${secs}s cpu ${cpu}s $status"
}
export -f run log
export BIN

: > "$work/rows"
for link in $LINKS; do
  n=$FILES; [ "$link" = 0ms ] && n=$LOOP_FILES
  [ -d "$work/tree-$n" ] || make_tree "$n" "$work/tree-$n"
  [ -d "$share/tree-$n" ] || { cp -r "$work/tree-$n" "$share/tree-$n"; chown -R smbkit "$share/tree-$n" 2>/dev/null || true; }
done
chown -R smbkit "$share" 2>/dev/null || true
for r in $(seq "$REPEAT"); do
  log "round $r"
  for link in $LINKS; do
    n=$FILES; [ "$link" = 0ms ] && n=$LOOP_FILES
    for op in up down; do
      for tool in $TOOLS; do run "$link" "$op" "$tool" "$n"; done
    done
  done
done

echo "Samba $(smbd --version | sed 's/Version //'); $(command -v rclone >/dev/null && rclone version | sed -n 1p); $(nproc) CPUs; REPEAT=$REPEAT"
printf "%-5s %-4s %-9s %6s %9s %9s %8s %10s %s\n" link op tool files "median s" files/s "cpu s" "x smbkit" check
awk '
  { k = $1 " " $2 " " $3 " " $4; t[k] = t[k] " " $5; c[k] = c[k] " " $6; if ($7 != "ok") bad[k] = $7; keys[k] = 1 }
  function med(s,   a, n, i, j, x) { n = split(s, a, " "); for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > x + 0; j--) a[j+1] = a[j]; a[j+1] = x }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
  END {
    for (k in keys) { split(k, f, " "); m[k] = med(t[k]); if (f[3] == "smbkit") ref[f[1] " " f[2]] = m[k] }
    for (k in keys) { split(k, f, " ")
      printf "%-5s %-4s %-9s %6d %9.2f %9.0f %8.2f %10.1f %s\n", f[1], f[2], f[3], f[4], m[k], f[4] / m[k], med(c[k]),
             m[k] / ref[f[1] " " f[2]], (k in bad) ? bad[k] : "ok" }
  }' "$work/rows" | sort -k1,1r -k2,2r -k4,4n
! grep -qv ' ok$' "$work/rows"
