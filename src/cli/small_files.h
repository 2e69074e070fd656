// Files small enough for one READ or WRITE, each in one round trip: a
// compound of related requests on the file the CREATE opens (MS-SMB2
// 3.2.4.1.4), so a tree of small files costs a round trip per file (and
// many of them are in flight at once, cli/trees.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "client/client.h"

namespace smbkit::cli {

// Files up to this size (and the server's MaxRead/MaxWrite) go this way.
inline constexpr uint32_t kSmallFileMax = 1u << 20;
uint32_t small_file_limit(client::Tree& t);

struct SmallRead {
  Bytes data;
  uint64_t last_write_time = 0;  // FILETIME, from the CREATE response
};

// CREATE + READ (of up to small_file_limit bytes) + CLOSE. nullopt when
// the file is larger than one READ (it grew) or the frame could not be
// used (a reconnect): the caller takes the step-by-step path.
std::optional<Result<SmallRead>> get_small(client::Tree& t, const std::string& rpath);

// CREATE of a fresh part file + WRITE of data + SET_INFO
// FileBasicInformation with LastWriteTime mtime (when not 0) + CLOSE, then
// the part renamed over rpath: the target only ever names complete data.
// nullopt: the frame could not be used (the caller goes step by step).
std::optional<Result<void>> put_small(client::Tree& t, const std::string& rpath, ByteView data, uint64_t mtime);

// For a name known new (its directory made by this copy): CREATE of rpath
// itself (FILE_CREATE) + WRITE + SET_INFO + CLOSE in one frame, no part
// file and no rename. An incomplete file is removed; a name that turns out
// to exist goes put_small's way. nullopt as put_small.
std::optional<Result<void>> put_small_new(client::Tree& t, const std::string& rpath, ByteView data, uint64_t mtime);

}  // namespace smbkit::cli
