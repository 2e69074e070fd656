#include "support/link_emulator.h"

#include "support/loopback.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <optional>

namespace smbkit::testing {
namespace {

using Clock = std::chrono::steady_clock;

void hard_close(int fd) {
  linger l{1, 0};  // RST instead of FIN: a cut, not a clean close
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  shutdown(fd, SHUT_RDWR);
}

// One direction: a reader thread stamps chunks with their delivery time, a
// writer thread releases them when due, paced by the rate limit.
//
// The data waits in kernel pipes: splice(2) moves it socket -> pipe ->
// socket without a copy through user space. A relay that copied each
// chunk in and out (and once more into its queue) cost about a sixth of
// two cores at 500 MB/s through a 50 ms link, CPU that a real network
// does not take from the client and the server (docs/benchmarks.md). If
// splice is not available the chunk is copied through a buffer instead.
class Pipe {
 public:
  Pipe(int from, int to, const LinkOptions& o, std::atomic<uint64_t>& total, std::atomic<bool>& stop,
       std::function<bool()> cut)
      : from_(from), to_(to), o_(o), total_(total), stop_(stop), cut_(std::move(cut)) {}
  ~Pipe() {
    for (auto& k : all_kpipes_) {
      close(k.r);
      close(k.w);
    }
  }

  void run() {
    // splice(2) into a socket the peer has reset raises SIGPIPE (it has no
    // MSG_NOSIGNAL): keep it from these threads (it would end the test
    // process that hosts the relay); the call then fails with EPIPE.
    sigset_t pipe_sig;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_sig, nullptr);
    std::thread w([this] { write_loop(); });  // inherits the mask
    read_loop();
    w.join();
  }

 private:
  struct KPipe {
    int r = -1, w = -1;
  };
  struct Chunk {
    Clock::time_point due;
    std::vector<char> data;  // the copy fallback
    KPipe kp;                // else the data waits in this pipe
    size_t len = 0;
  };
  static constexpr size_t kChunk = 1 << 20;
  // A chunk is what one splice found waiting (often 64-256 KiB), and it
  // holds its pipe until it is delivered, one delay later: at 800 MB/s
  // through 25 ms one way that is 20 MB, a few hundred chunks. With 64
  // pipes most of a 50 ms link's data took the copy fallback, which cost
  // the relay CPU a real link does not take (docs/benchmarks.md).
  static constexpr size_t kMaxPipes = 1024;

