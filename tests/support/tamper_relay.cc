#include "support/tamper_relay.h"

#include "support/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <condition_variable>
#include <map>

namespace smbkit::testing {
namespace {

using Clock = std::chrono::steady_clock;

void reset(int fd) {
  linger l{1, 0};  // RST, as a cut link
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  shutdown(fd, SHUT_RDWR);
}

bool send_all(int fd, const std::byte* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes; false on EOF, error or stop (polled every 100 ms).
bool recv_all(int fd, std::byte* p, size_t n, const std::atomic<bool>& stop) {
  while (n > 0) {
    pollfd pf{fd, POLLIN, 0};
    int rc = poll(&pf, 1, 100);
    if (stop) return false;
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

// One relayed connection: a reader per direction runs the hook, one
// writer thread sends what is due (forwarded frames at once, injected ones
// at their time) so that a delayed injection never holds up the readers.
class TamperRelay::Conn : public TamperContext {
 public:
  Conn(TamperRelay& relay, int index, int client_fd, int server_fd)
      : relay_(relay), index_(index), fd_{server_fd, client_fd} {}
  ~Conn() override {
    close(fd_[0]);
    close(fd_[1]);
  }

  int connection() const override { return index_; }

  void send(Toward to, Bytes frame, std::chrono::milliseconds delay) override {
    Bytes out(4 + frame.size());
    uint32_t n = static_cast<uint32_t>(frame.size());
    out[1] = std::byte(n >> 16);
    out[2] = std::byte(n >> 8);
    out[3] = std::byte(n);
    std::copy(frame.begin(), frame.end(), out.begin() + 4);
    std::lock_guard<std::mutex> g(mu_);
    q_.emplace(Due{Clock::now() + delay, seq_++}, Item{to, std::move(out)});
    cv_.notify_all();
  }

  void run() {
    std::thread w([this] { write_loop(); });
    std::thread up([this] { read_loop(Toward::server); });
    read_loop(Toward::client);
    up.join();
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
      cv_.notify_all();
    }
    w.join();
  }

  void cut() {
    bool was = cut_.exchange(true);
    if (was) return;
    reset(fd_[0]);
    reset(fd_[1]);
    std::lock_guard<std::mutex> g(mu_);
    cv_.notify_all();
  }

 private:
  int from_fd(Toward to) const { return to == Toward::server ? fd_[1] : fd_[0]; }
  int to_fd(Toward to) const { return to == Toward::server ? fd_[0] : fd_[1]; }

  void read_loop(Toward to) {
    int from = from_fd(to);
    for (;;) {
      std::byte len[4];
      if (!recv_all(from, len, 4, relay_.stop_)) break;
      size_t n = (size_t(uint8_t(len[1])) << 16) | (size_t(uint8_t(len[2])) << 8) | size_t(uint8_t(len[3]));
      Bytes frame(n);
      if (!recv_all(from, frame.data(), n, relay_.stop_)) break;
      (to == Toward::server ? relay_.to_server_ : relay_.to_client_)++;
      Verdict v = Verdict::forward;
      v = relay_.call_hook(to, frame, *this);
      if (v == Verdict::close) break;
      if (v == Verdict::forward) send(to, std::move(frame), {});
    }
    cut();
  }

  void write_loop() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      if (cut_ || (done_ && q_.empty())) return;
      if (q_.empty()) {
        cv_.wait(lk);
        continue;
      }
      auto it = q_.begin();
      if (it->first.at > Clock::now()) {
        cv_.wait_until(lk, std::min(it->first.at, Clock::now() + std::chrono::milliseconds(100)));
        continue;
      }
      Item item = std::move(it->second);
      q_.erase(it);
      lk.unlock();
      bool ok = send_all(to_fd(item.to), item.bytes.data(), item.bytes.size());
      lk.lock();
      if (!ok) {
        lk.unlock();
        cut();
        return;
      }
    }
  }

  struct Due {
    Clock::time_point at;
    uint64_t seq;
    bool operator<(const Due& o) const { return at != o.at ? at < o.at : seq < o.seq; }
  };
  struct Item {
    Toward to;
    Bytes bytes;
  };
  TamperRelay& relay_;
  int index_;
  int fd_[2];  // [0] the server's socket, [1] the client's
  std::atomic<bool> cut_{false};
  // Lock order: a leaf; nothing is called under it.
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Due, Item> q_;  // guarded by mu_
  uint64_t seq_ = 0;       // guarded by mu_
  bool done_ = false;      // guarded by mu_
};

Result<std::unique_ptr<TamperRelay>> TamperRelay::start(uint16_t target_port, TamperHook hook) {
  std::unique_ptr<TamperRelay> r(new TamperRelay());
  r->hook_ = std::move(hook);
  SMBKIT_TRY(auto l, listen_on_loopback());
  r->listen_fd_ = l.fd;
  r->port_ = l.port;
  uint16_t target = target_port;
  r->acceptor_ = std::thread([p = r.get(), target] {
    std::vector<std::thread> workers;
    for (;;) {
      pollfd pf{p->listen_fd_, POLLIN, 0};
      int rc = poll(&pf, 1, 100);
      if (p->stop_) break;
      if (rc <= 0) continue;
      int c = accept4(p->listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      int s = connect_to_loopback(target);
      if (s < 0) {
        reset(c);
        close(c);
        continue;
      }
      int on = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      auto conn = std::make_shared<Conn>(*p, p->accepted_++, c, s);
      {
        std::lock_guard<std::mutex> g(p->mu_);
        p->conns_.push_back(conn);
      }
      workers.emplace_back([conn] { conn->run(); });
    }
    {
      std::lock_guard<std::mutex> g(p->mu_);
      for (auto& c : p->conns_) c->cut();
    }
    for (auto& w : workers) w.join();
  });
  return r;
}

TamperRelay::~TamperRelay() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  close(listen_fd_);
}

void TamperRelay::set_hook(TamperHook hook) {
  TamperHook old;
  std::unique_lock<std::mutex> g(mu_);
  old = std::exchange(hook_, std::move(hook));
  idle_.wait(g, [&] { return active_ == 0; });
  g.unlock();
  // `old` (and what it captured) is destroyed here, outside the lock.
}

Verdict TamperRelay::call_hook(Toward to, Bytes& frame, TamperContext& ctx) {
  TamperHook h;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!hook_) return Verdict::forward;
    h = hook_;
    active_++;
  }
  Verdict v = h(to, frame, ctx);
  std::lock_guard<std::mutex> g(mu_);
  if (--active_ == 0) idle_.notify_all();
  return v;
}

