#include "server/loop.h"

#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>

#include "base/log.h"
#include "proto/types.h"
#include "server/conn.h"

namespace smbkit::server {

namespace {

constexpr unsigned kRingEntries = 256;
// Bytes read from a socket at once while between frames; a frame larger
// than what is left is read straight into its own buffer.
constexpr size_t kStageSize = 64 * 1024;
// The largest frame accepted before a session is authenticated: NEGOTIATE
// and SESSION_SETUP are a few KiB.
constexpr size_t kMaxUnauthenticatedFrame = 64 * 1024;
// Answers queued for one connection beyond which it is not read from
// until the socket drains (the client is not reading its answers).
constexpr size_t kMaxQueuedBytes = 64 << 20;
constexpr size_t kMaxIov = 64;

// The socket's peer runs on this host: a loopback address (127.0.0.0/8,
// ::1, or 127.x mapped into IPv6), or the address it reached us on.
bool same_host_peer(int fd) {
  sockaddr_storage peer{}, self{};
  socklen_t pl = sizeof peer, sl = sizeof self;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&self), &sl) != 0 || peer.ss_family != self.ss_family)
    return false;
  if (peer.ss_family == AF_INET) {
    in_addr p = reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, s = reinterpret_cast<sockaddr_in*>(&self)->sin_addr;
    return (ntohl(p.s_addr) >> 24) == 127 || p.s_addr == s.s_addr;
  }
  if (peer.ss_family == AF_INET6) {
    const in6_addr& p = reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr;
    const in6_addr& s = reinterpret_cast<sockaddr_in6*>(&self)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&p) || IN6_ARE_ADDR_EQUAL(&p, &s)) return true;
    return IN6_IS_ADDR_V4MAPPED(&p) && p.s6_addr[12] == 127;
  }
  return false;
}

uint64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct Op {
  enum Kind : uint8_t { accept, recv, send, writable, wake, tick, cancel } kind;
  void* target = nullptr;
};

}  // namespace

struct LoopConn;

struct Loop::Impl {
  ServerState& st;
  WorkerPool& workers;
  unsigned index;
  io_uring ring{};
  bool ring_ready = false;
  int wake_fd = -1;
  int wake_errno = 0;  // why wake_fd could not be made
  uint64_t wake_buf = 0;
  Op wake_op{Op::wake, nullptr};
  Op tick_op{Op::tick, nullptr};
  Op cancel_op{Op::cancel, nullptr};
  __kernel_timespec tick_ts{1, 0};
  struct Listener {
    int fd;
    std::function<void(int, std::string)> assign;
    Op op{Op::accept, nullptr};
    bool armed = false;
  };
  std::vector<std::unique_ptr<Listener>> listeners;
  std::map<LoopConn*, std::unique_ptr<LoopConn>> conns;
  std::thread thread;

  // Cross-thread posts. A leaf.
  Mutex post_mu;
  std::deque<std::function<void()>> posted GUARDED_BY(post_mu);
  bool stopping = false;  // loop thread only

  Impl(ServerState& s, WorkerPool& w, unsigned i) : st(s), workers(w), index(i) {}

  io_uring_sqe* sqe() {
    io_uring_sqe* e = io_uring_get_sqe(&ring);
    if (!e) {
      io_uring_submit(&ring);
      e = io_uring_get_sqe(&ring);
    }
    return e;
  }
  void post(std::function<void()> fn) EXCLUDES(post_mu) {
    {
      MutexLock l(post_mu);
      posted.push_back(std::move(fn));
    }
    uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof one);
  }
  void arm_wake() {
    io_uring_sqe* e = sqe();
    io_uring_prep_read(e, wake_fd, &wake_buf, sizeof wake_buf, 0);
    io_uring_sqe_set_data(e, &wake_op);
  }
  void arm_tick() {
    io_uring_sqe* e = sqe();
    io_uring_prep_timeout(e, &tick_ts, 0, 0);
    io_uring_sqe_set_data(e, &tick_op);
  }
  void arm_accept(Listener& l) {
    io_uring_sqe* e = sqe();
    // Non-blocking: sendfile on the loop must not wait for room.
    io_uring_prep_multishot_accept(e, l.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    l.op.target = &l;
    io_uring_sqe_set_data(e, &l.op);
    l.armed = true;
  }
  void run();
  void on_accept(Listener& l, int res, unsigned flags);
  void on_tick();
  void drain_posted() EXCLUDES(post_mu);
  void adopt(int fd, std::string peer);
};

