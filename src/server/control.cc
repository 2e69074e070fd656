#include "server/control.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace smbkit::server {

namespace {

// A request is one short line; an answer is bounded so a confused peer
// (or daemon) cannot make the other side hold unbounded memory.
constexpr size_t kMaxRequest = 256;
constexpr size_t kMaxAnswer = 64u << 20;
// How long one side waits for the other to send or take bytes.
constexpr int kIoTimeoutSeconds = 5;

Result<sockaddr_un> unix_address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) return sys_error(ENAMETOOLONG, "control socket " + path);
  std::memcpy(a.sun_path, path.data(), path.size());
  return a;
}

void set_timeouts(int fd) {
  timeval tv{};
  tv.tv_sec = kIoTimeoutSeconds;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until EOF or `max` bytes; false on an error or a timeout.
bool read_until_eof(int fd, std::string& out, size_t max) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (out.size() + static_cast<size_t>(n) > max) return false;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::string control_socket_path(const std::string& private_dir) {
  std::string p = private_dir;
  if (!p.empty() && p.back() != '/') p += '/';
  p += kControlSocketName;
  return p;
}

Result<std::unique_ptr<ControlSocket>> ControlSocket::start(const std::string& path, Handler handler) {
  SMBKIT_TRY(sockaddr_un addr, unix_address(path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_error(errno, "control socket");
  // Only a stale socket may be replaced: anything else of that name is
  // not ours, and a socket that answers is another daemon's.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      ::close(fd);
      return sys_error(EEXIST, "control socket " + path + ": exists and is not a socket");
    }
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (live) {
      ::close(fd);
      return sys_error(EADDRINUSE, "control socket " + path + ": another smbkitd answers on it");
    }
    ::unlink(path.c_str());
  }
  // The socket file is created 0600 (fchmod of a socket does not reach
  // the file; the umask does, and is restored at once).
  const mode_t old = ::umask(0177);
  int b = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int e = errno;
  ::umask(old);
  if (b < 0 || ::listen(fd, 4) < 0) {
    const int err = b < 0 ? e : errno;
    ::close(fd);
    return sys_error(err, "control socket " + path);
  }
  int stop = ::eventfd(0, EFD_CLOEXEC);
  if (stop < 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return sys_error(err, "eventfd");
  }
  std::unique_ptr<ControlSocket> c(new ControlSocket(path, fd, stop, std::move(handler)));
  c->thread_ = std::thread([raw = c.get()] { raw->run(); });
  return c;
}

ControlSocket::ControlSocket(std::string path, int listen_fd, int stop_fd, Handler handler)
    : path_(std::move(path)), listen_fd_(listen_fd), stop_fd_(stop_fd), handler_(std::move(handler)) {}

ControlSocket::~ControlSocket() {
  uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) SMBKIT_LOG(warn, "control socket: eventfd: {}", std::strerror(errno));
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(stop_fd_);
  ::unlink(path_.c_str());
}

void ControlSocket::run() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(p, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (p[1].revents & POLLIN)) return;
    if (!(p[0].revents & POLLIN)) continue;
    int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    serve_one(c);
    ::close(c);
  }
}

void ControlSocket::serve_one(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || (cred.uid != 0 && cred.uid != ::geteuid())) {
    SMBKIT_LOG(warn, "control socket: uid {} refused", cred.uid);
    write_all(fd, "error: not allowed\n");
    return;
  }
  set_timeouts(fd);
  std::string req;
  char buf[kMaxRequest];
  while (req.find('\n') == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    req.append(buf, static_cast<size_t>(n));
    if (req.size() > kMaxRequest) return;
  }
  if (size_t nl = req.find('\n'); nl != std::string::npos) req.resize(nl);
  write_all(fd, handler_(req));
}

Result<std::string> control_request(const std::string& path, std::string_view request) {
  SMBKIT_TRY(sockaddr_un addr, unix_address(path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_error(errno, "socket");
  set_timeouts(fd);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    const int e = errno;
    ::close(fd);
    return sys_error(e, "connect to " + path + " (is smbkitd running with this private dir?)");
  }
  std::string line(request);
  line += '\n';
  std::string answer;
  const bool ok = write_all(fd, line) && ::shutdown(fd, SHUT_WR) == 0 && read_until_eof(fd, answer, kMaxAnswer);
  const int e = errno;
  ::close(fd);
  if (!ok) return sys_error(e ? e : EIO, "reading the answer from " + path);
  return answer;
}

}  // namespace smbkit::server
