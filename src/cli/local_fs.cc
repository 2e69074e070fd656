#include "cli/local_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "client/names.h"
#include "proto/types.h"

namespace smbkit::cli {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<void> UniqueFd::close(const std::string& what) {
  int fd = std::exchange(fd_, -1);
  // close(2) is not retried on EINTR: on Linux the descriptor is gone.
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) return sys_error(errno, what);
  return {};
}

const char* file_kind(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFLNK: return "a symbolic link";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    default: return "a special file";
  }
}

namespace {

Error open_error(int e, const std::string& shown) {
  if (e == ELOOP || e == EXDEV) return sys_error(e, shown + " is a symbolic link, not followed");
  return sys_error(e, shown);
}

Result<void> clear_nonblock(int fd, const std::string& shown) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) return sys_error(errno, shown);
  return {};
}

// Whatever the callers checked: one component, or nothing is done.
Result<void> single_component(const std::string& name, const std::string& shown) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    return sys_error(EINVAL, shown + ": not a single file name");
  return {};
}

}  // namespace

Result<UniqueFd> open_beneath(int dir_fd, const std::string& name, int flags, mode_t mode,
                              const std::string& shown) {
  SMBKIT_CHECK(single_component(name, shown));
  flags |= O_CLOEXEC;
  // Kernels before 5.6 (or a seccomp filter) lack openat2: remembered so
  // that each open makes one system call.
  static std::atomic<bool> no_openat2{false};
  if (!no_openat2.load(std::memory_order_relaxed)) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, dir_fd, name.c_str(), &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    if (errno != ENOSYS && errno != EPERM) return open_error(errno, shown);
    no_openat2.store(true, std::memory_order_relaxed);
  }
  // One component and O_NOFOLLOW: nothing to resolve, so nothing to escape.
  int fd = ::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW, mode);
  if (fd < 0) return open_error(errno, shown);
  return UniqueFd(fd);
}

Result<UniqueFd> make_dir_beneath(int dir_fd, const std::string& name, const std::string& shown) {
  SMBKIT_CHECK(single_component(name, shown));  // before mkdirat, which would resolve a path
  if (::mkdirat(dir_fd, name.c_str(), 0777) != 0 && errno != EEXIST) return sys_error(errno, shown);
  auto d = open_beneath(dir_fd, name, O_RDONLY | O_DIRECTORY, 0, shown);
  if (!d && d.error().sys_errno == ENOTDIR) return sys_error(ENOTDIR, shown + " exists and is not a directory");
  return d;
}

DownloadTarget DownloadTarget::standard_output() {
  DownloadTarget t;
  t.stdout_ = true;
  t.shown_ = "stdout";
  return t;
}

Result<DownloadTarget> DownloadTarget::for_path(const std::string& path, const std::string& remote_name) {
  return classify(path, remote_name, 0);
}

Result<DownloadTarget> DownloadTarget::classify(const std::string& path, const std::string& remote_name, int depth) {
  if (path.empty()) return sys_error(ENOENT, "(empty local path)");
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) {
    if (errno != ENOENT) return sys_error(errno, path);
    return replacing(path);
  }
  if (S_ISLNK(lst.st_mode)) {
    // Written through, as cp does: the link stays, its target changes.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      return sys_error(errno, path + ": not writing through a dangling symbolic link");
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) return sys_error(errno, path);
    std::string resolved(real);
    std::free(real);
    return classify(resolved, remote_name, depth);
  }
  if (S_ISDIR(lst.st_mode)) {
    if (depth > 0) return sys_error(EISDIR, path + " is a directory, not replaced");
    if (const char* why = client::entry_name_problem(remote_name))
      return sys_error(EINVAL, path + ": cannot name a file after the remote '" +
                                   client::escape_for_display(remote_name) + "' (" + why + ")");
    return classify(path + (path.back() == '/' ? "" : "/") + remote_name, remote_name, depth + 1);
  }
  if (S_ISREG(lst.st_mode)) return replacing(path);
  // A device, FIFO or socket: cp writes into it and so do we. Replacing it
  // (as root, /dev/null) with a regular file would break the system.
  DownloadTarget t;
  t.device_ = path;
  t.shown_ = path;
  return t;
}

