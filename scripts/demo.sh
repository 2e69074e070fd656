#!/usr/bin/env bash
# The main job: install, build, start a Samba on loopback with a demo share
# and user, then list the share, upload and download a file with a verified
# checksum, and print the throughput.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
SIZE_MB=${SIZE_MB:-256}
exec build/bin/smbkit-samba -- bash -c '
set -euo pipefail
B=build/bin/smbkit
work=$(mktemp -d); trap "rm -rf $work" EXIT
echo "== Samba on $SMBKIT_URL (user smbkit, password in SMBKIT_PASSWORD)"
head -c '"$SIZE_MB"'M /dev/urandom > "$work/demo.bin"
echo "== smbkit put ($(du -h "$work/demo.bin" | cut -f1))"
$B --stats put "$work/demo.bin" "$SMBKIT_URL/share/demo.bin"
echo "== smbkit ls -l $SMBKIT_URL/share"
$B ls -l "$SMBKIT_URL/share"
echo "== smbkit get"
$B --stats get "$SMBKIT_URL/share/demo.bin" "$work/back.bin"
a=$(sha256sum < "$work/demo.bin" | cut -d" " -f1); b=$(sha256sum < "$work/back.bin" | cut -d" " -f1)
echo "sha256 sent     $a"
echo "sha256 received $b"
[ "$a" = "$b" ] && echo "== verified: identical" || { echo "== MISMATCH"; exit 1; }
echo "== smbkit df"
$B df "$SMBKIT_URL/share"
'
