#include "base/dumpable.h"

#include <sys/prctl.h>

#include <cstdlib>
#include <cstring>

namespace smbkit {

bool make_undumpable_unless_opted_out() {
  // The opt-out is for debugging (gdb, strace, core files) as the same user.
  const char* opt = std::getenv("SMBKIT_DUMPABLE");
  if (opt && std::strcmp(opt, "1") == 0) return false;
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
}

}  // namespace smbkit