Result<DownloadTarget> DownloadTarget::replacing(const std::string& path) {
  auto pos = path.find_last_of('/');
  std::string dir = pos == std::string::npos ? "." : pos == 0 ? "/" : path.substr(0, pos);
  std::string base = pos == std::string::npos ? path : path.substr(pos + 1);
  if (base.empty() || base == "." || base == "..") return sys_error(ENOENT, path);
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, dir);
  return replacing_in(UniqueFd(fd), base, path);
}

DownloadTarget DownloadTarget::replacing_in(UniqueFd dir, std::string name, std::string shown) {
  DownloadTarget t;
  t.replace_ = true;
  t.dir_ = std::move(dir);
  t.name_ = std::move(name);
  t.shown_ = std::move(shown);
  return t;
}

Result<DownloadTarget> DownloadTarget::beneath(int dir_fd, const std::string& name, const std::string& shown) {
  if (const char* why = client::entry_name_problem(name))
    return sys_error(EINVAL, shown + ": not a file name (" + std::string(why) + ")");
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode))
      return sys_error(EEXIST, shown + " exists and is " + file_kind(st.st_mode) + ", not replaced");
  } else if (errno != ENOENT) {
    return sys_error(errno, shown);
  }
  int fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return sys_error(errno, shown);
  return replacing_in(UniqueFd(fd), name, shown);
}

Result<void> DownloadTarget::open(bool resume) {
  if (stdout_) return {};
  if (!replace_) {
    if (resume) return sys_error(EINVAL, shown_ + " is not a regular file: nothing to continue (-c)");
    // No O_CREAT, no O_TRUNC: the node stays what it is. A FIFO's open
    // waits for a reader, as cp's does.
    int fd = ::open(device_.c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      struct stat st {};
      if (errno == ENXIO && ::lstat(device_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
        return sys_error(ENXIO, shown_ + " is a socket, not replaced");
      return open_error(errno, shown_);
    }
    stream_ = UniqueFd(fd);
    struct stat st {};
    if (fstat(fd, &st) != 0) return sys_error(errno, shown_);
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
      return sys_error(EAGAIN, shown_ + " changed while it was opened");
    return {};
  }
  const std::string part = name_ + kPartSuffix;
  if (!resume) {
    // A fresh part: whatever has the name goes first and O_EXCL makes sure
    // what we write to is a new inode. O_NOFOLLOW alone would still write
    // into a hard link planted at that name.
    if (::unlinkat(dir_.get(), part.c_str(), 0) != 0 && errno != ENOENT) return sys_error(errno, part_shown());
    SMBKIT_TRY(part_, open_beneath(dir_.get(), part, O_RDWR | O_CREAT | O_EXCL, 0644, part_shown()));
    part_opened_ = true;
    return {};
  }
  // get -c continues the part only if it is a plain file of its own.
  SMBKIT_TRY(part_, open_beneath(dir_.get(), part, O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY, 0644, part_shown()));
  struct stat st {};
  if (fstat(part_.get(), &st) != 0) return sys_error(errno, part_shown());
  if (!S_ISREG(st.st_mode)) {
    part_.reset();
    return sys_error(EINVAL, part_shown() + " is " + file_kind(st.st_mode) + ", not a partial download");
  }
  if (st.st_nlink != 1) {
    part_.reset();
    return sys_error(EMLINK, part_shown() + " has other hard links, not continued");
  }
  part_opened_ = true;
  return clear_nonblock(part_.get(), part_shown());
}

Result<void> DownloadTarget::commit() {
  if (stdout_) return {};
  if (!replace_) return stream_.close(shown_);
  const std::string part = name_ + kPartSuffix;
  if (mtime_ != 0) {
    // The server's LastWriteTime; the access time is left as it is.
    timespec times[2] = {{0, UTIME_OMIT}, proto::filetime_to_timespec(mtime_)};
    if (::futimens(part_.get(), times) != 0) {
      int e = errno;
      part_.reset();
      (void)::unlinkat(dir_.get(), part.c_str(), 0);
      part_opened_ = false;
      return sys_error(e, shown_ + ": setting the modification time");
    }
  }
  // No fsync: like cp, durability is the file system's business; the
  // rename only ever exposes a complete file.
  auto closed = part_.close(part_shown());
  if (closed && ::renameat(dir_.get(), part.c_str(), dir_.get(), name_.c_str()) != 0)
    closed = sys_error(errno, shown_);
  if (!closed) (void)::unlinkat(dir_.get(), part.c_str(), 0);
  part_opened_ = false;
  return closed;
}

Result<uint64_t> DownloadTarget::close_keeping() {
  if (!replace_) return sys_error(EINVAL, shown_ + ": no part file");
  struct stat st {};
  if (fstat(part_.get(), &st) != 0) return sys_error(errno, part_shown());
  SMBKIT_CHECK(part_.close(part_shown()));
  return static_cast<uint64_t>(st.st_size);  // part_opened_ stays: discard() may still remove it
}

void DownloadTarget::discard() {
  if (stdout_) return;
  if (!replace_) {
    stream_.reset();
    return;
  }
  part_.reset();
  if (part_opened_) (void)::unlinkat(dir_.get(), (name_ + kPartSuffix).c_str(), 0);
  part_opened_ = false;
}

Result<UniqueFd> open_upload_source(int dir_fd, const std::string& name, bool follow, const std::string& shown,
                                    struct stat& st) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it
  // is refused below anyway.
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ELOOP && !follow)
      return sys_error(ELOOP, shown + " is a symbolic link, not followed (--follow uploads what it points to)");
    return sys_error(errno, shown);
  }
  UniqueFd f(fd);
  if (fstat(fd, &st) != 0) return sys_error(errno, shown);
  if (S_ISDIR(st.st_mode)) return sys_error(EISDIR, shown);
  if (!S_ISREG(st.st_mode))
    return sys_error(EINVAL, shown + " is " + file_kind(st.st_mode) + ", not a regular file");
  SMBKIT_CHECK(clear_nonblock(fd, shown));
  return f;
}

