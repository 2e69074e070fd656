// The users file: NAME:HEX32 lines, read only when its owner and mode
// are safe, written atomically.
#include "server/users.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "auth/ntlm_v2.h"
#include "base/ascii.h"
#include "base/secret.h"
#include "base/utf16.h"

namespace smbkit::server {
namespace {

constexpr size_t kMaxUserNameLength = 256;
constexpr mode_t kFileMode = 0600;
constexpr mode_t kDirMode = 0700;
constexpr mode_t kGroupOtherBits = 077;
// A users file is a few lines per user; anything this large is not one.
constexpr off_t kMaxUsersFileSize = 16 << 20;
constexpr char kHex[] = "0123456789abcdef";

Error users_error(const std::string& where, const std::string& msg) { return sys_error(EINVAL, where + ": " + msg); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = ascii_lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<auth::NtHash> parse_hash(std::string_view hex) {
  auth::NtHash h{};
  if (hex.size() != 2 * h.size()) return std::nullopt;
  for (size_t i = 0; i < h.size(); ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    h[i] = static_cast<std::byte>(hi * 16 + lo);
  }
  return h;
}

std::string users_path(const std::string& dir) { return dir + "/" + std::string(kUsersFileName); }

// Reads all of fd into `out` (which the caller wipes).
Result<void> read_all(int fd, std::string& out, const std::string& path) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      secure_wipe(buf, sizeof buf);
      return sys_error(e, "users file " + path);
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > static_cast<size_t>(kMaxUsersFileSize)) {
      secure_wipe(buf, sizeof buf);
      return users_error("users file " + path, "too large");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  secure_wipe(buf, sizeof buf);
  return {};
}

Result<void> write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sys_error(errno, what);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

Result<void> check_user_name(std::string_view name) {
  auto bad = [&](const char* why) { return sys_error(EINVAL, "user name '" + std::string(name) + "': " + why); };
  if (name.empty()) return sys_error(EINVAL, "empty user name");
  if (name.size() > kMaxUserNameLength) return bad("longer than 256 bytes");
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return bad("holds a control character");
    if (c == ':') return bad("holds ':'");
  }
  if (name[0] == '#') return bad("starts with '#'");
  if (name.front() == ' ' || name.back() == ' ') return bad("starts or ends with a space");
  if (!utf8_to_utf16le(name)) return bad("is not valid UTF-8");
  return {};
}

UserDb::~UserDb() { wipe(); }

UserDb& UserDb::operator=(const UserDb& o) {
  if (this != &o) {
    wipe();
    users_ = o.users_;
  }
  return *this;
}

UserDb& UserDb::operator=(UserDb&& o) noexcept {
  if (this != &o) {
    wipe();
    users_ = std::move(o.users_);
    o.users_.clear();
  }
  return *this;
}

void UserDb::wipe() noexcept {
  for (auto& e : users_) secure_wipe(e.hash.data(), e.hash.size());
  users_.clear();
}

Result<UserDb> UserDb::load(const std::string& private_dir) {
  std::string path = users_path(private_dir);
  // O_NOFOLLOW: a symbolic link is refused (ELOOP), not followed to a
  // file someone else chose. O_NONBLOCK: a FIFO planted there cannot
  // hang us before fstat says it is not a regular file.
  int raw = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (raw < 0) {
    if (errno == ENOENT) return UserDb{};
    if (errno == ELOOP) return users_error("users file " + path, "is a symbolic link: refused");
    return sys_error(errno, "users file " + path);
  }
  Fd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys_error(errno, "users file " + path);
  if (!S_ISREG(st.st_mode)) return users_error("users file " + path, "not a regular file: refused");
  if (st.st_uid != ::geteuid())
    return users_error("users file " + path, "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                                                 std::to_string(::geteuid()) + "): refused");
  if ((st.st_mode & kGroupOtherBits) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return users_error("users file " + path, std::string("mode ") + mode +
                                                 " gives group or others access: refused "
                                                 "(chmod 600 it)");
  }
  if (st.st_size > kMaxUsersFileSize) return users_error("users file " + path, "too large");

  std::string text;
  // Room for the whole file: growing the string would free buffers that
  // still hold hashes, out of reach of the wipe below.
  text.reserve(static_cast<size_t>(st.st_size) + 1);
  auto r = read_all(fd.get(), text, path);
  UserDb db;
  Result<void> result = r;
  if (r) {
    size_t pos = 0;
    int lineno = 0;
    while (pos < text.size() && result) {
      size_t nl = text.find('\n', pos);
      std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::string where = path + ":" + std::to_string(lineno);
      if (line.empty() || line[0] == '#') continue;
      size_t colon = line.rfind(':');
      if (colon == std::string_view::npos) {
        result = users_error(where, "expected NAME:HASH (32 hex digits)");
        break;
      }
      std::string_view name = line.substr(0, colon);
      auto hash = parse_hash(line.substr(colon + 1));
      if (!hash) {
        result = users_error(where, "the NT hash is not 32 hex digits");
        break;
      }
      if (auto ok = check_user_name(name); !ok) {
        result = users_error(where, ok.error().context);
      } else if (db.lookup(name)) {
        result = users_error(where, "user '" + std::string(name) + "' is listed twice");
      } else {
        db.users_.push_back(Entry{std::string(name), *hash});
      }
      secure_wipe(hash->data(), hash->size());
    }
  }
  wipe_string(text);
  if (!result) return result.take_error();
  return db;
}

Result<void> UserDb::save(const std::string& private_dir) const {
  if (::mkdir(private_dir.c_str(), kDirMode) != 0 && errno != EEXIST)
    return sys_error(errno, "private dir " + private_dir);
  struct stat st {};
  if (::stat(private_dir.c_str(), &st) != 0) return sys_error(errno, "private dir " + private_dir);
  if (!S_ISDIR(st.st_mode)) return sys_error(ENOTDIR, "private dir " + private_dir);

  std::string path = users_path(private_dir);
  std::string tmp_path = path + ".XXXXXX";
  // mkstemp creates the file 0600 and exclusively (O_EXCL): nobody else
  // can have it open or have put a link in its place.
  int raw = ::mkostemp(tmp_path.data(), O_CLOEXEC);
  if (raw < 0) return sys_error(errno, "users file " + path + ": temporary file");
  Fd fd(raw);
  std::string text = "# smbkitd users: NAME:NT-HASH. Managed by 'smbkitd user add/del'. Mode 0600.\n";
  for (const auto& e : users_) {
    text += e.name;
    text += ':';
    for (std::byte b : e.hash) {
      text += kHex[std::to_integer<unsigned>(b) >> 4];
      text += kHex[std::to_integer<unsigned>(b) & 0xf];
    }
    text += '\n';
  }
  auto fail = [&](Error e) -> Result<void> {
    ::unlink(tmp_path.c_str());
    return e;
  };
  auto w = write_all(fd.get(), text, "users file " + tmp_path);
  wipe_string(text);
  if (!w) return fail(w.take_error());
  if (::fchmod(fd.get(), kFileMode) != 0) return fail(sys_error(errno, "users file " + tmp_path));
  if (::fsync(fd.get()) != 0) return fail(sys_error(errno, "users file " + tmp_path));
  if (::close(fd.release()) != 0) return fail(sys_error(errno, "users file " + tmp_path));
  if (::rename(tmp_path.c_str(), path.c_str()) != 0) return fail(sys_error(errno, "users file " + path));
  // The rename is durable once the directory is synced.
  Fd dir(::open(private_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) (void)::fsync(dir.get());
  return {};
}

Result<void> UserDb::set_password(std::string_view name, std::string_view password) {
  SMBKIT_CHECK(check_user_name(name));
  if (password.empty()) return sys_error(EINVAL, "user '" + std::string(name) + "': empty password refused");
  SMBKIT_TRY(Bytes h, auth::ntowf_v1(password));
  auth::NtHash hash{};
  if (h.size() != hash.size()) {
    wipe_bytes(h);
    return sys_error(EINVAL, "NT hash of unexpected size");
  }
  std::copy(h.begin(), h.end(), hash.begin());
  wipe_bytes(h);
  auto it = std::find_if(users_.begin(), users_.end(), [&](const Entry& e) { return ascii_iequals(e.name, name); });
  if (it != users_.end()) {
    it->hash = hash;
  } else {
    users_.push_back(Entry{std::string(name), hash});
  }
  secure_wipe(hash.data(), hash.size());
  return {};
}

bool UserDb::remove(std::string_view name) {
  auto it = std::find_if(users_.begin(), users_.end(), [&](const Entry& e) { return ascii_iequals(e.name, name); });
  if (it == users_.end()) return false;
  // Shift the rest down by hand so that the slot left past the end is
  // wiped before it is released (erase would leave a hash copy there).
  for (auto next = it + 1; next != users_.end(); ++it, ++next) *it = std::move(*next);
  secure_wipe(users_.back().hash.data(), users_.back().hash.size());
  users_.pop_back();
  return true;
}

std::vector<std::string> UserDb::names() const {
  std::vector<std::string> out;
  out.reserve(users_.size());
  for (const auto& e : users_) out.push_back(e.name);
  return out;
}

std::optional<auth::NtHash> UserDb::lookup(std::string_view name) const {
  for (const auto& e : users_)
    if (ascii_iequals(e.name, name)) return e.hash;
  return std::nullopt;
}

}  // namespace smbkit::server
