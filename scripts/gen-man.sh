#!/usr/bin/env bash
# Writes the smbkit(1) man page from the program's own help: help2man
# reads `smbkit --help` and `--version`; each command's `smbkit help CMD`
# becomes a subsection of COMMANDS, so the page says what --help says.
# Usage: gen-man.sh SMBKIT_BINARY OUTPUT
set -euo pipefail
bin=$1 out=$2
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
{
  echo "[COMMANDS]"
  echo "Each command takes the OPTIONS above before or after it (smbkit ls URL -v)."
  # Every command --help lists; mount and umount have help of their own.
  cmds=$("$bin" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR>1 && NF {print $1}' | grep -vx 'mount\|umount')
  for cmd in $cmds; do
    echo ".SS $cmd"
    echo ".nf"
    # The command's own help, without the global options and exit statuses
    # every command's help repeats. Backslashes and leading dots are roff
    # syntax: escape them.
    "$bin" help "$cmd" | sed -e '/^GLOBAL OPTIONS/,$d' -e 's/\\/\\e/g' -e 's/^\./\\\&./'
    echo ".fi"
  done
  for cmd in mount umount; do
    echo ".SS $cmd"
    echo ".nf"
    "$bin" "$cmd" --help 2>&1 | sed -e 's/\\/\\e/g' -e 's/^\./\\\&./'
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "mount.cifs(8), smbclient(1), smbkitd(8)"
} >"$inc"
help2man --no-info --name="a fast SMB2/SMB3 client" --section=1 --include="$inc" --output="$out" "$bin"