Result<std::vector<std::string>> read_dir_names(int dir_fd, const std::string& shown) {
  // A descriptor of its own: fdopendir takes it over.
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, shown);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    int e = errno;
    ::close(fd);
    return sys_error(e, shown);
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
    errno = 0;
  }
  int e = errno;
  ::closedir(d);
  if (e != 0) return sys_error(e, shown);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// Directories deeper than this are not descended into (each level holds a
// descriptor): the removal fails there, named.
constexpr size_t kMaxRemoveDepth = 512;

Result<void> remove_at(int dir_fd, const std::string& name, const std::string& shown, size_t depth) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return sys_error(errno, shown);
  // A file swapped for a directory meanwhile fails here (EISDIR); a
  // directory swapped for a link fails the O_NOFOLLOW open below.
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0) return sys_error(errno, shown);
    return {};
  }
  if (depth >= kMaxRemoveDepth) return sys_error(ELOOP, fmt::format("{}: more than {} levels deep", shown, depth));
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, shown);
  UniqueFd dir(fd);
  Result<void> first;
  {
    auto names = read_dir_names(dir.get(), shown);
    if (!names) return names.take_error();
    for (const auto& n : *names) {
      auto r = remove_at(dir.get(), n, fmt::format("{}/{}", shown, n), depth + 1);
      if (!r && first) first = r.take_error();
    }
  }
  if (!first) return first;
  if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0) return sys_error(errno, shown);
  return {};
}

}  // namespace

Result<void> remove_beneath(int dir_fd, const std::string& name, const std::string& shown) {
  return remove_at(dir_fd, name, shown, 0);
}

}  // namespace smbkit::cli
