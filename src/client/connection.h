// One TCP connection to an SMB2 server: a receiver thread that matches
// responses to requests by MessageId (out of order), senders that wait for
// credits, and per-request deadlines. The protocol state lives in the
// sans-I/O session::ClientMachine; this class only adds the socket, the locks and
// the clock.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/buffer_pool.h"
#include "base/mutex.h"
#include "base/result.h"
#include "client/negotiate_policy.h"
#include "base/worker_pool.h"
#include "proto/negotiate.h"
#include "session/client_machine.h"
#include "transport/pipe.h"
#include "transport/tcp.h"

namespace smbkit::client {

using Clock = std::chrono::steady_clock;

struct ConnectionOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 445;
  // Offered dialects, lowest first. Empty: 2.0.2 to 3.1.1.
  std::vector<uint16_t> dialects;
  bool require_signing = false;     // --sign
  bool require_encryption = false;  // --seal
  std::chrono::milliseconds timeout{30000};
  // For the TCP connect alone, when shorter (0: `timeout`).
  std::chrono::milliseconds connect_timeout{0};
  // Credits we ask the server to let us hold (64 KiB each): enough for the
  // largest transfer window; Samba grants up to 8192.
  uint32_t credit_target = 2048;
  // Cipher and signing preferences for 3.1.1, most preferred first.
  std::vector<uint16_t> ciphers;
  std::vector<uint16_t> signing_algorithms;
  // ClientGuid to negotiate with; all zero: a random one. A reconnect reuses
  // the first connection's, which durable handle reconnects require
  // (MS-SMB2 3.3.5.9.12).
  std::array<std::byte, 16> client_guid{};
  // Offer SMB2_GLOBAL_CAP_MULTI_CHANNEL (MS-SMB2 2.2.3): channels may then
  // be bound to a session of this connection, or this one to another's.
  bool multichannel = false;
};

// The offer this connection's NEGOTIATE makes (client/negotiate_policy.h).
NegotiateOffer negotiate_offer(const ConnectionOptions& opts, const std::array<std::byte, 16>& client_guid);

// Counters for tests, benchmarks and -v output.
struct ConnectionStats {
  uint64_t frames_in = 0, bytes_in = 0;
  uint64_t frames_out = 0, bytes_out = 0;
  uint64_t direct_read_bytes = 0;  // READ data placed straight in callers' buffers (or pipes)
  uint64_t spliced_read_bytes = 0;  // of which spliced into callers' pipes
  uint64_t splice_pipe_full = 0;    // payloads a pipe had no room for (read into memory instead)
  uint64_t gathered = 0;           // requests sent in compounds by submit_gathered
};

class Connection {
 public:
  using Completion = std::function<void(Result<session::Response>)>;

  // TCP connect and NEGOTIATE.
  static Result<std::shared_ptr<Connection>> connect(const ConnectionOptions& opts);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const ServerInfo& server() const { return server_; }
  const ConnectionOptions& options() const { return opts_; }
  // The numeric address this connection went to (options().host may be a
  // name); set before the connection is shared.
  const std::string& peer() const { return peer_; }
  const std::array<std::byte, 16>& client_guid() const { return client_guid_; }
  // What this connection's NEGOTIATE offered.
  const NegotiateOffer& offered() const { return offer_; }

  // Sends req (waiting for credits) and calls done with the final response
  // or an error. `done` never runs inside submit() and never under a lock
  // of the connection: it runs on the receiver thread (or a decrypting
  // worker) when the response comes, on the completion thread when
  // sending fails; it must not block on another call.
  // Responses whose Status is an error are delivered as responses; the
  // caller decides (many commands carry data with warnings).
  // read_into: for a READ, the buffer its data should land in. When the
  // response is plain (not sealed) the receiver reads the payload straight
  // into it and Response::direct views it; otherwise the data stays in the
  // frame and the caller copies.
  // message_id, when given, receives the request's MessageId before it is
  // sent (for cancel()).
  // splice_into (with read_into): a pipe the payload of a plain, unsigned
  // response is spliced into from the socket instead (unless the pipe has
  // no room for it). The data then lands whole in one of the two, never
  // split: Response::direct still gives its length, and
  // the pipe's content tells where it is. The pipe must be empty and stay
  // alive until done runs.
  void submit(session::Request req, Completion done, MutableByteView read_into = {},
              uint64_t* message_id = nullptr, const transport::Pipe* splice_into = nullptr);
  // Synchronous form of submit.
  Result<session::Response> call(session::Request req);
  // Several requests in one frame (session::ClientMachine::send_compound): one
  // completion per request, each run as its response arrives. The
  // synchronous form gives every response (their Status unchecked), or the
  // first transport error.
  void submit_compound(std::vector<session::Request> reqs, std::vector<Completion> dones);
  Result<std::vector<session::Response>> call_compound(std::vector<session::Request> reqs);
  // Like submit(), for small independent requests (4 KiB READs at a high
  // queue depth): the ones that arrive while another thread is sending go
  // out together as one compound of unrelated requests (MS-SMB2
  // 3.2.4.1.4). smbd then handles the chain in one pass, reading
  // synchronously instead of through its thread pool, and answers in one
  // frame. A request that finds nobody sending goes out at once, alone.
  void submit_gathered(session::Request req, Completion done);

