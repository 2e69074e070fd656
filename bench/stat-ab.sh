#!/usr/bin/env bash
# Metadata latency A/B: stat(2) of one file, and `ls` of a directory of 20
# files, through `smbkit mount` (actimeo=0, so every call asks the server)
# directly at 0 ms and through smbkit-link at a round trip of DELAY ms
# (50), for two binaries, interleaved in ROUNDS rounds (3). Prints ms per
# call and the before/after ratios.
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
echo data > "$share/f"; mkdir -p "$share/d"; for i in $(seq 20); do echo "$i" > "$share/d/$i"; done
chown -R "$(stat -c %u:%g "$share")" "$share/f" "$share/d"
"$LINK" --to "$SMBKIT_PORT" --delay-ms "${DELAY:-50}" -- bash -c 'echo "$SMBKIT_LINK_PORT" > "$0"; exec sleep 100000' "$work/port" &
link_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
lport=$(cat "$work/port"); mkdir -p "$work/m"
run() {  # BIN PORT COUNT -> "ms-per-stat ms-per-ls"
  SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$1" mount "//127.0.0.1:$2/share" "$work/m" -o "username=smbkit,actimeo=0"
  stat "$work/m/f" > /dev/null
  local t0 t1 t2; t0=$(date +%s%N)
  for _ in $(seq "$3"); do stat -c %s "$work/m/f" > /dev/null; done
  t1=$(date +%s%N)
  for _ in $(seq "$3"); do ls "$work/m/d" > /dev/null; done
  t2=$(date +%s%N)
  fusermount3 -u "$work/m"; sleep 0.3
  awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) -v n="$3" 'BEGIN{printf "%.2f %.2f", a / 1e6 / n, b / 1e6 / n}'
}
declare -A all
for r in $(seq "${ROUNDS:-3}"); do
  for t in before after; do
    bin=$BEFORE; [ $t = after ] && bin=$AFTER
    read -r z zl <<< "$(run "$bin" "$SMBKIT_PORT" "${N0:-2000}")"; read -r l ll <<< "$(run "$bin" "$lport" "${N:-20}")"
    echo "round $r $t: 0 ms $z ms/stat $zl ms/ls, ${DELAY:-50} ms $l ms/stat $ll ms/ls (load $(cut -d' ' -f1 /proc/loadavg))"
    all[$t.0]="${all[$t.0]:-} $z"; all[$t.l]="${all[$t.l]:-} $l"; all[$t.0ls]="${all[$t.0ls]:-} $zl"; all[$t.lls]="${all[$t.lls]:-} $ll"
  done
done
med() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for k in 0 l 0ls lls; do
  b=$(echo "${all[before.$k]}" | med); a=$(echo "${all[after.$k]}" | med)
  what=stat; case $k in *ls) what=ls;; esac
  echo "$(case $k in 0*) echo "0 ms";; *) echo "${DELAY:-50} ms";; esac) $what: before $b ms, after $a ms, before/after $(awk -v a=$a -v b=$b 'BEGIN{printf "%.2f", b/a}')x"
done
