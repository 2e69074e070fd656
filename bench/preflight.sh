# Sourced by the bench scripts before they measure anything.
#
# /dev/null must be the null device. On one of these machines it was once
# a regular file on /dev's tmpfs (deleted, then recreated by a shell
# redirection): every `dd of=/dev/null` then wrote its gigabytes into
# tmpfs, which cost the reader about a third of the CPU of a dd read
# through the mount and made every read figure low (docs/benchmarks.md,
# session 7). Refuse to measure on such a machine.
if [ ! -c /dev/null ]; then
  echo "bench: /dev/null is not a character device ($(stat -c %F /dev/null 2>/dev/null || echo missing))," \
    "so dd of=/dev/null would write to a file; as root: rm -f /dev/null && mknod -m 666 /dev/null c 1 3" >&2
  exit 2
fi
