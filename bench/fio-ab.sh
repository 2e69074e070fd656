#!/usr/bin/env bash
# A/B of the fio 4 KiB random-read case of bench/mount.sh (cache=none,
# psync, 1 job vs 16 jobs) for two smbkit binaries, interleaved in rounds
# so both see the same machine load. Prints one line per run and the
# per-binary medians and qd16/qd1 ratios.
#
#   bench/fio-ab.sh     (starts its own smbd via smbkit-samba)
# Environment: BEFORE (default .before/build/bin/smbkit), AFTER (default
# build/bin/smbkit), ROUNDS (3), RUNTIME (seconds per fio run, 6), JOBS
# ("1 16"), ENGINE (psync), RW (randread; randwrite for 4 KiB random
# writes), EXTRA (more -o options). Needs root.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
cd "$(dirname "$0")/.."
if [ -z "${_FIO_AB_INSIDE:-}" ]; then
  export BEFORE=$(realpath "${BEFORE:-.before/build/bin/smbkit}") AFTER=$(realpath "${AFTER:-build/bin/smbkit}")
  [ -w /dev/shm ] && export TMPDIR=/dev/shm
  export _FIO_AB_INSIDE=1
  exec build/bin/smbkit-samba -- bash "$0"
fi
work=$(mktemp -d); mps=()
declare -A pids
cleanup() { for m in "${mps[@]}"; do fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
share=$SMBKIT_SAMBA_DIR/share
head -c $((256 << 20)) /dev/urandom > "$share/fio.bin"; chown "$(stat -c %u:%g "$share")" "$share/fio.bin"
for t in before after; do
  bin=$BEFORE; [ $t = after ] && bin=$AFTER
  mkdir -p "$work/$t"
  SMBKIT_PASSWORD=$SMBKIT_PASSWORD "$bin" mount "//127.0.0.1:$SMBKIT_PORT/share" "$work/$t" -o "username=smbkit,cache=none${EXTRA:+,$EXTRA}"
  mps+=("$work/$t")
  pids[$t]=$(pgrep -n -f "mount //127.0.0.1:$SMBKIT_PORT/share $work/$t")
done
ticks() { awk '{print $14 + $15}' /proc/$1/stat; }  # utime + stime of the daemon (all threads)
smbd_ticks() { cat $(pgrep -x smbd | sed 's|.*|/proc/&/stat|') 2>/dev/null | awk '{s += $14 + $15} END{print s + 0}' || true; }
declare -A all cpu scpu
hz=$(getconf CLK_TCK)
col=8; [[ "${RW:-randread}" == *write* ]] && col=49  # terse v3: read IOPS, write IOPS
for r in $(seq "${ROUNDS:-3}"); do
  for j in ${JOBS:-1 16}; do
    for t in before after; do
      c0=$(ticks ${pids[$t]}); s0=$(smbd_ticks)
      iops=$(fio --name=rr --filename="$work/$t/fio.bin" --rw="${RW:-randread}" --bs=4k --ioengine="${ENGINE:-psync}" \
        --numjobs="$j" --group_reporting --time_based --runtime="${RUNTIME:-6}" --size=256m \
        --output-format=terse --terse-version=3 2>/dev/null | awk -F';' -v col="$col" '{print $col}')
      c1=$(ticks ${pids[$t]}); s1=$(smbd_ticks)
      us=$(awk -v c=$((c1 - c0)) -v hz=$hz -v n="$iops" -v t="${RUNTIME:-6}" 'BEGIN{printf "%.1f", c * 1e6 / hz / (n * t)}')
      sus=$(awk -v c=$((s1 - s0)) -v hz=$hz -v n="$iops" -v t="${RUNTIME:-6}" 'BEGIN{printf "%.1f", c * 1e6 / hz / (n * t)}')
      echo "round $r $t jobs=$j: $iops IOPS, daemon $us us CPU/op, smbd $sus us/op (load $(cut -d' ' -f1 /proc/loadavg))"
      cpu[$t.$j]="${cpu[$t.$j]:-} $us"
      all[$t.$j]="${all[$t.$j]:-} $iops"
    done
  done
done
med() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for t in before after; do
  line="$t:"
  for j in ${JOBS:-1 16}; do m=$(echo "${all[$t.$j]}" | med); u=$(echo "${cpu[$t.$j]}" | med); line="$line jobs=$j median $m IOPS, $u us daemon CPU/op;"; declare "M_${t}_$j=$m"; done
  echo "$line"
done
for t in before after; do
  a=M_${t}_1; b=M_${t}_16
  [ -n "${!a:-}" ] && [ -n "${!b:-}" ] && awk -v a="${!a}" -v b="${!b}" -v t=$t 'BEGIN{printf "%s: 16 jobs / 1 job = %.2fx\n", t, b/a}'
done
for j in ${JOBS:-1 16}; do a=M_before_$j; b=M_after_$j; awk -v a="${!a}" -v b="${!b}" -v j=$j 'BEGIN{printf "jobs=%s after/before = %.2fx\n", j, b/a}'; done