  // Unsolicited OPLOCK_BREAK notifications (oplock or lease break, MessageId
  // 0xFFFFFFFFFFFFFFFF, MS-SMB2 3.2.5.19). The handler runs on the receiver
  // (or a decrypting worker) thread outside the connection's locks: it must
  // not block on a request; it hands the work to its own thread, which may
  // then send the acknowledgment (client/lease.h does this).
  using BreakHandler = std::function<void(const session::Response&)>;
  void set_break_handler(BreakHandler h);
  // Sends SMB2 CANCEL for a request still pending (MS-SMB2 3.2.4.24), e.g. a
  // blocking LOCK whose caller was interrupted; its completion then runs with
  // the server's answer (STATUS_CANCELLED) or the grant that raced with it.
  Result<void> cancel(uint64_t message_id);

  // Session security state lives in the machine; these lock around it.
  void add_session(session::SessionSecurity s);
  void remove_session(uint64_t id);
  void begin_session_preauth();
  Bytes session_preauth_value();
  // A copy of session `id`'s security on this connection (for binding it
  // to another, client/channels.cc).
  std::optional<session::SessionSecurity> session_security(uint64_t id) const;
  // The random prefix of the nonces this connection seals with (MS-SMB2
  // 3.1.4.3). Channels of one session seal with one key: each needs a
  // prefix no other channel of the session ever used.
  uint32_t nonce_prefix() const;
  void set_nonce_prefix(uint32_t prefix);
  // Session.ChannelSequence of session `id` for this connection's 3.x
  // requests (session::ClientMachine::set_channel_sequence).
  void set_channel_sequence(uint64_t id, uint16_t seq);
  // Requests sent and not answered yet (for spreading I/O over channels).
  size_t in_flight() const;
  // READ and WRITE bytes the caller has outstanding on this connection
  // (io_begin when it submits one, io_end when it completes): the
  // multichannel route picks the channel with the fewest.
  void io_begin(uint64_t bytes) { io_bytes_.fetch_add(bytes, std::memory_order_relaxed); }
  void io_end(uint64_t bytes) { io_bytes_.fetch_sub(bytes, std::memory_order_relaxed); }
  uint64_t io_outstanding() const { return io_bytes_.load(std::memory_order_relaxed); }

  // Why the connection is dead, if it is.
  std::optional<Error> dead() const;
  // Whether it is, without taking a lock (for callers that hold their own,
  // such as the client's state lock, a leaf).
  bool is_dead() const { return is_dead_.load(std::memory_order_acquire); }
  void close();
  // Shuts the socket down as a network failure would (tests, tools): the
  // receiver then fails what is in flight.
  void shutdown_socket() { tcp_.shutdown(); }

  uint32_t credits_available() const;
  ConnectionStats stats() const;
  // Buffers for frames and transfer chunks, reused instead of allocated.
  BufferPool& pool() { return *pool_; }

 private:
  explicit Connection(ConnectionOptions opts) : opts_(std::move(opts)) {}
  Result<void> negotiate();
  void reader_loop();
  // Marks the connection dead (the first error stays) and completes every
  // request that nothing still reads or writes the buffers of, here: on a
  // thread that holds none of our locks and is not submitting.
  void fail_all(const Error& e) EXCLUDES(send_mu_, mu_);
  // The same from a submitting thread (or under send_mu_): marks it dead
  // now and leaves the completions to the completion thread.
  void fail_all_later(const Error& e) EXCLUDES(mu_);
  // Runs done(result) on the completion thread: what a submitting call
  // must not run itself.
  void complete_later_locked(Completion done, Result<session::Response> result) REQUIRES(mu_);
  // Waits until `charge` credits can be paid; the error when the
  // connection is dead or closing, the wait times out, or nothing
  // outstanding could return credits.
  std::optional<Error> wait_credits(uint16_t charge, Clock::time_point deadline) REQUIRES(mu_);
  void expire(Clock::time_point now) EXCLUDES(mu_);