// One socket and the connection on it.
struct LoopConn final : ConnIo {
  Loop::Impl& loop;
  int fd;
  std::shared_ptr<Conn> conn;
  Op recv_op{Op::recv, this}, send_op{Op::send, this}, writable_op{Op::writable, this};
  bool recv_pending = false, send_pending = false;
  // Receiving: bytes between frames in stage; a large frame in `frame`.
  Bytes stage = Bytes(kStageSize);
  size_t stage_len = 0;
  Bytes frame;
  size_t frame_have = 0;
  bool in_frame = false;
  // Sending.
  struct Out {
    session::OutFrame f;
    std::shared_ptr<void> hold;
    size_t sent = 0;  // of f.head and f.payload
    // f.trailer bytes sent from a file after them (zero copy READ data).
    FileRegion region;
    size_t region_sent = 0;
    bool ready = true;   // false while a worker signs or seals the frame
    uint64_t seq = 0;    // names a frame a worker finishes
    size_t charged = 0;  // what it adds to out_bytes
  };
  // Ends with the connection: work posted back from a worker checks it.
  std::shared_ptr<int> alive = std::make_shared<int>(0);
  uint64_t next_seq = 1;
  std::deque<Out> outq;
  size_t out_bytes = 0;
  std::vector<iovec> iov;
  msghdr mh{};
  bool closing = false;  // no more reading; close once the answers are sent
  bool dead = false;     // the socket is shut; waiting for the ring to let go
  uint64_t born_ms = monotonic_ms(), last_frame_ms = born_ms;

  const bool on_this_host;

  LoopConn(Loop::Impl& l, int f, std::string peer) : loop(l), fd(f), on_this_host(same_host_peer(f)) {
    conn = std::make_shared<Conn>(l.st, *this, std::move(peer));
    l.st.connections.fetch_add(1);
  }
  bool peer_on_this_host() const override { return on_this_host; }
  ~LoopConn() override {
    conn->shutdown();
    ::close(fd);
    loop.st.connections.fetch_sub(1);
  }

  void send(session::OutFrame f, std::shared_ptr<void> hold) override {
    if (dead) return;
    push(Out{std::move(f), std::move(hold)});
    arm_send();
  }
  void send_region(session::OutFrame f, std::shared_ptr<void> hold, FileRegion region) override {
    if (dead) return;
    Out o{std::move(f), std::move(hold)};
    o.region = std::move(region);
    push(std::move(o));
    arm_send();
  }
  void send_finished_elsewhere(session::OutFrame f, size_t size, std::shared_ptr<void> hold,
                               FinishFrame finish) override {
    if (dead) return;
    Out o{session::OutFrame{}, std::move(hold)};
    o.ready = false;
    o.seq = next_seq++;
    // Until it is finished, the frame counts as what it will hold (its
    // payload is not in `f` yet).
    o.charged = size;
    auto frame = std::make_shared<session::OutFrame>(std::move(f));
    push(std::move(o));
    Loop::Impl* l = &loop;
    std::weak_ptr<int> live = alive;
    const uint64_t seq = next_seq - 1;
    loop.workers.submit([l, live, seq, frame, finish = std::move(finish), this] {
      auto r = finish(*frame);
      l->post([live, seq, frame, ok = bool(r), this] {
        if (live.expired()) return;
        finished_elsewhere(seq, std::move(*frame), ok);
      });
    });
  }
  void push(Out o) {
    if (o.ready) o.charged = o.f.size() + o.f.trailer;
    out_bytes += o.charged;
    outq.push_back(std::move(o));
  }
  void finished_elsewhere(uint64_t seq, session::OutFrame f, bool ok) {
    if (dead) return;
    if (!ok) {
      SMBKIT_LOG(warn, "{}: cannot sign or seal an answer: closing", conn->peer());
      kill();
      return;
    }
    for (Out& o : outq) {
      if (o.seq != seq) continue;
      o.f = std::move(f);
      o.ready = true;
      out_bytes += o.f.size() + o.f.trailer;
      out_bytes -= o.charged;
      o.charged = o.f.size() + o.f.trailer;
      break;
    }
    arm_send();
  }
  void run_blocking(std::function<void()> work, std::function<void()> done) override {
    Loop::Impl* l = &loop;
    loop.workers.submit([l, work = std::move(work), done = std::move(done)]() mutable {
      work();
      l->post(std::move(done));
    });
  }
  std::function<void(std::function<void()>)> poster() override {
    Loop::Impl* l = &loop;
    return [l](std::function<void()> fn) { l->post(std::move(fn)); };
  }
  void end() override {
    if (!closing) begin_close(true);
  }
  uint64_t now_filetime() override {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return proto::timespec_to_filetime(ts);
  }

