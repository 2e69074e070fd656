// smbkit-sendfloor: what sending a cached file over TCP loopback costs the
// sender, per way of sending, without SMB: the floor under a server's CPU
// per GiB read.
//
//   smbkit-sendfloor [--passes N] [--rounds N] [--modes copy,mmap,zerocopy,sendfile] FILE
//
// A forked reader on 127.0.0.1 drains the socket (recv into a 4 MiB
// buffer); the sender sends FILE `passes` times in frames of an 80-byte
// header (an SMB2 READ response's fixed part) and 1 MiB of the file:
//   copy      pread into a buffer, writev header + buffer (smbkitd's copy path)
//   mmap      writev header + the file's pages mapped (one copy fewer)
//   zerocopy  pread, then sendmsg(MSG_ZEROCOPY) from a ring of 16 buffers
//   sendfile  the header with MSG_MORE, then sendfile (smbkitd's zero-copy path)
// Modes alternate within each round. One line per mode and round: MB/s and
// the sender's CPU seconds (user + system, getrusage) per GiB. Exit 1 if the
// reader did not receive every byte.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kChunk = 1 << 20;
constexpr size_t kHeader = 80;
constexpr size_t kZeroCopyRing = 16;

double cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "smbkit-sendfloor: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// Sends all of v[0..n), moving past what each call took.
void send_all(int s, iovec* v, int n, int flags) {
  while (n > 0) {
    msghdr m{};
    m.msg_iov = v;
    m.msg_iovlen = static_cast<size_t>(n);
    ssize_t w = sendmsg(s, &m, flags);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {  // zero-copy notifications not yet reaped
        usleep(10);
        continue;
      }
      die("sendmsg");
    }
    auto left = static_cast<size_t>(w);
    while (n > 0 && left >= v->iov_len) {
      left -= v->iov_len;
      v++;
      n--;
    }
    if (n > 0) {
      v->iov_base = static_cast<char*>(v->iov_base) + left;
      v->iov_len -= left;
    }
  }
}

