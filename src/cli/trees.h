// cp -r: whole directory trees between the share and the local side.
#pragma once

#include <string>

#include "cli/context.h"

namespace smbkit::cli {

// A tree copy keeps many files in flight on the one connection (a pool of
// workers, each waiting for one file): a file that fits one READ/WRITE is
// one compound round trip (cli/small_files.h), a larger one goes through
// the pipelined engine. Modification times are kept both ways. A file that
// fails (a name the server refuses, a local entry in the way, a read
// error) is reported with Context::file_failed and the rest go on; a
// summary (files, bytes, skipped, failed) ends the copy on stderr.
// `trees`: the share on each connection the files are spread over
// (Context::trees), the first for directories and listings.

// Remote directory rdir -> local directory ldir (created). Every name the
// server lists is checked (client::entry_name_problem) and becomes a file
// or directory only beneath the open handle of its local parent, never
// through a symlink already there. A rejected name, or a local entry in
// the way (a symlink, a FIFO, a file where a directory goes), is a failed
// file; the rest is downloaded.
Result<void> download_tree(Context& c, const std::vector<client::Tree*>& trees, const std::string& rdir, const std::string& ldir);

// Local directory ldir -> remote directory rdir (created). Symlinks are
// skipped with a warning unless --follow, which follows them and skips
// one that leads back to a directory being copied (a loop).
Result<void> upload_tree(Context& c, const std::vector<client::Tree*>& trees, const std::string& ldir, const std::string& rdir);

// rm -r: a file is deleted; a directory's entries are deleted (depth
// first), then the directory itself. A failure is reported per entry and
// the rest go on (a directory that keeps an entry stays).
Result<void> remove_tree(Context& c, const std::vector<client::Tree*>& trees, const std::string& rpath);

// mkdir -p: rpath and every missing parent; an existing directory is fine.
Result<void> make_dirs(client::Tree& t, const std::string& rpath);

// "smbkit: warning: WHAT: WHY" on stderr, control characters escaped.
void warn(const std::string& what, const std::string& why);

}  // namespace smbkit::cli