  void arm_recv() {
    if (recv_pending || closing || dead || over_bound()) return;
    if (!in_frame && stage_len == stage.size()) return;  // frames wait in it (parse_stage)
    io_uring_sqe* e = loop.sqe();
    if (in_frame)
      io_uring_prep_recv(e, fd, frame.data() + frame_have, frame.size() - frame_have, 0);
    else
      io_uring_prep_recv(e, fd, stage.data() + stage_len, stage.size() - stage_len, 0);
    io_uring_sqe_set_data(e, &recv_op);
    recv_pending = true;
  }
  void arm_send() {
    if (send_pending || dead || outq.empty() || !outq.front().ready) return;
    if (outq.front().sent == outq.front().f.size() && outq.front().f.trailer) {
      pump_region();
      return;
    }
    iov.clear();
    bool more = false;
    for (Out& o : outq) {
      if (!o.ready || iov.size() + 2 > kMaxIov) break;
      size_t skip = o.sent;
      auto add = [&](const std::byte* p, size_t n) {
        if (skip >= n) {
          skip -= n;
          return;
        }
        iov.push_back({const_cast<std::byte*>(p) + skip, n - skip});
        skip = 0;
      };
      add(o.f.head.data(), o.f.head.size());
      if (!o.f.payload.empty()) add(o.f.payload.data(), o.f.payload.size());
      // The file's bytes follow this header: sent by pump_region.
      if (o.f.trailer) {
        more = true;
        break;
      }
    }
    mh = {};
    mh.msg_iov = iov.data();
    mh.msg_iovlen = iov.size();
    io_uring_sqe* e = loop.sqe();
    io_uring_prep_sendmsg(e, fd, &mh, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    io_uring_sqe_set_data(e, &send_op);
    send_pending = true;
  }

  // Stops reading; with `flush`, the queued answers go out first.
  void begin_close(bool flush) {
    closing = true;
    if (!flush) outq.clear();
    if (outq.empty() || !flush) kill();
  }
  void kill() {
    if (dead) return;
    dead = true;
    closing = true;
    outq.clear();
    conn->shutdown();
    ::shutdown(fd, SHUT_RDWR);  // ends a pending recv
  }
  bool finished() const { return dead && !recv_pending && !send_pending; }

  // The front frame's file bytes, page cache to socket (sendfile, on this
  // thread: the socket does not block, and the file layer handed out the
  // region only when all of it was cached). When the socket is full, the
  // rest goes once it is writable.
  void pump_region() {
    Out& o = outq.front();
    static const std::array<std::byte, 64 * 1024> zeros{};
    while (o.region_sent < o.f.trailer) {
      const size_t want = o.f.trailer - o.region_sent;
      ssize_t n;
      if (o.region_sent < o.region.length) {
        off_t off = static_cast<off_t>(o.region.offset + o.region_sent);
        n = ::sendfile(fd, o.region.fd, &off, std::min(want, o.region.length - o.region_sent));
        if (n == 0) {
          // The file is shorter than when the frame was made: its length
          // is on the wire already, so zeros make up the rest.
          o.region.length = o.region_sent;
          continue;
        }
      } else {
        n = ::send(fd, zeros.data(), std::min(want, zeros.size()), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          io_uring_sqe* e = loop.sqe();
          io_uring_prep_poll_add(e, fd, POLLOUT);
          io_uring_sqe_set_data(e, &writable_op);
          send_pending = true;
          return;
        }
        SMBKIT_LOG(debug, "{}: sendfile: {}", conn->peer(), std::strerror(errno));
        kill();
        return;
      }
      o.region_sent += static_cast<size_t>(n);
    }
    pop_sent();
    after_send();
  }
  // The front frame is all out: it leaves the queue, its charge the bound.
  void pop_sent() {
    out_bytes -= outq.front().charged;
    outq.pop_front();
  }
  // After frames went out: close when all is sent and the connection is
  // closing; else send on, and read again once under the bound.
  void after_send() {
    if (outq.empty() && closing) {
      kill();
      return;
    }
    arm_send();
    resume();
  }
  void on_writable(int res) {
    send_pending = false;
    if (dead) return;
    if (res < 0) {
      kill();
      return;
    }
    pump_region();
  }

  void deliver(Bytes f) {
    last_frame_ms = monotonic_ms();
    auto r = conn->on_frame(std::move(f));
    if (!r) {
      SMBKIT_LOG(info, "{}: closing: {}", conn->peer(), r.error().message());
      begin_close(true);
    }
  }
  // Past the bound on answers queued, counting what the requests taken
  // and not answered yet may still add.
  bool over_bound() const { return out_bytes + conn->held_bytes() > kMaxQueuedBytes; }
  // Frames out of the staging buffer; a frame that does not fit continues
  // in its own buffer.
  void parse_stage() {
    size_t off = 0;
    // Past the bound on queued answers, the requests already received wait
    // too (one staging buffer holds hundreds of small READs), until the
    // socket drains (resume).
    while (!closing && !over_bound() && stage_len - off >= session::kDirectTcpHeader) {
      auto n = conn->frame_length(ByteView(stage).subspan(off, session::kDirectTcpHeader));
      if (!n || (!conn->authenticated() && *n > kMaxUnauthenticatedFrame)) {
        SMBKIT_LOG(info, "{}: closing: bad frame length", conn->peer());
        begin_close(false);
        return;
      }
      size_t have = stage_len - off - session::kDirectTcpHeader;
      const std::byte* p = stage.data() + off + session::kDirectTcpHeader;
      if (have >= *n) {
        deliver(Bytes(p, p + *n));
        off += session::kDirectTcpHeader + *n;
        continue;
      }
      if (session::kDirectTcpHeader + *n > stage.size() - off || *n > kStageSize / 2) {
        frame.assign(*n, std::byte{0});
        std::memcpy(frame.data(), p, have);
        frame_have = have;
        in_frame = true;
        off = stage_len;
      }
      break;
    }
    if (off) {
      std::memmove(stage.data(), stage.data() + off, stage_len - off);
      stage_len -= off;
    }
  }
  // After answers went out: frames left in the staging buffer by the
  // bound, then the socket again.
  void resume() {
    if (!in_frame && stage_len && !dead) parse_stage();
    arm_recv();
  }
  void on_recv(int res) {
    recv_pending = false;
    if (dead) return;
    if (closing && res > 0) return;  // stopping: what arrives now is not read
    if (res <= 0) {
      if (res < 0 && res != -ECONNRESET) SMBKIT_LOG(debug, "{}: recv: {}", conn->peer(), std::strerror(-res));
      kill();
      return;
    }
    if (in_frame) {
      frame_have += res;
      if (frame_have == frame.size()) {
        in_frame = false;
        deliver(std::move(frame));
        frame = Bytes();
      }
    } else {
      stage_len += res;
      parse_stage();
    }
    arm_recv();
  }
  void on_send(int res) {
    send_pending = false;
    if (dead) return;
    if (res < 0) {
      SMBKIT_LOG(debug, "{}: send: {}", conn->peer(), std::strerror(-res));
      kill();
      return;
    }
    size_t left = res;
    while (left && !outq.empty()) {
      Out& o = outq.front();
      size_t rest = o.f.size() - o.sent;
      size_t n = std::min(rest, left);
      o.sent += n;
      left -= n;
      if (o.sent == o.f.size()) {
        if (o.f.trailer) break;  // its file bytes go next (pump_region)
        pop_sent();
      }
    }
    after_send();
  }
};

void Loop::Impl::adopt(int fd, std::string peer) {
  auto c = std::make_unique<LoopConn>(*this, fd, std::move(peer));
  LoopConn* p = c.get();
  conns[p] = std::move(c);
  if (stopping) {
    p->begin_close(false);
    return;
  }
  p->arm_recv();
}

void Loop::Impl::on_accept(Listener& l, int res, unsigned flags) {
  if (!(flags & IORING_CQE_F_MORE)) l.armed = false;
  if (res >= 0) {
    int one = 1;
    setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (getpeername(res, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
      if (ss.ss_family == AF_INET) {
        auto* a = reinterpret_cast<sockaddr_in*>(&ss);
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
      } else if (ss.ss_family == AF_INET6) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
      }
    }
    if (stopping) {
      ::close(res);
    } else {
      l.assign(res, fmt::format("{}:{}", host, port));
    }
  } else if (res != -ECANCELED) {
    SMBKIT_LOG(warn, "accept: {}", std::strerror(-res));
  }
  if (!l.armed && !stopping) arm_accept(l);
}

void Loop::Impl::drain_posted() {
  std::deque<std::function<void()>> todo;
  {
    MutexLock l(post_mu);
    todo.swap(posted);
  }
  for (auto& f : todo) f();
}

void Loop::Impl::on_tick() {
  const uint64_t now = monotonic_ms();
  auto snap = st.snapshot();
  const uint64_t auth_ms = uint64_t(snap->cfg.global.auth_timeout_seconds) * 1000;
  const uint64_t idle_ms = uint64_t(snap->cfg.global.idle_timeout_seconds) * 1000;
  for (auto& [p, c] : conns) {
    if (c->closing && !stopping) continue;
    if (c->dead) continue;
    if (stopping) {
      c->closing = true;          // read nothing more
      c->conn->cancel_waiting();  // what waits is answered STATUS_CANCELLED
      if (c->conn->in_flight() == 0) c->begin_close(true);
    } else if (!c->conn->authenticated() && now - c->born_ms > auth_ms) {
      SMBKIT_LOG(info, "{}: closing: not authenticated in time", c->conn->peer());
      c->begin_close(false);
    } else if (c->conn->in_flight() == 0 && idle_ms && now - c->last_frame_ms > idle_ms) {
      SMBKIT_LOG(info, "{}: closing: idle", c->conn->peer());
      c->begin_close(false);
    }
  }
}

void Loop::Impl::run() {
  arm_wake();
  arm_tick();
  for (auto& l : listeners) arm_accept(*l);
  for (;;) {
    io_uring_submit_and_wait(&ring, 1);
    io_uring_cqe* cqe;
    unsigned head, n = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      n++;
      Op* op = static_cast<Op*>(io_uring_cqe_get_data(cqe));
      if (!op) continue;
      switch (op->kind) {
        case Op::accept:
          on_accept(*static_cast<Listener*>(op->target), cqe->res, cqe->flags);
          break;
        case Op::recv:
          static_cast<LoopConn*>(op->target)->on_recv(cqe->res);
          break;
        case Op::send:
          static_cast<LoopConn*>(op->target)->on_send(cqe->res);
          break;
        case Op::writable:
          static_cast<LoopConn*>(op->target)->on_writable(cqe->res);
          break;
        case Op::wake:
          drain_posted();
          arm_wake();
          break;
        case Op::tick:
          on_tick();
          arm_tick();
          break;
        case Op::cancel:
          break;
      }
    }
    io_uring_cq_advance(&ring, n);
    if (stopping) {
      // Stopping: a connection closes once its answers are all sent.
      for (auto& [p, c] : conns)
        if (c->closing && !c->dead && c->conn->in_flight() == 0 && c->outq.empty()) c->kill();
    }
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->second->finished())
        it = conns.erase(it);
      else
        ++it;
    }
    if (stopping && conns.empty()) {
      bool accepting = false;
      for (auto& l : listeners) accepting |= l->armed;
      if (!accepting) break;
    }
  }
}