  // A free pipe (created on demand, at most 1 MiB each), or none if
  // splice cannot be used.
  std::optional<KPipe> get_kpipe() {
    if (!use_splice_) return std::nullopt;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!free_kpipes_.empty()) {
        KPipe k = free_kpipes_.back();
        free_kpipes_.pop_back();
        return k;
      }
    }
    {
      // Bounded (the fallback copies): each pipe is two descriptors.
      std::lock_guard<std::mutex> g(mu_);
      if (all_kpipes_.size() >= kMaxPipes) return std::nullopt;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kChunk));
    KPipe k{fds[0], fds[1]};
    std::lock_guard<std::mutex> g(mu_);
    all_kpipes_.push_back(k);
    return k;
  }
  void put_kpipe(KPipe k) {
    std::lock_guard<std::mutex> g(mu_);
    free_kpipes_.push_back(k);
  }

  void read_loop() {
    std::vector<char> buf(256 * 1024);
    for (;;) {
      pollfd p{from_, POLLIN, 0};
      int rc = poll(&p, 1, 100);
      if (stop_) break;
      if (rc <= 0) continue;
      Chunk c;
      ssize_t n = -1;
      if (auto k = get_kpipe()) {
        n = splice(from_, nullptr, k->w, nullptr, kChunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
          c.kp = *k;
        } else {
          put_kpipe(*k);
          if (n < 0 && errno == EAGAIN) continue;
          if (n < 0 && errno == EINVAL) {
            use_splice_ = false;  // not spliceable here: copy from now on
            continue;
          }
        }
      } else {
        n = recv(from_, buf.data(), buf.size(), 0);
        if (n > 0) c.data.assign(buf.begin(), buf.begin() + n);
      }
      if (n <= 0) break;
      c.len = static_cast<size_t>(n);
      uint64_t before = total_.fetch_add(static_cast<uint64_t>(n));
      if (o_.cut_after_bytes && before + static_cast<uint64_t>(n) >= o_.cut_after_bytes && cut_()) break;
      c.due = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(o_.one_way_delay_ms * 1000));
      std::lock_guard<std::mutex> g(mu_);
      q_.push_back(std::move(c));
      cv_.notify_one();
    }
    std::lock_guard<std::mutex> g(mu_);
    eof_ = true;
    cv_.notify_one();
  }

  // Writes the chunk to to_; false if the socket is gone.
  bool deliver(Chunk& c) {
    if (c.kp.r < 0) {
      size_t off = 0;
      while (off < c.data.size()) {
        ssize_t w = send(to_, c.data.data() + off, c.data.size() - off, MSG_NOSIGNAL);
        if (w <= 0) return false;
        off += static_cast<size_t>(w);
      }
      return true;
    }
    size_t left = c.len;
    bool ok = true;
    while (left > 0) {
      ssize_t w = splice(c.kp.r, nullptr, to_, nullptr, left, SPLICE_F_MOVE);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ok = false;
        break;
      }
      left -= static_cast<size_t>(w);
    }
    if (ok) put_kpipe(c.kp);  // else its data is stale: the pipe is closed at the end
    return ok;
  }

  void write_loop() {
    auto next_send = Clock::now();
    for (;;) {
      Chunk c;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return !q_.empty() || eof_; });
        if (q_.empty()) break;
        c = std::move(q_.front());
        q_.pop_front();
      }
      auto at = std::max(c.due, next_send);
      {
        // Interruptible: the emulator's destructor must not wait out a delay.
        std::unique_lock<std::mutex> lk(mu_);
        while (!stop_ && Clock::now() < at)
          cv_.wait_until(lk, std::min(at, Clock::now() + std::chrono::milliseconds(50)));
        if (stop_) break;
      }
      if (o_.rate_bytes_per_s > 0)
        next_send = std::max(next_send, c.due) +
                    std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(c.len) /
                                                                  o_.rate_bytes_per_s));
      if (!deliver(c)) {
        stop_writes_ = true;
        break;
      }
    }
    shutdown(to_, SHUT_WR);
  }

  int from_, to_;
  const LinkOptions& o_;
  std::atomic<uint64_t>& total_;
  std::atomic<bool>& stop_;
  std::function<bool()> cut_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> q_;
  bool eof_ = false, stop_writes_ = false;
  std::atomic<bool> use_splice_{true};
  std::vector<KPipe> free_kpipes_, all_kpipes_;  // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<LinkEmulator>> LinkEmulator::start(const LinkOptions& o) {
  std::unique_ptr<LinkEmulator> l(new LinkEmulator());
  l->o_ = o;
  SMBKIT_TRY(auto ln, listen_on_loopback());
  l->listen_fd_ = ln.fd;
  l->port_ = ln.port;
  l->acceptor_ = std::thread([p = l.get()] { p->accept_loop(); });
  return l;
}

LinkEmulator::~LinkEmulator() {
  stop_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  cut_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  close(listen_fd_);
}

void LinkEmulator::cut_all() {
  std::lock_guard<std::mutex> g(mu_);
  for (int fd : fds_) hard_close(fd);
}

void LinkEmulator::accept_loop() {
  for (;;) {
    pollfd p{listen_fd_, POLLIN, 0};
    int rc = poll(&p, 1, 100);
    if (stop_) return;
    if (rc <= 0) continue;
    int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    std::lock_guard<std::mutex> g(mu_);
    workers_.emplace_back([this, c] { serve(c); });
  }
}

void LinkEmulator::serve(int client_fd) {
  int server_fd = connect_to_loopback(o_.target_port);
  if (server_fd < 0) {
    hard_close(client_fd);
    close(client_fd);
    return;
  }
  int one = 1, sz = 16 << 20;
  for (int fd : {client_fd, server_fd}) {
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    fds_.push_back(client_fd);
    fds_.push_back(server_fd);
  }
  // The cut happens once: connections made afterwards (a client
  // reconnecting through the link) are relayed normally.
  auto cut = [this] {
    if (cut_done_.exchange(true)) return false;
    cut_all();
    return true;
  };
  Pipe up(client_fd, server_fd, o_, bytes_, stop_, cut);
  Pipe down(server_fd, client_fd, o_, bytes_, stop_, cut);
  std::thread t([&] { up.run(); });
  down.run();
  t.join();
  std::lock_guard<std::mutex> g(mu_);
  std::erase(fds_, client_fd);
  std::erase(fds_, server_fd);
  close(client_fd);
  close(server_fd);
}

}  // namespace smbkit::testing
