// One file between the share and the local side: pipelined (and, for large
// files, striped) transfers through temporary names renamed at the end.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cli/context.h"
#include "cli/local_fs.h"

namespace smbkit::cli {

struct Stats {
  uint64_t bytes = 0;
  double seconds = 0;
};

// Files at least this large are striped over --connections connections.
inline constexpr uint64_t kStripeMin = 64ull << 20;

// "get NAME: 1.0 MiB in 0.10 s (10 MB/s)" with --stats or a progress bar;
// the file counts in the command's totals.
void print_stats(Context& c, const char* verb, const std::string& name, const Stats& s);

// Remote file -> dst (a part file renamed into place at the end, a device
// or FIFO written in order, or stdout). With get -c, continues dst's part.
Result<Stats> download_file(Context& c, client::Tree& t, const std::string& rpath, DownloadTarget& dst,
                            std::span<client::Tree* const> extra = {});

// The open regular file fd (st its fstat, `local` its name in messages) ->
// a remote path, through a remote part file renamed over it at the end.
// mtime (a FILETIME, 0: the server's own) is set on the part before it is
// closed (SET_INFO FileBasicInformation LastWriteTime, MS-FSCC 2.4.7).
Result<Stats> upload_file(Context& c, client::Tree& t, int fd, const struct stat& st, const std::string& local,
                          const std::string& rpath, std::span<client::Tree* const> extra = {},
                          uint64_t mtime = 0);

// Standard input (size unknown) -> a remote path, streamed through a
// window of WRITEs in flight into a part file renamed over it at the end.
Result<Stats> upload_stream(Context& c, client::Tree& t, int fd, const std::string& local, const std::string& rpath);

}  // namespace smbkit::cli