  struct Waiter {
    Completion done;
    Clock::time_point deadline;
    MutableByteView read_into;
    const transport::Pipe* splice_into = nullptr;
    bool receiving = false;  // data is being read into read_into: do not expire
    // The frame still reads the caller's buffer (its payload is being
    // signed/encrypted on a send worker, or written by the submitting
    // thread): do not complete the request yet. What arrives meanwhile
    // (a response, a failure) is held and reported once sending ends
    // (finish_sending).
    bool sending = false;
    std::optional<Error> failed;
    std::optional<Result<session::Response>> answered;
    // Interim responses (STATUS_PENDING) move `deadline` on, but never past
    // this (pending_limit_for): a server cannot keep us waiting forever.
    Clock::time_point pending_limit = Clock::time_point::max();
  };
  // When a request sent at `sent` stops waiting however many interim
  // responses come: kPendingFactor x the timeout after it was sent; a
  // blocking LOCK never (its caller ends it with cancel()).
  static constexpr int kPendingFactor = 2;
  Clock::time_point pending_limit_for(uint16_t command, Clock::time_point sent) const;
  // The largest Direct TCP frame a response may legitimately arrive in,
  // from what NEGOTIATE settled (set_frame_limit); a longer one is refused
  // before anything is allocated for it, and the connection torn down.
  static size_t frame_limit_for(const ServerInfo& s);
  // Reads one frame and runs it through the machine (under mu_); a sealed
  // frame goes to the crypto workers instead and leaves rs empty.
  Result<void> read_and_receive(std::vector<session::Response>& rs) EXCLUDES(mu_);
  // Receive staging (reader thread only): small frames and frame headers
  // come out of one recv instead of three per frame; a payload of at least
  // kRxDirect bytes still goes from the socket straight to its
  // destination (rx_read).
  static constexpr size_t kRxStaging = 32 * 1024, kRxDirect = 16 * 1024;
  Result<void> rx_read(std::byte* dst, size_t n, Clock::time_point deadline);
  // A READ payload of dest.size() bytes into the pipe: what staging holds
  // of it written, the rest spliced from the socket; if the pipe fills
  // up, what it took is read back into dest and the rest is read there.
  // Whether the data is in the pipe.
  Result<bool> rx_splice(const transport::Pipe& p, MutableByteView dest, Clock::time_point deadline);
  size_t rx_buffered() const { return rx_len_ - rx_pos_; }
  std::unique_ptr<std::byte[]> rx_{new std::byte[kRxStaging]};
  size_t rx_pos_ = 0, rx_len_ = 0;
  // The last frame was large: refill only what is asked for (reading ahead
  // would pull the next large payload through staging, one copy more).
  bool rx_last_large_ = false;
  // Matches responses to waiters and runs their completions.
  void dispatch(std::vector<session::Response>& rs) EXCLUDES(mu_);
  // Decrypts a sealed frame on a worker, then dispatches it.
  Result<void> unseal_async(std::shared_ptr<Bytes> buf, size_t len);
  // A lone, successful READ response whose payload goes straight into its
  // waiter's buffer (read there, or decrypted there), found from the
  // message's header and READ fixed part (`fixed`, its first 80 bytes) and
  // its length; the waiter is marked receiving until release_direct.
  struct DirectRead {
    uint64_t mid = 0;
    MutableByteView dest;                    // DataLength bytes of the caller's buffer
    const transport::Pipe* pipe = nullptr;   // the caller's splice pipe, if any
    size_t data_off = 0;                     // DataOffset: the bytes before stay in the frame
    bool signed_frame = false;
  };
  std::optional<DirectRead> claim_direct(ByteView fixed, size_t msg_len) EXCLUDES(mu_);
  void release_direct(uint64_t mid) REQUIRES(mu_);
  // Signs/encrypts and writes one deferred request (on a send worker).
  void transmit_deferred(uint64_t mid, std::shared_ptr<session::Request> req,
                         std::shared_ptr<session::OutFrame> frame);
  // Writes a finished frame; a failure kills the connection.
  // The first failure also fails every waiter (fail_all) and is returned.
  // On failure the connection is dead and every waiter fails (on the
  // completion thread); the error is returned.
  Result<void> write_frame(const session::OutFrame& frame) EXCLUDES(mu_, write_mu_);
  // The frame of `mid` no longer reads the caller's buffer (`sent`: whether
  // it got out): clears Waiter::sending and completes the request with
  // what arrived meanwhile, or with the failure, if any; `here`: on this
  // thread (a send worker), else on the completion thread (the submitter).
  enum class RunOn { here, completion_thread };
  void finish_sending(uint64_t mid, Result<void> sent, RunOn where) EXCLUDES(mu_);
  std::unique_ptr<WorkerPool> crypto_;
  // Signing/encryption of large WRITEs, off the submitting thread and
  // outside mu_ (separate from crypto_ so the receiver never waits behind
  // a send blocked on a full socket).
  std::unique_ptr<WorkerPool> send_pool_;

