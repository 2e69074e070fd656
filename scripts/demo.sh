#!/usr/bin/env bash
# The main job: install, build, start smbkitd (our server) on loopback with
# a demo share and user, list the server's shares, then list the share,
# upload and download a file with a verified checksum, and print the
# throughput. SERVER=smbd runs the same against Samba's smbd.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
SIZE_MB=${SIZE_MB:-256}
SERVER=${SERVER:-smbkitd}
exec build/bin/smbkit-samba --server "$SERVER" -- bash -c '
set -euo pipefail
B=build/bin/smbkit
work=$(mktemp -d); trap "rm -rf $work" EXIT
echo "== $SMBKIT_SERVER on $SMBKIT_URL (user smbkit, password in SMBKIT_PASSWORD)"
echo "== smbkit ls smb://host/ (the shares, through srvsvc on IPC\$)"
$B ls "smb://smbkit@127.0.0.1:$SMBKIT_PORT/"
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
