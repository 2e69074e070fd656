// The command line's local side: where downloaded bytes may go and what an
// upload may read. Names from a server only ever become files beneath an
// open directory handle; a local path the user named is treated as cp(1)
// treats its destination and is never replaced by something else
// (docs/design/security.md).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace smbkit::cli {

// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Closes now; the error of close(2) (a write-back failure) is returned.
  Result<void> close(const std::string& what);
  void reset();

 private:
  int fd_ = -1;
};

// Opens `name`, one path component, in the directory `dir_fd` without
// following a symlink anywhere: openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS) where the kernel has it, else openat(O_NOFOLLOW)
// (equivalent for one component). A name with '/' or equal to "." or ".."
// is refused here too, whatever the caller checked.
Result<UniqueFd> open_beneath(int dir_fd, const std::string& name, int flags, mode_t mode,
                              const std::string& shown);

// cp -r down: `name` as a directory in dir_fd, created if missing; an
// existing symlink or non-directory there is an error, not followed.
Result<UniqueFd> make_dir_beneath(int dir_fd, const std::string& name, const std::string& shown);

// Where a download's bytes go. Made in two steps: where (the constructors,
// which create nothing), then open() once the remote file is open.
class DownloadTarget {
 public:
  // Standard output ("-").
  static DownloadTarget standard_output();
  // get/cp LOCAL, as cp(1) treats its destination: a directory (or a link
  // to one) receives DIR/remote_name; a character or block device, FIFO or
  // socket is written straight into; a symlink is written through (its
  // target replaced, the link kept; a dangling link is an error); anything
  // else, or nothing, gets a part file beside it that is renamed over it.
  static Result<DownloadTarget> for_path(const std::string& path, const std::string& remote_name);
  // cp -r down: `name` (a name the server gave, already checked) in the
  // directory dir_fd. Nothing is followed; only a regular file is replaced.
  static Result<DownloadTarget> beneath(int dir_fd, const std::string& name, const std::string& shown);

  // Opens the part file (resume: continue the one there; else a fresh one,
  // whatever was at its name removed first, so a planted symlink or hard
  // link cannot redirect the download) or the device.
  Result<void> open(bool resume);
  int fd() const { return replace_ ? part_.get() : stream_fd(); }
  // A part file is written at each chunk's offset; a stream in order.
  bool positional() const { return replace_; }
  bool to_stdout() const { return stdout_; }
  // What messages call the destination, and the part file.
  const std::string& shown() const { return shown_; }
  std::string part_shown() const { return shown_ + kPartSuffix; }
  // The modification time (a FILETIME) commit() gives the part file.
  void set_mtime(uint64_t filetime) { mtime_ = filetime; }
  // Closes the file (its error is the write-back's) and, for a part file,
  // renames it over the target.
  Result<void> commit();
  // Closes the file keeping the part; its size, or an error.
  Result<uint64_t> close_keeping();
  // Closes the file and removes the part.
  void discard();

  static constexpr const char* kPartSuffix = ".smbkit-part";

 private:
  DownloadTarget() = default;
  int stream_fd() const { return stdout_ ? 1 : stream_.get(); }
  static Result<DownloadTarget> classify(const std::string& path, const std::string& remote_name, int depth);
  static Result<DownloadTarget> replacing(const std::string& path);
  // A target that replaces `name` in the directory `dir` (held open).
  static DownloadTarget replacing_in(UniqueFd dir, std::string name, std::string shown);

  bool stdout_ = false;
  bool replace_ = false;  // a part file renamed over name_ in dir_
  UniqueFd dir_;          // replace_: the directory holding the target
  std::string name_;      // replace_: the target's name in dir_
  UniqueFd part_;
  bool part_opened_ = false;  // open() made or took over the part file
  std::string device_;    // !replace_: the path of the device, FIFO or socket
  UniqueFd stream_;
  std::string shown_;
  uint64_t mtime_ = 0;  // 0: leave what the writes made
};

// put / cp up: opens a local file to upload. Without `follow` a symlink is
// refused (ELOOP, the message says so); what is opened must be a regular
// file (a FIFO is not waited on). `st` receives its fstat.
Result<UniqueFd> open_upload_source(int dir_fd, const std::string& name, bool follow, const std::string& shown,
                                    struct stat& st);

// The names in the directory dir_fd, without "." and "..", sorted.
Result<std::vector<std::string>> read_dir_names(int dir_fd, const std::string& shown);

// Removes dir_fd/name and, when it is a directory, everything in it, each
// entry relative to its directory's descriptor (openat/unlinkat), never
// following a symbolic link (a link is removed as itself) and never by a
// path from the root: a directory renamed or swapped for a link meanwhile
// leads nowhere outside, and depth is not bounded by PATH_MAX. Goes on
// after a failure; the first is the error, its context the path (shown
// and below it) that failed.
Result<void> remove_beneath(int dir_fd, const std::string& name, const std::string& shown);

// "a symbolic link", "a directory", ... for messages.
const char* file_kind(mode_t mode);

}  // namespace smbkit::cli
