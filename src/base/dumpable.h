// Keeping other processes of the same user out of ours.
#pragma once

namespace smbkit {

// Unless the environment has SMBKIT_DUMPABLE=1, marks the process not
// dumpable (prctl PR_SET_DUMPABLE 0): no core file, no ptrace attach and
// no /proc/PID/mem, environ or fd from processes of the same uid without
// CAP_SYS_PTRACE, because this process holds a password and session keys.
// /proc/PID/* then belongs to root. Inherited across fork (the mount
// daemon), reset by execve. Returns whether the process is now not dumpable.
bool make_undumpable_unless_opted_out();

}  // namespace smbkit
