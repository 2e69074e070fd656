// cp -r: whole directory trees between the share and the local side.
#pragma once

#include <string>

#include "cli/context.h"

namespace smbkit::cli {

// Remote directory rdir -> local directory ldir (created). Every name the
// server lists is checked (client::entry_name_problem) and becomes a file
// or directory only beneath the open handle of its local parent, never
// through a symlink already there. A rejected name, or a local entry in
// the way (a symlink, a FIFO, a file where a directory goes), is reported
// and skipped; the rest is downloaded, and the result is an error with the
// counts.
Result<void> download_tree(Context& c, client::Tree& t, const std::string& rdir, const std::string& ldir);

// Local directory ldir -> remote directory rdir (created). Symlinks are
// skipped with a warning unless --follow, which follows them and skips
// one that leads back to a directory being copied (a loop).
Result<void> upload_tree(Context& c, client::Tree& t, const std::string& ldir, const std::string& rdir);

// "smbkit: warning: WHAT: WHY" on stderr, control characters escaped.
void warn(const std::string& what, const std::string& why);

}  // namespace smbkit::cli
