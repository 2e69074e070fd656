// The exit statuses of the smbkit command (README "Exit statuses"): what a
// script can tell apart without parsing the error line.
#pragma once

#include "base/result.h"

namespace smbkit::cli {

enum ExitStatus : int {
  kExitOk = 0,
  kExitError = 1,       // any failure not named below
  kExitUsage = 2,       // bad option or argument (before anything is sent)
  kExitPartial = 3,     // a tree copy where some files failed
  kExitAuth = 4,        // authentication failed, or a guest session refused
  kExitNotFound = 5,    // no such file, directory or share (remote or local)
  kExitConnection = 6,  // no connection: refused, unreachable, timed out, reset, name not resolved
};

// The status a command that failed with `e` exits with.
int exit_status_for(const Error& e);

// The table above as text, for `smbkit --help` and the man page.
const char* exit_status_help();

}  // namespace smbkit::cli
