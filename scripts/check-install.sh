#!/usr/bin/env bash
# `cmake --install` puts the program, the mount helper, the man page and
# the bash completion where they belong, and each works from there: the
# man page renders and names every command, the completion completes
# commands, options and the global options after a command.
# Usage: scripts/check-install.sh [BUILD_DIR]   (after a full build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
fail=0
for f in bin/smbkit sbin/mount.smbkit share/man/man1/smbkit.1 share/bash-completion/completions/smbkit; do
  [ -s "$prefix/$f" ] || { echo "not installed: $f"; fail=1; }
done
((fail == 0)) || exit 1
"$prefix/bin/smbkit" --version | grep -q '^smbkit [0-9]' || { echo "installed smbkit --version"; exit 1; }

page=$(MANWIDTH=100 man -l "$prefix/share/man/man1/smbkit.1" 2>/dev/null | col -b)
for w in "Exit status" "before or after it" "COMMANDS" "--json" "--credentials"; do
  grep -q -- "$w" <<<"$page" || { echo "man page lacks: $w"; fail=1; }
done
for cmd in ls stat cat get put cp rm mkdir rmdir mv df bench mount umount; do
  grep -qE "^ {3,}$cmd\$" <<<"$page" || { echo "man page lacks the command: $cmd"; fail=1; }
done

# The completion, as bash runs it (bash-completion's helpers loaded).
complete_words() {
  bash -c '
    source /usr/share/bash-completion/bash_completion
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _smbkit smbkit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix/share/bash-completion/completions/smbkit" "$@"
}
got=$(complete_words smbkit "")
for cmd in ls stat cat get put cp rm mkdir rmdir mv df bench help mount umount; do
  grep -qx "$cmd" <<<"$got" || { echo "completion lacks the command: $cmd"; fail=1; }
done
# Every command smbkit --help lists is completed.
for cmd in $("$prefix/bin/smbkit" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR>1 && NF {print $1}'); do
  grep -qx "$cmd" <<<"$got" || { echo "completion lacks $cmd (in --help)"; fail=1; }
done
got=$(complete_words smbkit ls --js)
[ "$got" = "--json" ] || { echo "ls --js completed to: $got"; fail=1; }
got=$(complete_words smbkit -v get smb://h/s/f --cred)
[ "$got" = "--credentials" ] || { echo "a global option after the command completed to: $got"; fail=1; }
got=$(complete_words smbkit --vers 3.1)
[ "$got" = "3.1.1" ] || { echo "--vers 3.1 completed to: $got"; fail=1; }
((fail == 0)) || exit 1
# Remote paths, against a server started for the purpose (smbkit-samba):
# the installed smbkit lists the directory being typed in, with the
# password from SMBKIT_PASSWORD; without one it completes nothing (one
# empty line from complete_words), at once
# (no prompt: standard input is a terminal nowhere here, so the bound on
# time is what shows it).
export -f complete_words
export prefix
remote=$(timeout 120 "$build/bin/smbkit-samba" --server smbkitd -- bash -c '
  set -e
  PATH=$prefix/bin:$PATH
  smbkit mkdir "$SMBKIT_URL/share/dir1"
  smbkit mkdir "$SMBKIT_URL/share/dir2"
  echo x >"$SMBKIT_SAMBA_DIR/f.txt"
  smbkit put "$SMBKIT_SAMBA_DIR/f.txt" "$SMBKIT_URL/share/dir1/my file.txt"
  smbkit put "$SMBKIT_SAMBA_DIR/f.txt" "$SMBKIT_URL/share/direct.txt"
  echo "dirs:$(complete_words smbkit ls "$SMBKIT_URL/share/dir" | tr "\n" "|")"
  echo "file:$(complete_words smbkit -q get "$SMBKIT_URL/share/dir1/m" | tr "\n" "|")"
  echo "escaped:$(complete_words smbkit -q get "$SMBKIT_URL/share/dir1/my\\ f" | tr "\n" "|")"
  echo "shares:$(complete_words smbkit ls "$SMBKIT_URL/sh" | tr "\n" "|")"
  start=$SECONDS
  echo "nopw:$(unset SMBKIT_PASSWORD; complete_words smbkit ls "$SMBKIT_URL/share/dir" | tr "\n" "|")"
  echo "nopw-seconds:$((SECONDS - start))"
  echo "port:$SMBKIT_PORT"
') || { echo "remote completion: the server run failed: $remote"; exit 1; }
port=$(sed -n "s/^port://p" <<<"$remote")
want_dirs="$port/share/dir1/|$port/share/dir2/|$port/share/direct.txt|"
[ "$(sed -n "s/^dirs://p" <<<"$remote")" = "$want_dirs" ] || { echo "remote completion of dir: $remote"; fail=1; }
[ "$(sed -n "s/^file://p" <<<"$remote")" = "$port/share/dir1/my\ file.txt|" ] ||
  { echo "remote completion of a name with a space: $remote"; fail=1; }
[ "$(sed -n "s/^escaped://p" <<<"$remote")" = "$port/share/dir1/my\ file.txt|" ] ||
  { echo "remote completion after a backslash-escaped space: $remote"; fail=1; }
[ "$(sed -n "s/^shares://p" <<<"$remote")" = "$port/share/|" ] || { echo "remote completion of a share: $remote"; fail=1; }
[ "$(sed -n "s/^nopw://p" <<<"$remote")" = "|" ] || { echo "remote completion without a password: $remote"; fail=1; }
(($(sed -n "s/^nopw-seconds://p" <<<"$remote") < 5)) || { echo "remote completion without a password waited"; fail=1; }

((fail == 0)) || exit 1
echo "install check: the program, mount.smbkit, smbkit.1 and the bash completion are installed and work"
