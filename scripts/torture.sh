#!/usr/bin/env bash
# Samba's conformance suite (smbtorture, Debian samba-testsuite) against
# smbd and smbkitd with the same harness settings: for each group, the
# tests that pass, fail (failure or error) and are skipped on each server,
# as a Markdown table (docs/torture.md keeps the latest).
#
#   scripts/torture.sh [--servers "smbd smbkitd"] [--out FILE] [GROUP...]
#
# Default groups: the ones issue-level conformance is measured on. Each
# group is bounded (TORTURE_TIMEOUT seconds, default 300); a group that
# times out counts its unfinished tests as failures.
set -euo pipefail
cd "$(dirname "$0")/.."
servers="smbd smbkitd"
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --servers) servers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "usage: $0 [--servers LIST] [--out FILE] [GROUP...]" >&2; exit 2 ;;
    *) break ;;
  esac
done
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(smb2.connect smb2.read smb2.rw smb2.create smb2.dir smb2.compound smb2.credits
  smb2.session smb2.lock smb2.getinfo smb2.setinfo smb2.rename smb2.delete-on-close-perms smb2.sharemode smb2.acls)
timeout_s=${TORTURE_TIMEOUT:-300}
logdir=build/torture
mkdir -p "$logdir"
for s in $servers; do
  for g in "${groups[@]}"; do
    log=$logdir/$s.$g.log
    build/bin/smbkit-samba --server "$s" -- bash -c \
      "PASSWD=\$SMBKIT_PASSWORD timeout $timeout_s smbtorture //127.0.0.1/share -p \$SMBKIT_PORT -U smbkit \
       --option=torture:sharedelay=100000 $g" >"$log" 2>&1 || true
  done
done
# One row per group: passed/total per server (skips apart).
{
  printf '| group |'; for s in $servers; do printf ' %s |' "$s"; done; echo
  printf '| --- |'; for s in $servers; do printf ' --- |'; done; echo
  for g in "${groups[@]}"; do
    printf '| %s |' "$g"
    for s in $servers; do
      log=$logdir/$s.$g.log
      pass=$(grep -c '^success: ' "$log" || true)
      fail=$(grep -cE '^(failure|error): ' "$log" || true)
      skip=$(grep -c '^skip: ' "$log" || true)
      started=$(grep -c '^test: ' "$log" || true)
      # Tests started and never finished (a timeout or a crash) fail.
      unfinished=$((started - pass - fail - skip)); [ $unfinished -gt 0 ] || unfinished=0
      fail=$((fail + unfinished))
      printf ' %d/%d%s |' "$pass" $((pass + fail)) "$([ "$skip" -gt 0 ] && echo " ($skip skipped)")"
    done
    echo
  done
} >"${out:-/dev/stdout}"
[ -n "$out" ] && cat "$out" || true