  ConnectionOptions opts_;
  ServerInfo server_;
  std::array<std::byte, 16> client_guid_{};
  NegotiateOffer offer_;
  transport::TcpStream tcp_;
  std::string peer_;
  std::shared_ptr<BufferPool> pool_ = BufferPool::create();
  std::thread reader_;
  std::atomic<uint64_t> io_bytes_{0};
  std::atomic<bool> is_dead_{false};  // dead_ is set

  // Lock order: gather_mu_, then send_mu_, then mu_ or write_mu_ (never
  // both of those). No completion, break handler or observer runs under
  // any of them.
  struct Gathered {
    session::Request req;
    Completion done;
  };
  // What submit_gathered queued, and whether a thread is sending it.
  Mutex gather_mu_ ACQUIRED_BEFORE(send_mu_, mu_);
  std::vector<Gathered> gather_q_ GUARDED_BY(gather_mu_);
  bool gathering_ GUARDED_BY(gather_mu_) = false;
  // Credit waits and MessageId assignment, in arrival order; frames that
  // are not transformed on a worker are written under it, so they leave
  // in MessageId order.
  Mutex send_mu_ ACQUIRED_BEFORE(mu_, write_mu_);
  // The protocol state and the requests in flight.
  mutable Mutex mu_;
  CondVar credits_cv_;  // credits came back, or the connection died (with mu_)
  session::ClientMachine machine_ GUARDED_BY(mu_);
  std::map<uint64_t, Waiter> waiters_ GUARDED_BY(mu_);
  size_t direct_waiters_ GUARDED_BY(mu_) = 0;  // waiters with read_into
  std::optional<Error> dead_ GUARDED_BY(mu_);
  ConnectionStats stats_ GUARDED_BY(mu_);
  uint32_t nonce_prefix_ GUARDED_BY(mu_) = 0;
  // Before NEGOTIATE completes: its response (contexts and SPNEGO hints)
  // is small.
  size_t frame_limit_ GUARDED_BY(mu_) = 1u << 20;
  bool closing_ GUARDED_BY(mu_) = false;
  std::shared_ptr<BreakHandler> break_handler_ GUARDED_BY(mu_);
  // Frames go out whole.
  Mutex write_mu_;
  // Completions a submitting call produced (failures before or while
  // sending): one thread, started on first use. Declared last, so it is
  // joined first, while everything its jobs touch still exists.
  std::unique_ptr<WorkerPool> completer_ GUARDED_BY(mu_);
};

// Builds a request: a 64-byte header slot followed by the body that
// `encode` appends.
template <class F>
Result<session::Request> make_request(uint16_t command, uint64_t session_id, uint32_t tree_id,
                                      F&& encode) {
  session::Request r;
  r.hdr.Command = command;
  r.hdr.SessionId = session_id;
  r.hdr.TreeId = tree_id;
  r.msg.resize(proto::kHeaderSize);
  ByteWriter w(r.msg);
  auto e = encode(w);
  if (!e) return e.take_error();
  return r;
}

// MS-SMB2 2.2.3: the NEGOTIATE request that makes `offer`; with 3.1.1
// offered, its contexts (2.2.3.1): SHA-512 preauth integrity with a fresh
// salt, the offer's ciphers and signing algorithms, and `host` as NetName.
Result<session::Request> negotiate_request(const NegotiateOffer& offer, const std::string& host);

// MS-SMB2 2.2.5: one SESSION_SETUP request of an authentication carrying
// the GSS `token`; PreviousSessionId names a session to reclaim (first
// round only).
// `flags`: SMB2_SESSION_FLAG_BINDING to bind a channel (MS-SMB2 3.2.4.2.3).
Result<session::Request> session_setup_request(uint64_t session_id, bool require_signing, ByteView token,
                                               uint64_t previous_session_id, uint8_t flags = 0);

}  // namespace smbkit::client
