// Wildcards in the last component of a remote path (`*` and `?`, quoted
// from the shell), as smbclient's mget and rclone's filters take them:
// `smbkit get 'smb://h/s/dir/file_0*' DIR`, `rm`, `cp`, `ls`. The server's
// QUERY_DIRECTORY evaluates the pattern (one round trip for the whole
// directory); every name it returns is checked again against the pattern
// (MS-FSA 2.1.4.4, proto/wildcard.h) and as a path component before it is
// used: a server cannot widen a glob or name a path outside the directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "client/client.h"

namespace smbkit::cli {

// Whether the last '/'-separated component of `path` holds '*' or '?'.
bool has_wildcard(std::string_view path);

struct GlobMatch {
  std::string path;  // the match's path in the share ('/' separated)
  std::string name;  // its last component
  bool is_dir = false;
  uint64_t size = 0;
  uint64_t write_time = 0;  // FILETIME
};

// The entries of `path`'s directory whose names match its last component,
// sorted by name ("." and ".." never). No match is STATUS_NO_SUCH_FILE
// naming the pattern.
Result<std::vector<GlobMatch>> expand_remote_glob(client::Tree& t, const std::string& path);

}  // namespace smbkit::cli