Loop::Loop(ServerState& st, WorkerPool& workers, unsigned index) : impl_(std::make_unique<Impl>(st, workers, index)) {
  // Before any thread can post: another loop hands this one connections
  // as soon as it accepts, which may be before this one starts.
  impl_->wake_fd = eventfd(0, EFD_CLOEXEC);
  if (impl_->wake_fd < 0) impl_->wake_errno = errno;
}

Loop::~Loop() {
  join();
  if (impl_->ring_ready) io_uring_queue_exit(&impl_->ring);
  if (impl_->wake_fd >= 0) ::close(impl_->wake_fd);
}

Result<void> Loop::start() {
  Impl& m = *impl_;
  if (int e = io_uring_queue_init(kRingEntries, &m.ring, 0); e < 0) return sys_error(-e, "io_uring_queue_init");
  m.ring_ready = true;
  if (m.wake_fd < 0) return sys_error(m.wake_errno, "eventfd");
  m.thread = std::thread([&m] { m.run(); });
  return {};
}

void Loop::add_listener(int fd, std::function<void(int, std::string)> assign) {
  auto l = std::make_unique<Impl::Listener>();
  l->fd = fd;
  l->assign = std::move(assign);
  impl_->listeners.push_back(std::move(l));
}

void Loop::adopt(int fd, std::string peer) {
  Impl* m = impl_.get();
  m->post([m, fd, peer = std::move(peer)]() mutable { m->adopt(fd, std::move(peer)); });
}

void Loop::post(std::function<void()> fn) { impl_->post(std::move(fn)); }

void Loop::stop() {
  Impl* m = impl_.get();
  m->post([m] {
    m->stopping = true;
    for (auto& l : m->listeners) {
      if (!l->armed) continue;
      io_uring_sqe* e = m->sqe();
      io_uring_prep_cancel(e, &l->op, 0);
      io_uring_sqe_set_data(e, &m->cancel_op);
    }
    m->on_tick();
  });
}

void Loop::join() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace smbkit::server
