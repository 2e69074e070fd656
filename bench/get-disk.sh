#!/usr/bin/env bash
# get of one file into a file on the local disk (not tmpfs: the page
# cache's write-back is part of what is measured), smbkit "before" (A),
# smbkit "after" (B) and smbclient, interleaved for ROUNDS rounds (the
# order turning each round), each download to a fresh name after the
# previous one was synced and removed.
# Prints per run: wall seconds, user+sys CPU seconds, peak RSS (MiB); then
# the median of each and the ratios of the medians.
#
#   TMPDIR=/dev/shm build/bin/smbkit-samba --server smbd -- bench/get-disk.sh
#   TMPDIR=/dev/shm build/bin/smbkit-samba --server smbkitd -- bench/get-disk.sh
#
# TMPDIR=/dev/shm keeps the server's share (the source) on tmpfs, so only
# the client's side touches the disk.
# Environment: A (the smbkit to compare with; default: B), B (build/bin/smbkit),
# SIZE_MB (1024), ROUNDS (3), DEST (a directory on the local disk; /var/tmp).
# Not a test: nothing asserts a time. Exit status 1 if a download failed
# or differs from the source.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build/bin/smbkit}
A=${A:-$B}
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-3}
DEST=${DEST:-/var/tmp}
[ -x /usr/bin/time ] || { echo "get-disk.sh: /usr/bin/time missing (apt-get install -y time)" >&2; exit 2; }
fstype=$(stat -f -c %T "$DEST")
case $fstype in tmpfs|ramfs) echo "get-disk.sh: $DEST is $fstype, not a disk" >&2; exit 2 ;; esac
share=$SMBKIT_SAMBA_DIR/share
w=$(mktemp -d "$DEST/get-disk.XXXX")
trap 'rm -rf "$w"' EXIT
head -c $((SIZE_MB << 20)) /dev/urandom > "$share/big.bin"
sum=$(sha256sum < "$share/big.bin" | cut -d' ' -f1)
auth=$w/auth
printf 'username = smbkit\npassword = %s\n' "$SMBKIT_PASSWORD" > "$auth"
chmod 600 "$auth"
url="smb://smbkit@127.0.0.1:$SMBKIT_PORT/share/big.bin"
echo "get of $SIZE_MB MiB into $DEST ($fstype); server: ${SMBKIT_SERVER:-smbd}; A=$A B=$B"
fail=0
res=$w/res.txt
: > "$res"
for r in $(seq "$ROUNDS"); do
  # The order turns each round, so no tool always follows the same one.
  case $((r % 3)) in 1) order="A B smbclient" ;; 2) order="B smbclient A" ;; 0) order="smbclient A B" ;; esac
  for tool in $order; do
    out=$w/dl-$tool-$r.bin
    sync
    case $tool in
      A) cmd=("$A" -q get "$url" "$out") ;;
      B) cmd=("$B" -q get "$url" "$out") ;;
      smbclient) cmd=(smbclient -s /dev/null //127.0.0.1/share -p "$SMBKIT_PORT" -A "$auth"
                      --client-protection=off -c "get big.bin $out") ;;
    esac
    # Wall time includes connect, logon and the final close (write-back
    # errors), not the sync after it.
    if ! /usr/bin/time -o "$w/t" -f '%e %U %S %M' "${cmd[@]}" > "$w/log" 2>&1; then
      echo "round $r $tool: failed: $(tail -3 "$w/log")"; fail=1; continue
    fi
    got=$(sha256sum < "$out" | cut -d' ' -f1)
    [ "$got" = "$sum" ] || { echo "round $r $tool: content differs"; fail=1; }
    read -r wall user sys rss < "$w/t"
    cpu=$(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')
    echo "round $r $tool: $wall s, cpu $cpu s, rss $((rss / 1024)) MiB"
    echo "$tool $wall $cpu $((rss / 1024))" >> "$res"
    rm -f "$out"
  done
done
sync
echo
printf '%-10s %10s %10s %10s %12s\n' tool "wall s" "cpu s" "RSS MiB" "wall/smbclient"
awk '
  function median(arr, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && arr[j-1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j-1]; arr[j-1] = t }
    return n % 2 ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2
  }
  { n[$1]++; w[$1, n[$1]] = $2; c[$1, n[$1]] = $3; m[$1, n[$1]] = $4 }
  END {
    split("A B smbclient", tools, " ")
    for (k = 1; k <= 3; k++) {
      t = tools[k]; if (!(t in n)) continue
      for (i = 1; i <= n[t]; i++) { a[i] = w[t, i]; b[i] = c[t, i]; d[i] = m[t, i] }
      mw[t] = median(a, n[t]); mc[t] = median(b, n[t]); mm[t] = median(d, n[t])
    }
    for (k = 1; k <= 3; k++) {
      t = tools[k]; if (!(t in n)) continue
      printf "%-10s %10.2f %10.2f %10d %12s\n", t, mw[t], mc[t], mm[t], ("smbclient" in mw) ? sprintf("%.2f", mw[t] / mw["smbclient"]) : "-"
    }
    if (("A" in mw) && ("B" in mw)) printf "B/A wall %.2f, cpu %.2f\n", mw["B"] / mw["A"], mc["B"] / mc["A"]
  }' "$res"
exit $fail
