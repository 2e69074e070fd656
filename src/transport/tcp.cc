#include "transport/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace smbkit::transport {

TcpStream::~TcpStream() { close(); }

TcpStream& TcpStream::operator=(TcpStream&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void TcpStream::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TcpStream::shutdown() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

static int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1 << 30 ? 1 << 30 : static_cast<int>(left);
}

Result<void> TcpStream::wait(short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd_, events, 0};
    int ms = remaining_ms(deadline);
    int rc = ::poll(&p, 1, ms);
    if (rc > 0) return {};
    if (rc == 0) return nt_error(STATUS_IO_TIMEOUT, "no data from the server within the timeout");
    if (errno != EINTR) return sys_error(errno, "poll");
  }
}

Result<TcpStream> TcpStream::connect(const std::string& host, uint16_t port,
                                     std::chrono::milliseconds timeout) {
  std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string ps = std::to_string(port);
  int gai = getaddrinfo(host.c_str(), ps.c_str(), &hints, &res);
  if (gai != 0) return Error{STATUS_BAD_NETWORK_PATH, 0, where + ": " + gai_strerror(gai)};
  auto deadline = Clock::now() + timeout;
  Error last = sys_error(EHOSTUNREACH, where);
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last = sys_error(errno, where);
      continue;
    }
    TcpStream s(fd);
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno != EINPROGRESS) {
      last = sys_error(errno, where);
      continue;
    }
    if (rc != 0) {
      auto w = s.wait(POLLOUT, deadline);
      if (!w) {
        last = w.error().status == STATUS_IO_TIMEOUT ? sys_error(ETIMEDOUT, where) : w.error();
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err) {
        last = sys_error(err, where);
        continue;
      }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Large socket buffers let many MiB be in flight on long links.
    int sz = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    freeaddrinfo(res);
    return s;
  }
  freeaddrinfo(res);
  return last;
}

std::string TcpStream::peer_address() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (fd_ < 0 || ::getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  char buf[INET6_ADDRSTRLEN] = {};
  const void* a = ss.ss_family == AF_INET6 ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6&>(ss).sin6_addr)
                                           : static_cast<const void*>(&reinterpret_cast<sockaddr_in&>(ss).sin_addr);
  if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) return {};
  if (!::inet_ntop(ss.ss_family, a, buf, sizeof buf)) return {};
  return buf;
}

Result<void> TcpStream::write_all(const iovec* iov_in, int count, Clock::time_point deadline) {
  iovec iov[16];
  if (count > 16) return sys_error(EINVAL, "too many iovecs");
  int n = 0;
  for (int i = 0; i < count; i++)
    if (iov_in[i].iov_len) iov[n++] = iov_in[i];
  iovec* cur = iov;
  while (n > 0) {
    msghdr m{};
    m.msg_iov = cur;
    m.msg_iovlen = static_cast<size_t>(n);
    ssize_t w = ::sendmsg(fd_, &m, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        SMBKIT_CHECK(wait(POLLOUT, deadline));
        continue;
      }
      // The peer reset or closed the connection: the same clear status as
      // a reset seen by recv, whichever side noticed first.
      if (errno == EPIPE || errno == ECONNRESET)
        return nt_error(STATUS_CONNECTION_RESET, "connection reset by the server");
      return sys_error(errno, "send");
    }
    size_t left = static_cast<size_t>(w);
    while (n > 0 && left >= cur->iov_len) {
      left -= cur->iov_len;
      cur++;
      n--;
    }
    if (n > 0) {
      cur->iov_base = static_cast<char*>(cur->iov_base) + left;
      cur->iov_len -= left;
    }
  }
  return {};
}

Result<void> TcpStream::read_exact(void* buf, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    SMBKIT_TRY(size_t r, read_some(p, n, deadline));
    p += r;
    n -= r;
  }
  return {};
}

Result<size_t> TcpStream::read_some(void* buf, size_t n, Clock::time_point deadline) {
  for (;;) {
    ssize_t r = ::recv(fd_, buf, n, 0);
    if (r > 0) return static_cast<size_t>(r);
    if (r == 0) return nt_error(STATUS_CONNECTION_DISCONNECTED, "server closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      SMBKIT_CHECK(wait(POLLIN, deadline));
      continue;
    }
    if (errno == ECONNRESET) return nt_error(STATUS_CONNECTION_RESET, "connection reset by the server");
    return sys_error(errno, "recv");
  }
}

Result<size_t> TcpStream::splice_to(int pipe_wr, size_t n, Clock::time_point deadline) {
  size_t moved = 0;
  while (moved < n) {
    ssize_t r = ::splice(fd_, nullptr, pipe_wr, nullptr, n - moved, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r > 0) {
      moved += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return nt_error(STATUS_CONNECTION_DISCONNECTED, "server closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      // Nothing had arrived, or the pipe is full: a pipe with all its
      // slots taken is not writable.
      pollfd p{pipe_wr, POLLOUT, 0};
      if (::poll(&p, 1, 0) == 0) return moved;
      SMBKIT_CHECK(wait(POLLIN, deadline));
      continue;
    }
    if (errno == EINVAL) return moved;  // this socket does not splice
    if (errno == ECONNRESET) return nt_error(STATUS_CONNECTION_RESET, "connection reset by the server");
    return sys_error(errno, "splice");
  }
  return moved;
}

static Result<uint32_t> read_length(TcpStream& s, Clock::time_point deadline, uint32_t max_len) {
  std::byte h[4];
  SMBKIT_CHECK(s.read_exact(h, 4, deadline));
  // MS-SMB2 2.1: a zero byte, then a 24-bit big-endian length.
  if (h[0] != std::byte{0}) return protocol_error("bad Direct TCP header");
  uint32_t len = (static_cast<uint32_t>(h[1]) << 16) | (static_cast<uint32_t>(h[2]) << 8) |
                 static_cast<uint32_t>(h[3]);
  if (len > max_len) return protocol_error("frame larger than allowed");
  return len;
}

Result<Bytes> TcpStream::read_frame(Clock::time_point deadline, uint32_t max_len) {
  SMBKIT_TRY(uint32_t len, read_length(*this, deadline, max_len));
  Bytes b(len);
  SMBKIT_CHECK(read_exact(b.data(), len, deadline));
  return b;
}

Result<size_t> TcpStream::read_frame_into(std::shared_ptr<Bytes>& out, BufferPool& pool,
                                          Clock::time_point deadline, uint32_t max_len) {
  SMBKIT_TRY(uint32_t len, read_length(*this, deadline, max_len));
  out = pool.get(len);
  SMBKIT_CHECK(read_exact(out->data(), len, deadline));
  return size_t{len};
}

}  // namespace smbkit::transport
