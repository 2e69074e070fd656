// `smbkit __complete WORD`, for the bash completion: the remote entries
// that complete WORD (an smb:// URL whose last component is being typed),
// one per line, each the whole word to put in its place: the text up to
// the last '/' as the user typed it, then the name ('%' as %25, so the
// URL parser reads it back), then '/' for a directory. WORD without a
// share lists the host's disk shares. Hidden from --help.
#pragma once

#include <string>

#include "base/result.h"
#include "cli/context.h"

namespace smbkit::cli {

Result<void> cmd_complete(Context& c, const std::string& word);

}  // namespace smbkit::cli
