#!/usr/bin/env bash
# Side-by-side throughput: smbkit vs smbclient against the same local Samba,
# in one run, plain / signed / sealed. Prints MB/s and the ratio.
#   bench/compare.sh [SIZE_MB]        (default 1024)
# Not a test: nothing here asserts a time.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${1:-1024}
[ -x build/bin/smbkit ] || scripts/build.sh
exec build/bin/smbkit-samba -- bash -c '
set -euo pipefail
SIZE_MB='"$SIZE_MB"'
B=build/bin/smbkit
work=$(mktemp -d); trap "rm -rf $work" EXIT
head -c ${SIZE_MB}M /dev/urandom > "$work/src.bin"
bytes=$((SIZE_MB*1024*1024))
now() { date +%s.%N; }
mbps() { awk -v b=$bytes -v s="$1" -v e="$2" "BEGIN{printf \"%.0f\", b/(e-s)/1e6}"; }
SC="smbclient -p $SMBKIT_PORT -U smbkit%$SMBKIT_PASSWORD"
printf "%-8s %-4s %10s %10s %7s\n" mode op smbkit smbclient ratio
for mode in plain signed sealed; do
  case $mode in
    plain) kopt=""; copt="";;
    signed) kopt="--sign"; copt="--client-protection=sign";;
    sealed) kopt="--seal"; copt="--client-protection=encrypt";;
  esac
  # put
  t0=$(now); $B -q $kopt put "$work/src.bin" "$SMBKIT_URL/share/k.bin"; t1=$(now)
  $SC $copt //127.0.0.1/share -c "put $work/src.bin c.bin" >/dev/null 2>&1; t2=$(now)
  k=$(mbps $t0 $t1); c=$(mbps $t1 $t2)
  printf "%-8s %-4s %10s %10s %7s\n" $mode put "$k" "$c" "$(awk -v a=$k -v b=$c "BEGIN{printf \"%.2fx\", a/b}")"
  # get
  t0=$(now); $B -q $kopt get "$SMBKIT_URL/share/k.bin" "$work/k.back"; t1=$(now)
  $SC $copt //127.0.0.1/share -c "get c.bin $work/c.back" >/dev/null 2>&1; t2=$(now)
  k=$(mbps $t0 $t1); c=$(mbps $t1 $t2)
  printf "%-8s %-4s %10s %10s %7s\n" $mode get "$k" "$c" "$(awk -v a=$k -v b=$c "BEGIN{printf \"%.2fx\", a/b}")"
  cmp -s "$work/src.bin" "$work/k.back" || { echo "smbkit data mismatch"; exit 1; }
  rm -f "$work/k.back" "$work/c.back"
done
'
