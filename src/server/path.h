// Client names to paths under a share root, and the only ways the file
// layer reaches the disk by name: openat2(2) beneath the share's root_fd
// with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, so neither "..", an
// absolute name nor a symlink on disk leads out of the share (the kernel
// refuses with EXDEV). Names are case-sensitive, as the disk is.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace smbkit::server {

// A client's name (UTF-8 from the wire, '\' separators, "" = the share
// root) as a relative path with '/' separators ("" for the root). Refused
// with STATUS_OBJECT_NAME_INVALID: NUL, ':' (named streams are not
// served), '/', wildcards and control characters (MS-FSCC 2.1.5.2), "."
// and ".." components, a leading '\' (an absolute name: SMB2 names are
// relative to the share) and empty components. STATUS_NAME_TOO_LONG past
// kMaxNameBytes or a component past NAME_MAX. A trailing '\' is dropped, and
// so is a trailing "::$DATA" (the unnamed data stream is the file).
Result<std::string> normalize_name(std::string_view name);

// The longest name served: Windows' 32767-character path limit, counted in
// UTF-8 bytes. Longer than PATH_MAX is resolved a part at a time
// (open_beneath).
inline constexpr size_t kMaxNameBytes = 32767;

// Splits "a/b/c" into ("a/b", "c"); "c" into ("", "c").
std::pair<std::string, std::string> split_parent(const std::string& path);

// Whether the directory open as `dirfd` holds nothing but "." and "..";
// false when it cannot be read.
bool directory_is_empty(int dirfd);

// An fd closed at the end of a scope.
struct UniqueFd {
  int fd = -1;
  explicit UniqueFd(int f = -1) : fd(f) {}
  ~UniqueFd();
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// openat2(root_fd, path or ".", flags, mode) beneath root_fd. Returns the
// fd or -errno. A path of PATH_MAX bytes or more is resolved a part at a
// time (the longest leading directories under PATH_MAX, then the rest
// beneath them), every step RESOLVE_BENEATH its own start.
int open_beneath(int root_fd, const std::string& path, int flags, mode_t mode = 0);

}  // namespace smbkit::server
