#!/usr/bin/env bash
# Metadata and small-file latency A/B through `smbkit mount` (actimeo=0 by
# default, so every call asks the server; ACTIMEO=1 for the default), directly at 0 ms and through smbkit-link
# at a round trip of DELAY ms (50), for two binaries, interleaved in ROUNDS
# rounds (3). Per call: stat(2) of one file, `ls` of a directory of 20
# files, `cat` of a distinct 8 KiB file (cold: first open on this mount),
# `cat` of the same file again and again (warm: its deferred handle and
# lease are still held), `chmod` by path, `df` (statfs) and `create` (a new
# empty file: open O_CREAT + close). Prints ms per call and the
# before/after ratios of the medians.
#   bench/stat-ab.sh   (BEFORE, AFTER, N0=500 calls at 0 ms, N=20 through the link, ACTIMEO=0)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
cd "$(dirname "$0")/.."
if [ -z "${_STAT_AB_INSIDE:-}" ]; then
  export BEFORE=$(realpath "${BEFORE:-.before/build/bin/smbkit}") AFTER=$(realpath "${AFTER:-build/bin/smbkit}")
  export LINK=$(realpath "${LINK:-build/bin/smbkit-link}")
  export _STAT_AB_INSIDE=1
  exec build/bin/smbkit-samba -- bash "$0"
fi
work=$(mktemp -d); share=$SMBKIT_SAMBA_DIR/share; link_pid=""
cleanup() { mountpoint -q "$work/m" && fusermount3 -u "$work/m"; [ -n "$link_pid" ] && { pkill -P "$link_pid"; kill "$link_pid"; } 2>/dev/null; rm -rf "$work"; true; }
trap cleanup EXIT
ops=(stat ls cat recat chmod df create)
n_max=$(( ${N0:-500} > ${N:-20} ? ${N0:-500} : ${N:-20} ))
echo data > "$share/f"; mkdir -p "$share/d" "$share/c" "$share/n"; for i in $(seq 20); do echo "$i" > "$share/d/$i"; done
for i in $(seq "$n_max"); do head -c 8192 /dev/urandom > "$share/c/$i"; done
chown -R "$(stat -c %u:%g "$share")" "$share/f" "$share/d" "$share/c" "$share/n"
"$LINK" --to "$SMBKIT_PORT" --delay-ms "${DELAY:-50}" -- bash -c 'echo "$SMBKIT_LINK_PORT" > "$0"; exec sleep 100000' "$work/port" &
link_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
lport=$(cat "$work/port"); mkdir -p "$work/m"
now() { date +%s%N; }
run() {  # BIN PORT COUNT -> ms per call of each of ${ops[@]}
  SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$1" mount "//127.0.0.1:$2/share" "$work/m" -o "username=smbkit,actimeo=${ACTIMEO:-0}"
  stat "$work/m/f" > /dev/null
  local out="" t0 i mode
  for op in "${ops[@]}"; do
    t0=$(now)
    for i in $(seq "$3"); do
      case $op in
        stat) stat -c %s "$work/m/f" > /dev/null ;;
        ls) ls "$work/m/d" > /dev/null ;;
        cat) cat "$work/m/c/$i" > /dev/null ;;
        recat) cat "$work/m/f" > /dev/null ;;
        chmod) mode=644; [ $((i % 2)) = 1 ] && mode=444; chmod "$mode" "$work/m/f" ;;
        df) df "$work/m" > /dev/null ;;
        create) : > "$work/m/n/$BASHPID-$i" ;;
      esac
    done
    out="$out $(awk -v t=$(( $(now) - t0 )) -v n="$3" 'BEGIN{printf "%.2f", t / 1e6 / n}')"
  done
  fusermount3 -u "$work/m"; sleep 0.3
  echo "$out"
}
declare -A all
for r in $(seq "${ROUNDS:-3}"); do
  for t in before after; do
    bin=$BEFORE; [ $t = after ] && bin=$AFTER
    read -r -a z <<< "$(run "$bin" "$SMBKIT_PORT" "${N0:-500}")"; read -r -a l <<< "$(run "$bin" "$lport" "${N:-20}")"
    line="round $r $t (ms per call):"
    for k in "${!ops[@]}"; do
      line="$line ${ops[$k]} ${z[$k]}/${l[$k]}"
      all[$t.0.$k]="${all[$t.0.$k]:-} ${z[$k]}"; all[$t.l.$k]="${all[$t.l.$k]:-} ${l[$k]}"
    done
    echo "$line  (0 ms/${DELAY:-50} ms; load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
med() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for at in 0 l; do
  for k in "${!ops[@]}"; do
    b=$(echo "${all[before.$at.$k]}" | med); a=$(echo "${all[after.$at.$k]}" | med)
    echo "$([ $at = 0 ] && echo "0 ms" || echo "${DELAY:-50} ms") ${ops[$k]}: before $b ms, after $a ms, before/after $(awk -v a=$a -v b=$b 'BEGIN{printf "%.2f", b/a}')x"
  done
done
