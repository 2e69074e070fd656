#include "client/connection.h"

#include <poll.h>

#include <cstring>

#include "auth/crypto.h"
#include "auth/sealing.h"
#include "base/await.h"
#include "base/log.h"
#include "base/worker_pool.h"
#include "proto/error_response.h"
#include "proto/header.h"
#include "proto/read.h"
#include "proto/session_setup.h"
#include "proto/transform_header.h"

namespace smbkit::client {

using namespace proto;

namespace {
bool offered311(const std::vector<uint16_t>& dialects) {
  return std::find(dialects.begin(), dialects.end(), SMB2_DIALECT_0311) != dialects.end();
}
}  // namespace

NegotiateOffer negotiate_offer(const ConnectionOptions& opts, const std::array<std::byte, 16>& client_guid) {
  NegotiateOffer o;
  o.dialects = opts.dialects.empty() ? std::vector<uint16_t>{SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300,
                                                             SMB2_DIALECT_0302, SMB2_DIALECT_0311}
                                     : opts.dialects;
  o.security_mode = opts.require_signing ? SMB2_NEGOTIATE_SIGNING_REQUIRED : SMB2_NEGOTIATE_SIGNING_ENABLED;
  o.capabilities = SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_ENCRYPTION | SMB2_GLOBAL_CAP_LEASING;
  if (opts.multichannel) o.capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
  o.client_guid = client_guid;
  if (offered311(o.dialects)) {
    o.ciphers = opts.ciphers.empty() ? std::vector<uint16_t>{AES_128_GCM, AES_128_CCM, AES_256_GCM, AES_256_CCM}
                                     : opts.ciphers;
    o.signing_algorithms = opts.signing_algorithms.empty() ? std::vector<uint16_t>{AES_GMAC, AES_CMAC, HMAC_SHA256}
                                                           : opts.signing_algorithms;
  }
  return o;
}

Result<session::Request> negotiate_request(const NegotiateOffer& offer, const std::string& host) {
  NegotiateRequest req;
  req.Dialects = offer.dialects;
  req.SecurityMode = offer.security_mode;
  req.Capabilities = offer.capabilities;
  req.ClientGuid = offer.client_guid;
  if (offered311(req.Dialects)) {
    PreauthIntegrityCapabilities pi;
    pi.HashAlgorithms = {SHA_512};
    pi.Salt.resize(32);
    auth::random_bytes(pi.Salt);
    EncryptionCapabilities ec;
    ec.Ciphers = offer.ciphers;
    SigningCapabilities sc;
    sc.SigningAlgorithms = offer.signing_algorithms;
    NetnameNegotiateContextId nn;
    nn.NetName = host;
    SMBKIT_TRY(auto c1, make_negotiate_context(pi));
    SMBKIT_TRY(auto c2, make_negotiate_context(ec));
    SMBKIT_TRY(auto c3, make_negotiate_context(sc));
    SMBKIT_TRY(auto c4, make_negotiate_context(nn));
    req.NegotiateContexts = {c1, c2, c3, c4};
  }
  return make_request(SMB2_NEGOTIATE, 0, 0, [&](ByteWriter& w) { return encode_negotiate_request(req, w); });
}

Result<session::Request> session_setup_request(uint64_t session_id, bool require_signing, ByteView token,
                                               uint64_t previous_session_id, uint8_t flags) {
  SessionSetupRequest req;
  req.Flags = flags;
  req.SecurityMode =
      static_cast<uint8_t>(require_signing ? SMB2_NEGOTIATE_SIGNING_REQUIRED : SMB2_NEGOTIATE_SIGNING_ENABLED);
  req.SecurityBuffer = Bytes(token.begin(), token.end());
  req.PreviousSessionId = previous_session_id;
  return make_request(SMB2_SESSION_SETUP, session_id, 0,
                      [&](ByteWriter& w) { return encode_session_setup_request(req, w); });
}

Result<std::shared_ptr<Connection>> Connection::connect(const ConnectionOptions& opts) {
  std::shared_ptr<Connection> c(new Connection(opts));
  const auto connect_timeout =
      opts.connect_timeout.count() > 0 ? std::min(opts.connect_timeout, opts.timeout) : opts.timeout;
  SMBKIT_TRY(c->tcp_, transport::TcpStream::connect(opts.host, opts.port, connect_timeout));
  c->peer_ = c->tcp_.peer_address();
  if (opts.client_guid == std::array<std::byte, 16>{})
    auth::random_bytes(c->client_guid_);
  else
    c->client_guid_ = opts.client_guid;
  uint32_t prefix;
  auth::random_bytes(MutableByteView(reinterpret_cast<std::byte*>(&prefix), 4));
  {
    MutexLock g(c->mu_);
    c->nonce_prefix_ = prefix;
    c->machine_.set_nonce_prefix(prefix);
    c->machine_.set_credit_target(opts.credit_target);
  }
  c->reader_ = std::thread([p = c.get()] { p->reader_loop(); });
  auto n = c->negotiate();
  if (!n) {
    c->close();
    return n.take_error();
  }
  return c;
}

Connection::~Connection() { close(); }

void Connection::close() {
  {
    MutexLock g(mu_);
    closing_ = true;
  }
  tcp_.shutdown();
  if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
  crypto_.reset();  // finishes frames already read, joins the workers
  send_pool_.reset();  // deferred sends see closing_ and complete their waiters
  fail_all(nt_error(STATUS_CONNECTION_DISCONNECTED, "connection closed"));
  // Runs what the completion thread still has (a completion it runs may
  // post another: repeat until none is left).
  for (;;) {
    std::unique_ptr<WorkerPool> c;
    {
      MutexLock g(mu_);
      c = std::move(completer_);
    }
    if (!c) break;
  }
}

std::optional<Error> Connection::dead() const {
  MutexLock g(mu_);
  return dead_;
}

ConnectionStats Connection::stats() const {
  MutexLock g(mu_);
  return stats_;
}

uint32_t Connection::credits_available() const {
  MutexLock g(mu_);
  return machine_.credits().available();
}

void Connection::add_session(session::SessionSecurity s) {
  MutexLock g(mu_);
  machine_.add_session(std::move(s));
}
void Connection::remove_session(uint64_t id) {
  MutexLock g(mu_);
  machine_.remove_session(id);
}
void Connection::begin_session_preauth() {
  MutexLock g(mu_);
  machine_.begin_session_preauth();
}
std::optional<session::SessionSecurity> Connection::session_security(uint64_t id) const {
  MutexLock g(mu_);
  const session::SessionSecurity* s = machine_.session(id);
  if (!s) return std::nullopt;
  return *s;
}
uint32_t Connection::nonce_prefix() const {
  MutexLock g(mu_);
  return nonce_prefix_;
}
void Connection::set_channel_sequence(uint64_t id, uint16_t seq) {
  MutexLock g(mu_);
  machine_.set_channel_sequence(id, seq);
}

void Connection::set_nonce_prefix(uint32_t prefix) {
  MutexLock g(mu_);
  nonce_prefix_ = prefix;
  machine_.set_nonce_prefix(prefix);
}
size_t Connection::in_flight() const {
  MutexLock g(mu_);
  return waiters_.size();
}
Bytes Connection::session_preauth_value() {
  MutexLock g(mu_);
  auto v = machine_.session_preauth().value();
  return Bytes(v.begin(), v.end());
}

namespace {
// WRITE payloads at least this large are signed/encrypted on a send worker;
// smaller messages are cheaper to transform inline.
constexpr size_t kDeferTransformBytes = 256 * 1024;
}  // namespace

void Connection::submit(session::Request req, Completion done, MutableByteView read_into,
                        uint64_t* message_id, const transport::Pipe* splice_into) {
  auto frame = std::make_shared<session::OutFrame>();
  uint64_t mid;
  bool sending_caller_buffer = false;
  req.defer_transform = req.payload.size() >= kDeferTransformBytes;
  Result<void> sent;
  bool frame_to_worker = false;
  {
    MutexLock send_lock(send_mu_);
    {
      MutexLock lk(mu_);
      auto deadline = Clock::now() + opts_.timeout;
      Result<uint64_t> r = Error{};
      if (auto e = wait_credits(machine_.charge_for(req.charge_bytes), deadline)) r = std::move(*e);
      else r = machine_.send(req, *frame);
      if (!r) {
        complete_later_locked(std::move(done), r.take_error());
        return;
      }
      mid = *r;
      bool deferred = frame->transform.kind != session::FrameTransform::Kind::none;
      // A plain frame with a payload is written from the caller's buffer by
      // this thread, after mu_ is let go: a response or a failure that
      // comes in meanwhile must not complete the request (its caller would
      // free the buffer while it is still being read).
      sending_caller_buffer = !deferred && !req.payload.empty();
      if (message_id) *message_id = mid;
      stats_.frames_out++;
      stats_.bytes_out += req.msg.size() + req.payload.size() + 4;
      auto now = Clock::now();
      waiters_[mid] = Waiter{std::move(done), now + opts_.timeout, read_into, splice_into, false,
                             deferred || sending_caller_buffer, {}, {}, pending_limit_for(req.hdr.Command, now)};
      if (!read_into.empty()) direct_waiters_++;
      SMBKIT_LOG(trace, "-> {} mid={} charge={} credits_left={} tree={} len={}{}",
                 command_name(req.hdr.Command), mid, req.hdr.CreditCharge,
                 machine_.credits().available(), req.hdr.TreeId, req.msg.size() + req.payload.size(),
                 deferred ? " (transform on a worker)" : "");
      if (deferred) {
        if (!send_pool_) send_pool_ = std::make_unique<WorkerPool>(2, 4);
        frame_to_worker = true;
      }
    }
    if (!frame_to_worker) sent = write_frame(*frame);
  }
  if (frame_to_worker) {
    // The pool's queue is bounded: this blocks (holding no lock) while
    // both workers are busy, which paces the submitter.
    send_pool_->submit([this, mid, r = std::make_shared<session::Request>(std::move(req)), frame] {
      transmit_deferred(mid, r, frame);
    });
    return;
  }
  if (sending_caller_buffer) finish_sending(mid, std::move(sent), RunOn::completion_thread);
}

std::optional<Error> Connection::wait_credits(uint16_t charge, Clock::time_point deadline) {
  // Never overdraw the window (MS-SMB2 3.2.4.1.5).
  while (!dead_ && !closing_ && !machine_.credits().can_send(charge)) {
    // Nothing outstanding can return credits: the request is larger than
    // the server will ever grant.
    if (machine_.pending() == 0) return nt_error(STATUS_INSUFFICIENT_RESOURCES, "server granted too few credits");
    if (credits_cv_.wait_until(mu_, deadline) == std::cv_status::timeout)
      return nt_error(STATUS_IO_TIMEOUT, "waiting for credits");
  }
  if (dead_) return *dead_;
  if (closing_) return nt_error(STATUS_CONNECTION_DISCONNECTED, "connection closed");
  return std::nullopt;
}

void Connection::submit_compound(std::vector<session::Request> reqs, std::vector<Completion> dones) {
  auto frame = std::make_shared<session::OutFrame>();
  MutexLock send_lock(send_mu_);
  UniqueLock lk(mu_);
  auto deadline = Clock::now() + opts_.timeout;
  Result<std::vector<uint64_t>> r = Error{};
  if (reqs.size() != dones.size()) r = nt_error(STATUS_INVALID_PARAMETER, "one completion per request");
  else if (auto e = wait_credits(machine_.compound_charge(reqs), deadline)) r = std::move(*e);
  else r = machine_.send_compound(reqs, *frame);
  if (!r) {
    for (auto& d : dones) complete_later_locked(std::move(d), r.error());
    return;
  }
  stats_.frames_out++;
  stats_.bytes_out += frame->size();
  for (size_t i = 0; i < reqs.size(); i++) {
    waiters_[(*r)[i]] = Waiter{std::move(dones[i]), deadline, {}, nullptr, false, false, {}, {},
                               pending_limit_for(reqs[i].hdr.Command, Clock::now())};
    SMBKIT_LOG(trace, "-> {} mid={} (compound {}/{}) credits_left={} tree={}", command_name(reqs[i].hdr.Command),
               (*r)[i], i + 1, reqs.size(), machine_.credits().available(), reqs[i].hdr.TreeId);
  }
  lk.unlock();
  (void)write_frame(*frame);
}

void Connection::submit_gathered(session::Request req, Completion done) {
  {
    MutexLock g(gather_mu_);
    gather_q_.push_back(Gathered{std::move(req), std::move(done)});
    if (gathering_) return;  // the thread sending now takes it along
    gathering_ = true;
  }
  // This thread sends until the queue is empty: each round what gathered
  // while the previous frame was going out.
  constexpr size_t kMaxChain = 32;
  for (;;) {
    std::vector<Gathered> batch;
    {
      MutexLock g(gather_mu_);
      if (gather_q_.empty()) {
        gathering_ = false;
        return;
      }
      // A chain never asks for more credits than are free now (a chain
      // larger than the server's window would fail whole): with few
      // credits the requests go one by one, each waiting for its credit.
      size_t n = std::min({gather_q_.size(), kMaxChain, static_cast<size_t>(std::max<uint32_t>(1, credits_available()))});
      batch.assign(std::make_move_iterator(gather_q_.begin()), std::make_move_iterator(gather_q_.begin() + n));
      gather_q_.erase(gather_q_.begin(), gather_q_.begin() + n);
    }
    if (batch.size() == 1) {
      submit(std::move(batch[0].req), std::move(batch[0].done));
      continue;
    }
    std::vector<session::Request> reqs;
    std::vector<Completion> dones;
    for (auto& b : batch) {
      reqs.push_back(std::move(b.req));
      dones.push_back(std::move(b.done));
    }
    {
      MutexLock g(mu_);
      stats_.gathered += reqs.size();
    }
    submit_compound(std::move(reqs), std::move(dones));
  }
}

Result<std::vector<session::Response>> Connection::call_compound(std::vector<session::Request> reqs) {
  using Each = Result<session::Response>;
  using All = std::vector<Each>;
  All all = await_completion<All>([&](std::function<void(All)> done) {
    struct Gather {
      Mutex m;  // a leaf: `done` runs without it
      std::vector<std::optional<Each>> got GUARDED_BY(m);
      size_t left GUARDED_BY(m) = 0;
      std::function<void(All)> done;
    };
    auto g = std::make_shared<Gather>();
    {
      MutexLock lk(g->m);  // not shared yet; says so to the analysis
      g->got.resize(reqs.size());
      g->left = reqs.size();
    }
    g->done = std::move(done);
    std::vector<Completion> dones;
    for (size_t i = 0; i < reqs.size(); i++) {
      dones.push_back([g, i](Each r) {
        UniqueLock lk(g->m);
        g->got[i].emplace(std::move(r));
        if (--g->left) return;
        All out;
        for (auto& x : g->got) out.push_back(std::move(*x));
        lk.unlock();
        g->done(std::move(out));
      });
    }
    submit_compound(std::move(reqs), std::move(dones));
  });
  std::vector<session::Response> out;
  for (auto& r : all) {
    if (!r) return r.take_error();
    out.push_back(std::move(*r));
  }
  return out;
}

Result<void> Connection::write_frame(const session::OutFrame& frame) {
#ifdef SMBKIT_INJECT_DELAY_US
  // A known cost per frame, for perf-ab's self-test (CMakeLists.txt).
  std::this_thread::sleep_for(std::chrono::microseconds(SMBKIT_INJECT_DELAY_US));
#endif
  iovec iov[2] = {{const_cast<std::byte*>(frame.head.data()), frame.head.size()},
                  {const_cast<std::byte*>(frame.payload.data()), frame.payload.size()}};
  Result<void> w;
  {
    MutexLock g(write_mu_);
    w = tcp_.write_all(iov, frame.payload.empty() ? 1 : 2, Clock::now() + opts_.timeout);
  }
  if (!w) {
    Error e = w.take_error();
    e.context = "sending to " + opts_.host;
    fail_all_later(e);
    tcp_.shutdown();
    return e;
  }
  return {};
}

void Connection::transmit_deferred(uint64_t mid, std::shared_ptr<session::Request> req,
                                   std::shared_ptr<session::OutFrame> frame) {
  bool send = true;
  {
    MutexLock g(mu_);
    auto it = waiters_.find(mid);
    send = !dead_ && !closing_ && it != waiters_.end() && !it->second.failed;
  }
  Result<void> f;
  if (send) f = session::finish_frame(*req, *frame);
  if (send && f) f = write_frame(*frame);
  finish_sending(mid, std::move(f), RunOn::here);
}

void Connection::finish_sending(uint64_t mid, Result<void> sent, RunOn where) {
  // The caller's buffer is no longer read: the request may complete now.
  Completion done;
  std::optional<Result<session::Response>> result;
  {
    MutexLock g(mu_);
    auto it = waiters_.find(mid);
    if (it == waiters_.end()) return;
    Waiter& w = it->second;
    w.sending = false;
    if (w.answered) result = std::move(*w.answered);
    else if (w.failed) result.emplace(*w.failed);
    else if (!sent) result.emplace(sent.take_error());
    else if (dead_) result.emplace(*dead_);
    else if (closing_) result.emplace(nt_error(STATUS_CONNECTION_DISCONNECTED, "connection closed"));
    if (!result) return;  // sent: the response completes it
    done = std::move(w.done);
    if (!w.read_into.empty()) direct_waiters_--;
    if (!w.answered) machine_.abandon(mid);
    waiters_.erase(it);
    if (where == RunOn::completion_thread) complete_later_locked(std::move(done), std::move(*result));
  }
  credits_cv_.notify_all();
  if (where == RunOn::here) done(std::move(*result));
}

void Connection::complete_later_locked(Completion done, Result<session::Response> result) {
  // Unbounded: posting must never wait under mu_ for a completion that
  // may itself need mu_.
  if (!completer_) completer_ = std::make_unique<WorkerPool>(1, SIZE_MAX);
  completer_->submit([done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

void Connection::fail_all_later(const Error& e) {
  MutexLock g(mu_);
  if (!dead_) dead_ = e;
  is_dead_.store(true, std::memory_order_release);
  credits_cv_.notify_all();
  if (!completer_) completer_ = std::make_unique<WorkerPool>(1, SIZE_MAX);
  completer_->submit([this, e] { fail_all(e); });
}

Result<session::Response> Connection::call(session::Request req) {
  return await_completion<Result<session::Response>>(
      [&](Completion done) { submit(std::move(req), std::move(done)); });
}

void Connection::fail_all(const Error& e) {
  std::map<uint64_t, Waiter> w;
  {
    MutexLock g(mu_);
    if (!dead_) dead_ = e;
    is_dead_.store(true, std::memory_order_release);
    w.swap(waiters_);
    direct_waiters_ = 0;
    for (auto it = w.begin(); it != w.end();) {
      if (it->second.sending || it->second.receiving) {
        // A send worker still reads the caller's buffer, or the receiver
        // still writes its payload into it (or its pipe): the request
        // completes when that ends (finish_sending; the receiver
        // delivers the response, or fails what is left when it stops).
        it->second.failed = e;
        if (!it->second.read_into.empty()) direct_waiters_++;
        waiters_.insert(w.extract(it++));
      } else {
        machine_.abandon(it->first);
        ++it;
      }
    }
  }
  credits_cv_.notify_all();
  for (auto& [mid, waiter] : w) waiter.done(e);
}

Clock::time_point Connection::pending_limit_for(uint16_t command, Clock::time_point sent) const {
  // A blocking LOCK (without SMB2_LOCKFLAG_FAIL_IMMEDIATELY, MS-SMB2
  // 2.2.26.1) is answered STATUS_PENDING at once and granted when the
  // holder lets go: F_SETLKW semantics, ended by the user (an interrupted
  // fcntl cancels it). Everything else is work the server should finish:
  // a slow disk or a busy smbd thread pool, not minutes.
  if (command == SMB2_LOCK) return Clock::time_point::max();
  return sent + kPendingFactor * opts_.timeout;
}

size_t Connection::frame_limit_for(const ServerInfo& s) {
  // What we ask for fixes the longest legitimate response: a READ of at
  // most min(MaxReadSize, 8 MiB) (Tree::max_read), QUERY_DIRECTORY /
  // QUERY_INFO / IOCTL output of at most min(MaxTransactSize, 1 MiB), and
  // compounds of up to 2 MiB in all (two 1 MiB QUERY_DIRECTORYs in a
  // listing; 32 gathered 64 KiB READs). Headers, padding and a transform
  // header fit in the 64 KiB on top. kMaxFrame (16 MiB) is the protocol's
  // own bound.
  size_t largest = std::max<size_t>({std::min<size_t>(s.max_read, 8u << 20),
                                     std::min<size_t>(s.max_transact, 1u << 20), size_t{2} << 20});
  return std::min<size_t>(largest + (64u << 10), session::kMaxFrame);
}

void Connection::expire(Clock::time_point now) {
  std::vector<Waiter> late;
  {
    MutexLock g(mu_);
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.deadline <= now && !it->second.receiving && !it->second.sending) {
        if (!it->second.read_into.empty()) direct_waiters_--;
        machine_.abandon(it->first);
        late.push_back(std::move(it->second));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : late)
    w.done(nt_error(STATUS_IO_TIMEOUT, "no response from " + opts_.host + " within the timeout"));
}

void Connection::reader_loop() {
  std::vector<session::Response> rs;
  for (;;) {
    {
      MutexLock g(mu_);
      if (closing_ || dead_) return;
    }
    if (rx_buffered() == 0) {  // else the next frame (or its start) is here already
      pollfd p{tcp_.fd(), POLLIN, 0};
      int rc = ::poll(&p, 1, 200);
      if (rc == 0) {
        expire(Clock::now());
        continue;
      }
      if (rc < 0 && errno == EINTR) continue;
    }
    rs.clear();
    auto got = read_and_receive(rs);
    if (!got) {
      Error e = got.take_error();
      bool closing;
      {
        MutexLock g(mu_);
        closing = closing_;
      }
      if (!closing) SMBKIT_LOG(debug, "connection to {} lost: {}", opts_.host, e.message());
      fail_all(e);
      tcp_.shutdown();
      return;
    }
    dispatch(rs);
  }
}

void Connection::dispatch(std::vector<session::Response>& rs) {
  if (rs.empty()) return;
  std::vector<std::pair<Completion, Result<session::Response>>> ready;
  std::vector<session::Response> breaks;
  std::shared_ptr<BreakHandler> on_break;
  {
    MutexLock g(mu_);
    on_break = break_handler_;
    for (auto& resp : rs) {
      if (resp.orphan) continue;
      if (resp.hdr.MessageId == ~0ull) {
        if (on_break) breaks.push_back(std::move(resp));
        else SMBKIT_LOG(debug, "<- break notification ignored (no leases held)");
        continue;
      }
      auto it = waiters_.find(resp.hdr.MessageId);
      if (it == waiters_.end()) continue;
      SMBKIT_LOG(trace, "<- {} mid={} status={} granted={}{}", command_name(resp.hdr.Command),
                 resp.hdr.MessageId, ntstatus_name(resp.hdr.Status),
                 resp.hdr.CreditRequestResponse, resp.interim ? " (interim)" : "");
      if (resp.interim) {
        // The server is working on it (MS-SMB2 3.2.5.1.5): wait longer,
        // up to the request's pending limit, so interim responses every
        // few seconds cannot hold a request forever. A
        // blocking LOCK's limit is "never": it waits for another holder,
        // as long as that takes, and its caller ends it with cancel().
        const auto limit = it->second.pending_limit;
        it->second.deadline = limit == Clock::time_point::max() ? limit : std::min(Clock::now() + opts_.timeout, limit);
        continue;
      }
      if (it->second.sending) {  // finish_sending completes it
        it->second.answered = std::move(resp);
        continue;
      }
      ready.emplace_back(std::move(it->second.done), std::move(resp));
      if (!it->second.read_into.empty()) direct_waiters_--;
      waiters_.erase(it);
    }
  }
  credits_cv_.notify_all();
  for (auto& [done, result] : ready) done(std::move(result));
  for (auto& b : breaks) (*on_break)(b);
}

void Connection::set_break_handler(BreakHandler h) {
  MutexLock g(mu_);
  break_handler_ = h ? std::make_shared<BreakHandler>(std::move(h)) : nullptr;
}

Result<void> Connection::cancel(uint64_t message_id) {
  session::OutFrame frame;
  MutexLock send_lock(send_mu_);
  {
    MutexLock g(mu_);
    if (dead_ || closing_) return nt_error(STATUS_CONNECTION_DISCONNECTED, "connection closed");
    SMBKIT_CHECK(machine_.send_cancel(message_id, frame));
    stats_.frames_out++;
    stats_.bytes_out += frame.size();
  }
  iovec iov[1] = {{frame.head.data(), frame.head.size()}};
  MutexLock w(write_mu_);  // send workers write under write_mu_ only
  return tcp_.write_all(iov, 1, Clock::now() + opts_.timeout);
}


Result<void> Connection::rx_read(std::byte* dst, size_t n, Clock::time_point deadline) {
  for (;;) {
    size_t take = std::min(n, rx_buffered());
    if (take) {
      std::memcpy(dst, rx_.get() + rx_pos_, take);
      rx_pos_ += take;
      dst += take;
      n -= take;
    }
    if (n == 0) return {};
    // Staging is empty. A large rest goes straight where it belongs (the
    // READ payload into the caller's buffer); a small one refills staging
    // with whatever has arrived, usually the next frames too.
    if (n >= kRxDirect) return tcp_.read_exact(dst, n, deadline);
    SMBKIT_TRY(size_t got, tcp_.read_some(rx_.get(), rx_last_large_ ? n : kRxStaging, deadline));
    rx_pos_ = 0;
    rx_len_ = got;
  }
}

Result<bool> Connection::rx_splice(const transport::Pipe& p, MutableByteView dest, Clock::time_point deadline) {
  // The payload's start may have come in with its header (staging was
  // refilled after a small frame, e.g. an interim response): those bytes
  // are written into the pipe, the rest spliced behind them.
  size_t staged = std::min(rx_buffered(), dest.size());
  size_t in_pipe = 0;
  if (staged) {
    ssize_t w = ::write(p.wr(), rx_.get() + rx_pos_, staged);
    if (w > 0) in_pipe = static_cast<size_t>(w);
    rx_pos_ += in_pipe;
  }
  bool full = in_pipe < staged;
  if (!full && in_pipe < dest.size()) {
    // (On an error the pipe keeps what it took: a re-sent READ empties it,
    // Tree::read_attempt.)
    SMBKIT_TRY(size_t moved, tcp_.splice_to(p.wr(), dest.size() - in_pipe, deadline));
    in_pipe += moved;
    full = in_pipe < dest.size();
  }
  if (!full) return true;
  // The pipe is full (the payload came in fragments smaller than its
  // pages): the data goes to dest after all, in one piece.
  SMBKIT_CHECK(p.read_exact(dest.data(), in_pipe));
  SMBKIT_CHECK(rx_read(dest.data() + in_pipe, dest.size() - in_pipe, deadline));
  return false;
}

Result<void> Connection::read_and_receive(std::vector<session::Response>& rs) {
  auto deadline = Clock::now() + opts_.timeout;
  std::byte lenb[4];
  SMBKIT_CHECK(rx_read(lenb, 4, deadline));
  if (lenb[0] != std::byte{0}) return protocol_error("bad Direct TCP header");
  size_t len = (static_cast<size_t>(lenb[1]) << 16) | (static_cast<size_t>(lenb[2]) << 8) |
               static_cast<size_t>(lenb[3]);
  rx_last_large_ = len >= kRxDirect;
  bool try_direct;
  {
    MutexLock g(mu_);
    // Refused from the length alone, before a buffer is taken for it: a
    // frame longer than any response to what we asked.
    if (len > frame_limit_)
      return protocol_error("a " + std::to_string(len) + "-byte frame from " + opts_.host +
                            ", longer than the " + std::to_string(frame_limit_) +
                            " any response to our requests can take");
    try_direct = direct_waiters_ > 0;
    stats_.frames_in++;
    stats_.bytes_in += len + 4;
  }
  constexpr size_t kFixed = kHeaderSize + kReadResponseFixedSize;  // 80
  if (!try_direct || len <= kFixed) {
    auto buf = pool_->get(len);
    SMBKIT_CHECK(rx_read(buf->data(), len, deadline));
    if (len >= kTransformHeaderSize && load_le32(buf->data()) == kTransformProtocolId)
      return unseal_async(std::move(buf), len);
    MutexLock g(mu_);
    return machine_.receive(std::move(buf), len, rs);
  }
  // Peek at the READ response's fixed part to see whether its payload can
  // go straight into the caller's buffer (MS-SMB2 2.2.20).
  std::byte first[kFixed];
  SMBKIT_CHECK(rx_read(first, kFixed, deadline));
  auto direct = claim_direct(ByteView(first, kFixed), len);
  MutableByteView dest;
  const transport::Pipe* pipe = nullptr;
  size_t data_off = 0, data_len = 0;
  uint64_t mid = 0;
  if (direct) {
    mid = direct->mid;
    dest = direct->dest;
    // A signed payload must be read to be verified.
    if (!direct->signed_frame) pipe = direct->pipe;
    data_off = direct->data_off;
    data_len = dest.size();
  }
  if (!direct) {
    auto buf = pool_->get(len);
    std::copy(first, first + kFixed, buf->data());
    SMBKIT_CHECK(rx_read(buf->data() + kFixed, len - kFixed, deadline));
    if (load_le32(buf->data()) == kTransformProtocolId) return unseal_async(std::move(buf), len);
    MutexLock g(mu_);
    return machine_.receive(std::move(buf), len, rs);
  }
  auto head = pool_->get(data_off);
  std::copy(first, first + kFixed, head->data());
  auto rd = rx_read(head->data() + kFixed, data_off - kFixed, deadline);
  bool spliced = false;
  if (rd && pipe) {
    auto sp = rx_splice(*pipe, dest.first(data_len), deadline);
    if (sp) spliced = *sp;
    else rd = sp.take_error();
  } else if (rd) {
    rd = rx_read(dest.data(), data_len, deadline);
  }
  MutexLock g(mu_);
  release_direct(mid);
  if (!rd) return rd;
  stats_.direct_read_bytes += data_len;
  if (spliced) stats_.spliced_read_bytes += data_len;
  else if (pipe) stats_.splice_pipe_full++;
  return machine_.receive_split(std::move(head), 0, data_off, ByteView(dest.data(), data_len), 0, rs);
}

std::optional<Connection::DirectRead> Connection::claim_direct(ByteView fixed, size_t msg_len) {
  auto hdr = decode_header(fixed);
  if (!hdr || hdr->Command != SMB2_READ || hdr->Status != STATUS_SUCCESS || hdr->NextCommand != 0) return std::nullopt;
  auto info = decode_read_response_fixed(fixed);
  if (!info || info->DataOffset < fixed.size() || info->DataOffset + size_t{info->DataLength} != msg_len)
    return std::nullopt;
  MutexLock g(mu_);
  auto it = waiters_.find(hdr->MessageId);
  // One claim at a time: a second answer to the same MessageId (a replayed
  // sealed frame, decrypted on another worker) must not write into a buffer
  // the first may already have handed back to its owner.
  if (it == waiters_.end() || it->second.receiving || it->second.read_into.size() < info->DataLength ||
      !machine_.is_pending(hdr->MessageId))
    return std::nullopt;
  it->second.receiving = true;
  DirectRead d;
  d.mid = hdr->MessageId;
  d.dest = it->second.read_into.first(info->DataLength);
  d.pipe = it->second.splice_into;
  d.data_off = info->DataOffset;
  d.signed_frame = hdr->Flags & SMB2_FLAGS_SIGNED;
  return d;
}

void Connection::release_direct(uint64_t mid) {
  auto it = waiters_.find(mid);
  if (it != waiters_.end()) it->second.receiving = false;
}

namespace {
// One keyed context per worker thread and key (contexts are not shareable).
auth::Unsealer& thread_unsealer(const session::ClientMachine::UnsealKey& k) {
  thread_local std::map<std::pair<uint16_t, Bytes>, std::unique_ptr<auth::Unsealer>> cache;
  auto& u = cache[{k.cipher, k.key}];
  if (!u) u = std::make_unique<auth::Unsealer>(k.cipher, k.key);
  return *u;
}
}  // namespace

Result<void> Connection::unseal_async(std::shared_ptr<Bytes> buf, size_t len) {
  session::ClientMachine::UnsealKey key;
  {
    MutexLock g(mu_);
    SMBKIT_TRY(key, machine_.unseal_key(ByteView(buf->data(), len)));
    if (!crypto_) {
      // Decrypting 4-8 MiB frames is the receive path's heaviest work:
      // do it on up to 4 threads while the receiver reads on.
      int n = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
      crypto_ = std::make_unique<WorkerPool>(n, static_cast<size_t>(2 * n));
    }
  }
  crypto_->submit([this, buf = std::move(buf), len, key = std::move(key)]() mutable {
    // A lone READ's data is decrypted straight into the caller's buffer,
    // as a plain one is read into it (AES-GCM; CCM decrypts in place and
    // the data is copied out of the frame).
    std::optional<DirectRead> direct;
    bool split = false;
    auto n = thread_unsealer(key).decrypt_split(
        MutableByteView(buf->data(), len), kHeaderSize + kReadResponseFixedSize,
        [&](ByteView first, size_t msg_len) {
          if (first.size() == kHeaderSize + kReadResponseFixedSize) direct = claim_direct(first, msg_len);
          if (!direct) return auth::Unsealer::Placement{};
          return auth::Unsealer::Placement{direct->data_off, direct->dest};
        },
        &split);
    std::vector<session::Response> rs;
    Result<void> r = n ? Result<void>() : Result<void>(n.take_error());
    if (!r) r = session::security_violation(r.error().status, r.error().context);
    if (r) {
      auto sealed_by = transform_session_id(ByteView(buf->data(), len));  // checked by unseal_key
      // Released and received under one lock: once the claim ends the
      // MessageId is no longer pending, so no duplicate can claim it.
      MutexLock g(mu_);
      if (direct) release_direct(direct->mid);
      if (split) {
        stats_.direct_read_bytes += direct->dest.size();
        r = machine_.receive_split(std::move(buf), kTransformHeaderSize, direct->data_off, direct->dest, *sealed_by, rs);
      } else {
        r = machine_.receive_messages(std::move(buf), kTransformHeaderSize, kTransformHeaderSize + *n, *sealed_by, rs);
      }
    }
    if (!r && direct) {
      MutexLock g(mu_);
      release_direct(direct->mid);
    }
    if (!r) {
      // A frame that does not decrypt: the connection cannot be trusted.
      fail_all(r.take_error());
      tcp_.shutdown();
      return;
    }
    dispatch(rs);
  });
  return {};
}

Result<void> Connection::negotiate() {
  offer_ = negotiate_offer(opts_, client_guid_);
  SMBKIT_TRY(auto r, negotiate_request(offer_, opts_.host));
  SMBKIT_TRY(auto resp, call(std::move(r)));
  if (resp.hdr.Status != STATUS_SUCCESS) {
    auto e = nt_error(resp.hdr.Status, "negotiate");
    if (resp.hdr.Status == STATUS_NOT_SUPPORTED || resp.hdr.Status == STATUS_INVALID_PARAMETER)
      e.context = "negotiate: the server supports none of the offered dialects";
    return e;
  }
  SMBKIT_TRY(auto nr, decode_negotiate_response(resp.msg()));
  SMBKIT_TRY(server_, settle_negotiate(offer_, nr));
  MutexLock g(mu_);
  machine_.set_dialect(nr.DialectRevision, nr.Capabilities & SMB2_GLOBAL_CAP_LARGE_MTU);
  frame_limit_ = frame_limit_for(server_);
  return {};
}

}  // namespace smbkit::client
