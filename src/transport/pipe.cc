#include "transport/pipe.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace smbkit::transport {

Result<Pipe> Pipe::create(size_t capacity) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return sys_error(errno, "pipe2");
  Pipe p;
  p.rd_ = fds[0];
  p.wr_ = fds[1];
  if (capacity > 0) {
    int got = ::fcntl(p.wr_, F_SETPIPE_SZ, static_cast<int>(capacity));
    if (got < 0) return sys_error(errno, "F_SETPIPE_SZ");
    if (static_cast<size_t>(got) < capacity) return sys_error(ENOSPC, "F_SETPIPE_SZ gave less than asked");
  }
  return p;
}

void Pipe::close() {
  if (rd_ >= 0) ::close(rd_);
  if (wr_ >= 0) ::close(wr_);
  rd_ = wr_ = -1;
}

Pipe::~Pipe() { close(); }

Pipe& Pipe::operator=(Pipe&& o) noexcept {
  if (this != &o) {
    close();
    rd_ = o.rd_;
    wr_ = o.wr_;
    o.rd_ = o.wr_ = -1;
  }
  return *this;
}

Result<size_t> Pipe::buffered() const {
  int n = 0;
  if (::ioctl(rd_, FIONREAD, &n) != 0) return sys_error(errno, "FIONREAD on a pipe");
  return static_cast<size_t>(n);
}

Result<void> Pipe::read_exact(void* dst, size_t n) const {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t r = ::read(rd_, p, n);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else {
      return sys_error(r == 0 || errno == EAGAIN ? EIO : errno, "pipe holds fewer bytes than expected");
    }
  }
  return {};
}

void Pipe::discard() const {
  char sink[16384];
  for (;;) {
    ssize_t r = ::read(rd_, sink, sizeof sink);
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    return;
  }
}

}  // namespace smbkit::transport
