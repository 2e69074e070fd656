#!/usr/bin/env bash
# `smbkit get` and `put` of one file with one channel and with
# --multichannel (2 and 4 channels), interleaved in each round, against
# the harness's server: seconds (connect and logon included), MB/s and the
# client's CPU (user + system, /usr/bin/time) per GiB.
#
#   TMPDIR=/dev/shm build/bin/smbkit-samba --server smbd \
#       --global "server multi channel support = yes" -- bench/multichannel-ab.sh
#   TMPDIR=/dev/shm build/bin/smbkit-samba --server smbkitd -- bench/multichannel-ab.sh
#
# Environment: SIZE_MB (1024), ROUNDS (3), CHANNELS ("1 2 4"), BIN (build/bin);
# CLIENTS ("label=path/to/smbkit ...", default "new=$BIN/smbkit"): several
# builds of the client side by side, interleaved in each round (an A/B of
# two versions: copy the old binary away before building the new one).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-3}
CHANNELS=${CHANNELS:-1 2 4}
CLIENTS=${CLIENTS:-new=$BIN/smbkit}
: "${SMBKIT_PORT:?run under build/bin/smbkit-samba}"
w=$(mktemp -d "${TMPDIR:-/tmp}/mc-ab.XXXX")
trap 'rm -rf "$w"' EXIT
src=$w/src.bin
head -c $((SIZE_MB << 20)) /dev/urandom >"$src"
want=$(sha256sum <"$src" | cut -d' ' -f1)
url=$SMBKIT_URL/share
# The file every get reads, written once by the server's own path.
cp "$src" "$SMBKIT_SAMBA_DIR/share/mc-get.bin"
chmod 666 "$SMBKIT_SAMBA_DIR/share/mc-get.bin"

run() {  # op channels round label smbkit
  local op=$1 n=$2 label=$4 smbkit=$5 mc=() t
  [ "$n" -gt 1 ] && mc=(--multichannel --max-channels "$n")
  t=$w/time
  if [ "$op" = get ]; then
    /usr/bin/time -f '%e %U %S' -o "$t" "$smbkit" -q "${mc[@]}" get "$url/mc-get.bin" "$w/got.bin" || return 1
    [ "$(sha256sum <"$w/got.bin" | cut -d' ' -f1)" = "$want" ] || { echo "get: wrong bytes" >&2; return 1; }
    rm -f "$w/got.bin"
  else
    /usr/bin/time -f '%e %U %S' -o "$t" "$smbkit" -q "${mc[@]}" put "$src" "$url/mc-put.bin" || return 1
    [ "$(sha256sum <"$SMBKIT_SAMBA_DIR/share/mc-put.bin" | cut -d' ' -f1)" = "$want" ] ||
      { echo "put: wrong bytes" >&2; return 1; }
  fi
  read -r el us sy <"$t"
  awk -v op="$op" -v n="$n" -v r="$3" -v c="$label" -v el="$el" -v us="$us" -v sy="$sy" -v mb="$SIZE_MB" \
    'BEGIN { printf "%s\t%s\t%d\t%d\t%.2f\t%.0f\t%.2f\n", c, op, n, r, el, mb * 1.048576 / el, (us + sy) * 1024 / mb }'
}

echo "server: $SMBKIT_SERVER, $SIZE_MB MiB, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf 'client\top\tchannels\tround\tseconds\tMB/s\tclient CPU s/GiB\n'
for r in $(seq 1 "$ROUNDS"); do
  for op in get put; do
    for n in $CHANNELS; do
      for c in $CLIENTS; do run "$op" "$n" "$r" "${c%%=*}" "${c#*=}" || exit 1; done
    done
  done
done
