// The password for `smbkitd user add`: like smbpasswd, the first line of
// standard input when it is not a terminal (smbpasswd -s), else typed
// twice at the terminal with echo off.
#pragma once

#include "base/result.h"
#include "base/secret.h"

namespace smbkit::smbkitd {

Result<SecretString> read_new_password(int fd);

}  // namespace smbkit::smbkitd
