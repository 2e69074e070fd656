# Sourced by the bench scripts before they measure anything.
#
# /dev/null must be the null device. Deleted and then recreated by a shell
# redirection, it is a regular file on /dev's tmpfs: every
# `dd of=/dev/null` then writes its gigabytes into tmpfs, which costs the
# reader about a third of the CPU of a dd read through the mount and makes
# every read figure low (docs/benchmarks.md). Refuse to measure on such a
# machine.
if [ ! -c /dev/null ]; then
  echo "bench: /dev/null is not a character device ($(stat -c %F /dev/null 2>/dev/null || echo missing))," \
    "so dd of=/dev/null would write to a file; as root: rm -f /dev/null && mknod -m 666 /dev/null c 1 3" >&2
  exit 2
fi