namespace smb2 {

bool is_plain(const Bytes& f) { return f.size() >= kHeaderSize && load_le32(f.data()) == 0x424D53FE; }
bool is_sealed(const Bytes& f) { return f.size() >= 52 && load_le32(f.data()) == 0x424D53FD; }
bool is_response(const Bytes& f, size_t at) { return flags(f, at) & kFlagServerToRedir; }
uint16_t command(const Bytes& f, size_t at) { return load_le16(f.data() + at + kCommand); }
std::vector<size_t> message_offsets(const Bytes& f) {
  std::vector<size_t> out;
  for (size_t at = 0; at + kHeaderSize <= f.size();) {
    out.push_back(at);
    uint32_t next = load_le32(f.data() + at + kNextCommand);
    if (next == 0) break;
    at += next;
  }
  return out;
}
std::vector<uint16_t> chain_commands(const Bytes& f) {
  std::vector<uint16_t> out;
  for (size_t at : message_offsets(f)) out.push_back(command(f, at));
  return out;
}
uint32_t status(const Bytes& f, size_t at) { return load_le32(f.data() + at + kStatus); }
uint32_t flags(const Bytes& f, size_t at) { return load_le32(f.data() + at + kFlags); }
uint64_t message_id(const Bytes& f, size_t at) { return load_le64(f.data() + at + kMessageId); }
uint64_t session_id(const Bytes& f, size_t at) { return load_le64(f.data() + at + kSessionId); }
void set_status(Bytes& f, uint32_t v, size_t at) { store_le32(f.data() + at + kStatus, v); }
void set_flags(Bytes& f, uint32_t v, size_t at) { store_le32(f.data() + at + kFlags, v); }
void set_session_id(Bytes& f, uint64_t v, size_t at) { store_le64(f.data() + at + kSessionId, v); }

void strip_signature(Bytes& f, size_t at) {
  set_flags(f, flags(f, at) & ~kFlagSigned, at);
  std::fill(f.begin() + static_cast<long>(at + kSignature), f.begin() + static_cast<long>(at + kHeaderSize),
            std::byte{0});
}

Bytes interim_response(const Bytes& req, uint64_t async_id) {
  // MS-SMB2 2.2.1.1 async header + 2.2.2 ERROR response body.
  Bytes r(req.begin(), req.begin() + kHeaderSize);
  set_flags(r, (flags(r) | kFlagServerToRedir | kFlagAsync) & ~kFlagSigned);
  set_status(r, 0x00000103);  // STATUS_PENDING
  store_le16(r.data() + kCredit, 1);
  store_le32(r.data() + kNextCommand, 0);
  store_le64(r.data() + kAsyncId, async_id);
  std::fill(r.begin() + kSignature, r.end(), std::byte{0});
  Bytes body{std::byte{9}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0},
             std::byte{0}, std::byte{0}, std::byte{0}};
  r.insert(r.end(), body.begin(), body.end());
  return r;
}

}  // namespace smb2
}  // namespace smbkit::testing
