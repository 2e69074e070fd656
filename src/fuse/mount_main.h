// `smbkit mount` and `smbkit umount`: entered from main() before the CLI11
// parser (argv[1] is "mount" or "umount").
#pragma once

#include <string>

namespace smbkit::fuse {

// smbkit mount //host[:port]/share[/path] MOUNTPOINT [-o OPTIONS] [-f] [-v]
// Returns the process exit status. Without -f the command returns once the
// session, the tree connect and the kernel mount have succeeded (a daemon
// keeps serving); any failure before that is reported here, one line, and
// nothing stays mounted.
int run_mount(int argc, char** argv);

// smbkit umount [-z] MOUNTPOINT: syncfs, then fusermount3 -u (umount2 as a
// fallback for root).
int run_umount(int argc, char** argv);

// Whether path (absolute, resolved) is the mount point of an smbkit mount
// according to /proc/self/mountinfo.
bool is_smbkit_mount(const std::string& path);

}  // namespace smbkit::fuse
