#include "server/path.h"

#include <dirent.h>
#include <linux/openat2.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace smbkit::server {

namespace {

// MS-FSCC 2.1.5.2 (filename rules): characters never valid in a name
// component on the wire. '*' and '?' and the DOS wildcards are patterns,
// not names.
bool invalid_name_char(char c) {
  switch (c) {
    case '\0':
    case ':':
    case '*':
    case '?':
    case '"':
    case '<':
    case '>':
    case '|':
    case '/':
      return true;
    default:
      return static_cast<unsigned char>(c) < 0x20;
  }
}

}  // namespace

Result<std::string> normalize_name(std::string_view name) {
  // MS-FSCC 2.1.5.1: "file::$DATA" names the file's unnamed data stream,
  // the file itself; every other stream name is refused below.
  constexpr std::string_view kDataStream = "::$DATA";
  if (name.size() > kDataStream.size() &&
      strncasecmp(name.data() + name.size() - kDataStream.size(), kDataStream.data(), kDataStream.size()) == 0)
    name.remove_suffix(kDataStream.size());
  std::string out;
  if (name.empty()) return out;
  if (name.size() > kMaxNameBytes) return nt_error(STATUS_NAME_TOO_LONG, "name");
  if (name.front() == '\\') return nt_error(STATUS_OBJECT_NAME_INVALID, "absolute name");
  out.reserve(name.size());
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('\\', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view comp = name.substr(start, end - start);
    // A trailing '\' ("dir\") names the directory itself, as Windows takes it.
    if (comp.empty() && end == name.size() && start > 0) break;
    if (comp.empty() || comp == "." || comp == "..") return nt_error(STATUS_OBJECT_NAME_INVALID, "name component");
    if (comp.size() > NAME_MAX) return nt_error(STATUS_NAME_TOO_LONG, "name component");
    for (char c : comp)
      if (invalid_name_char(c)) return nt_error(STATUS_OBJECT_NAME_INVALID, "name character");
    if (!out.empty()) out.push_back('/');
    out.append(comp);
    start = end + 1;
  }
  return out;
}

std::pair<std::string, std::string> split_parent(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {std::string(), path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

UniqueFd::~UniqueFd() {
  if (fd >= 0) ::close(fd);
}

bool directory_is_empty(int dirfd) {
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* d = fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  bool empty = true;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") {
      empty = false;
      break;
    }
  }
  closedir(d);
  return empty;
}

namespace {

int openat2_beneath(int dir_fd, const std::string& path, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const char* p = path.empty() ? "." : path.c_str();
  // EAGAIN: a rename elsewhere raced the lookup (RESOLVE_BENEATH asks the
  // kernel to retry or fail rather than risk an escape); a few more tries.
  constexpr int kRetries = 8;
  for (int i = 0;; i++) {
    long fd = syscall(SYS_openat2, dir_fd, p, &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    if ((errno == EINTR || errno == EAGAIN) && i < kRetries) continue;
    return -errno;
  }
}

}  // namespace

int open_beneath(int root_fd, const std::string& path, int flags, mode_t mode) {
  if (path.size() < PATH_MAX) return openat2_beneath(root_fd, path, flags, mode);
  // A name the kernel takes in one call is under PATH_MAX: resolve the
  // longest leading directories that fit, then the rest beneath them, each
  // step still RESOLVE_BENEATH its own start (so a symlink further down
  // may not climb above the directory its part started from, which the
  // one-call lookup would allow inside the share: stricter, never looser).
  UniqueFd dir;  // the directory the next part starts from (root_fd first)
  int at = root_fd;
  std::string_view rest = path;
  while (rest.size() >= PATH_MAX) {
    const size_t cut = rest.rfind('/', PATH_MAX - 1);
    if (cut == std::string_view::npos || cut == 0) return -ENAMETOOLONG;
    const int fd = openat2_beneath(at, std::string(rest.substr(0, cut)), O_PATH | O_DIRECTORY, 0);
    if (fd < 0) return fd;
    if (dir.fd >= 0) ::close(dir.fd);
    dir.fd = at = fd;
    rest.remove_prefix(cut + 1);
  }
  return openat2_beneath(at, std::string(rest), flags, mode);
}

}  // namespace smbkit::server