void reap_zerocopy(int s) {
  char control[256];
  for (;;) {
    msghdr m{};
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    if (recvmsg(s, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return;
  }
}

struct Run {
  double mb_per_s;
  double cpu_per_gib;
};

Run run(const std::string& mode, int fd, size_t size, int passes) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) || listen(ls, 1) ||
      getsockname(ls, reinterpret_cast<sockaddr*>(&a), &al))
    die("listen");
  const size_t expect = (size + (size + kChunk - 1) / kChunk * kHeader) * static_cast<size_t>(passes);
  pid_t child = fork();
  if (child == 0) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a)) _exit(2);
    std::vector<char> buf(4 << 20);
    size_t got = 0;
    ssize_t n;
    while ((n = read(c, buf.data(), buf.size())) > 0) got += static_cast<size_t>(n);
    _exit(got == expect ? 0 : 3);
  }
  int s = accept(ls, nullptr, nullptr);
  if (s < 0) die("accept");
  close(ls);
  char header[kHeader] = {};
  std::vector<char> buf(mode == "zerocopy" ? kChunk * kZeroCopyRing : kChunk);
  char* map = nullptr;
  if (mode == "mmap") {
    map = static_cast<char*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
    if (map == MAP_FAILED) die("mmap");
    if (madvise(map, size, MADV_POPULATE_READ)) die("madvise");
  }
  int pipe_fd[2] = {-1, -1};
  if (mode == "splice") {
    if (pipe2(pipe_fd, O_CLOEXEC)) die("pipe");
    // As large as an unprivileged process may make it (fs.pipe-max-size,
    // 1 MiB by default): one splice per frame each way.
    if (fcntl(pipe_fd[1], F_SETPIPE_SZ, static_cast<int>(kChunk)) < 0) die("F_SETPIPE_SZ");
  }
  if (mode == "zerocopy") {
    int on = 1;
    if (setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on)) die("SO_ZEROCOPY");
  }
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  size_t frame = 0;
  for (int p = 0; p < passes; p++) {
    for (size_t off = 0; off < size; off += kChunk, frame++) {
      size_t len = std::min(kChunk, size - off);
      if (mode == "copy" || mode == "zerocopy") {
        char* b = buf.data() + (mode == "zerocopy" ? (frame % kZeroCopyRing) * kChunk : 0);
        if (pread(fd, b, len, static_cast<off_t>(off)) != static_cast<ssize_t>(len)) die("pread");
        iovec v[2] = {{header, kHeader}, {b, len}};
        send_all(s, v, 2, mode == "zerocopy" ? MSG_ZEROCOPY : 0);
        if (mode == "zerocopy") reap_zerocopy(s);
      } else if (mode == "mmap") {
        iovec v[2] = {{header, kHeader}, {map + off, len}};
        send_all(s, v, 2, 0);
      } else if (mode == "splice") {
        iovec v[1] = {{header, kHeader}};
        send_all(s, v, 1, MSG_MORE);
        loff_t o = static_cast<loff_t>(off);
        for (size_t left = len; left > 0;) {
          ssize_t in = splice(fd, &o, pipe_fd[1], nullptr, left, SPLICE_F_MOVE);
          if (in <= 0) die("splice from the file");
          for (ssize_t out = 0; out < in;) {
            ssize_t w = splice(pipe_fd[0], nullptr, s, nullptr, static_cast<size_t>(in - out), SPLICE_F_MOVE | SPLICE_F_MORE);
            if (w <= 0) die("splice into the socket");
            out += w;
          }
          left -= static_cast<size_t>(in);
        }
      } else {
        iovec v[1] = {{header, kHeader}};
        send_all(s, v, 1, MSG_MORE);
        off_t o = static_cast<off_t>(off);
        for (size_t left = len; left > 0;) {
          ssize_t w = sendfile(s, fd, &o, left);
          if (w <= 0) die("sendfile");
          left -= static_cast<size_t>(w);
        }
      }
    }
  }
  double cpu = cpu_seconds() - c0;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  shutdown(s, SHUT_WR);
  int status = 0;
  waitpid(child, &status, 0);
  close(s);
  if (map) munmap(map, size);
  if (pipe_fd[0] >= 0) {
    close(pipe_fd[0]);
    close(pipe_fd[1]);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "smbkit-sendfloor: %s: the reader did not get every byte\n", mode.c_str());
    std::exit(1);
  }
  double gib = static_cast<double>(size) * passes / (1 << 30);
  return {static_cast<double>(size) * passes / secs / 1e6, cpu / gib};
}

}  // namespace

int main(int argc, char** argv) {
  int passes = 4, rounds = 3;
  std::vector<std::string> modes = {"copy", "mmap", "zerocopy", "sendfile", "splice"};
  const char* path = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--passes" && i + 1 < argc) passes = std::max(1, std::atoi(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--modes" && i + 1 < argc) {
      modes.clear();
      std::string m = argv[++i];
      for (size_t p = 0; p <= m.size();) {
        size_t q = m.find(',', p);
        if (q == std::string::npos) q = m.size();
        if (q > p) modes.push_back(m.substr(p, q - p));
        p = q + 1;
      }
    } else if (!path && a[0] != '-') path = argv[i];
    else {
      std::fprintf(stderr, "usage: smbkit-sendfloor [--passes N] [--rounds N] [--modes copy,mmap,zerocopy,sendfile] FILE\n");
      return 2;
    }
  }
  if (!path) {
    std::fprintf(stderr, "usage: smbkit-sendfloor [--passes N] [--rounds N] [--modes ...] FILE\n");
    return 2;
  }
  for (const auto& m : modes)
    if (m != "copy" && m != "mmap" && m != "zerocopy" && m != "sendfile" && m != "splice") {
      std::fprintf(stderr, "smbkit-sendfloor: unknown mode %s\n", m.c_str());
      return 2;
    }
  int fd = open(path, O_RDONLY);
  struct stat st{};
  if (fd < 0 || fstat(fd, &st) || st.st_size == 0) die(path);
  for (int r = 1; r <= rounds; r++)
    for (const auto& m : modes) {
      Run x = run(m, fd, static_cast<size_t>(st.st_size), passes);
      std::printf("round %d %-9s %6.0f MB/s  sender %.3f CPU s/GiB\n", r, m.c_str(), x.mb_per_s, x.cpu_per_gib);
      std::fflush(stdout);
    }
  return 0;
}
