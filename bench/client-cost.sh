#!/usr/bin/env bash
# The client's own cost on get and put: smbkit "before" (A), smbkit "after"
# (B) and smbclient, interleaved (the order turning each round), plain,
# signed and sealed, every file and share on tmpfs. Per run: wall seconds,
# user+sys CPU seconds and peak RSS (MiB) of the client from /usr/bin/time;
# then the medians and the ratios to smbclient. Every download and upload
# is checked with sha256 against the source.
#
#   TMPDIR=/dev/shm A=old-smbkit build/bin/smbkit-samba --server smbd -- bench/client-cost.sh
#   TMPDIR=/dev/shm A=old-smbkit build/bin/smbkit-samba --server smbkitd -- bench/client-cost.sh
#
# Environment: A (the smbkit to compare with; default B), B (build/bin/smbkit),
# SIZE_MB (1024), ROUNDS (3), OPS (get put), MODES (plain sign seal),
# TOOLS (A B smbclient).
# Not a test: nothing asserts a time. Exit status 1 if a transfer failed or
# its content differs.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/preflight.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build/bin/smbkit}
A=${A:-$B}
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-3}
OPS=${OPS:-"get put"}
MODES=${MODES:-"plain sign seal"}
TOOLS=${TOOLS:-"A B smbclient"}
[ -x /usr/bin/time ] || { echo "client-cost.sh: /usr/bin/time missing (apt-get install -y time)" >&2; exit 2; }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
src=$w/src.bin
head -c $((SIZE_MB << 20)) /dev/urandom > "$src"
chmod 0644 "$src"
sum=$(sha256sum < "$src" | cut -d' ' -f1)
for share in share secure; do ln "$src" "$SMBKIT_SAMBA_DIR/$share/get.bin" 2>/dev/null || cp "$src" "$SMBKIT_SAMBA_DIR/$share/get.bin"; done
auth=$w/auth
printf 'username = smbkit\npassword = %s\n' "$SMBKIT_PASSWORD" > "$auth"
chmod 600 "$auth"
echo "get/put of $SIZE_MB MiB in $w; server: ${SMBKIT_SERVER:-smbd}; A=$A B=$B"
fail=0
res=$w/res.txt
: > "$res"
n=0
for r in $(seq "$ROUNDS"); do
  for op in $OPS; do
    for mode in $MODES; do
      # The order turns with every row, so no tool always follows the same one.
      read -r -a tools <<< "$TOOLS"
      n=$((n + 1))
      k=$((n % ${#tools[@]}))
      order=("${tools[@]:k}" "${tools[@]:0:k}")
      share=share kopt=() copt=(--client-protection=off)
      case $mode in
        sign) kopt=(--sign); copt=(--client-protection=sign) ;;
        seal) kopt=(--seal); copt=(--client-protection=encrypt); share=secure ;;
      esac
      url="smb://smbkit@127.0.0.1:$SMBKIT_PORT/$share"
      for tool in "${order[@]}"; do
        bin=$B
        [ "$tool" = A ] && bin=$A
        dl=$w/dl.bin
        up=$SMBKIT_SAMBA_DIR/$share/up-$tool.bin
        rm -f "$dl" "$up"
        case $tool.$op in
          A.get|B.get) cmd=("$bin" -q "${kopt[@]}" get "$url/get.bin" "$dl") ;;
          A.put|B.put) cmd=("$bin" -q "${kopt[@]}" put "$src" "$url/up-$tool.bin") ;;
          smbclient.get) cmd=(smbclient -s /dev/null "//127.0.0.1/$share" -p "$SMBKIT_PORT" -A "$auth" "${copt[@]}"
                              -c "get get.bin $dl") ;;
          smbclient.put) cmd=(smbclient -s /dev/null "//127.0.0.1/$share" -p "$SMBKIT_PORT" -A "$auth" "${copt[@]}"
                              -c "put $src up-$tool.bin") ;;
        esac
        if ! /usr/bin/time -o "$w/t" -f '%e %U %S %M' "${cmd[@]}" > "$w/log" 2>&1; then
          echo "round $r $op $mode $tool: failed: $(tail -3 "$w/log")"; fail=1; continue
        fi
        out=$dl
        [ "$op" = put ] && out=$up
        got=$(sha256sum < "$out" | cut -d' ' -f1)
        [ "$got" = "$sum" ] || { echo "round $r $op $mode $tool: content differs"; fail=1; }
        read -r wall user sys rss < "$w/t"
        cpu=$(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')
        echo "round $r $op $mode $tool: $wall s, cpu $cpu s (user $user sys $sys), rss $((rss / 1024)) MiB"
        echo "$op $mode $tool $wall $cpu $((rss / 1024))" >> "$res"
        rm -f "$dl" "$up"
      done
    done
  done
done
echo
printf '%-4s %-5s %-10s %8s %8s %8s %10s %10s\n' op mode tool "wall s" "cpu s" "RSS MiB" "cpu/smbc" "RSS/smbc"
awk '
  function median(arr, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && arr[j-1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j-1]; arr[j-1] = t }
    return n % 2 ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2
  }
  { key = $1 " " $2 " " $3; if (!(key in n)) order[++keys] = key; n[key]++; w[key, n[key]] = $4; c[key, n[key]] = $5; m[key, n[key]] = $6 }
  END {
    for (k = 1; k <= keys; k++) {
      key = order[k]
      for (i = 1; i <= n[key]; i++) { a[i] = w[key, i]; b[i] = c[key, i]; d[i] = m[key, i] }
      mw[key] = median(a, n[key]); mc[key] = median(b, n[key]); mm[key] = median(d, n[key])
    }
    for (k = 1; k <= keys; k++) {
      key = order[k]; split(key, f, " "); ref = f[1] " " f[2] " smbclient"
      rc = "-"; rm = "-"
      if ((ref in mc) && mc[ref] > 0) rc = sprintf("%.2f", mc[key] / mc[ref])
      if ((ref in mm) && mm[ref] > 0) rm = sprintf("%.2f", mm[key] / mm[ref])
      printf "%-4s %-5s %-10s %8.2f %8.2f %8d %10s %10s\n", f[1], f[2], f[3], mw[key], mc[key], mm[key], rc, rm
    }
  }' "$res" | sort -s -k1,1 -k2,2
exit $fail
