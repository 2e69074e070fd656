// One TCP connection to an SMB2 server: a receiver thread that matches
// responses to requests by MessageId (out of order), senders that wait for
// credits, and per-request deadlines. The protocol state lives in the
// sans-I/O session::Machine; this class only adds the socket, the locks and
// the clock.
#pragma once

#include <array>
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
#include "base/result.h"
#include "client/worker_pool.h"
#include "proto/negotiate.h"
#include "session/machine.h"
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
};

// What NEGOTIATE settled.
// Counters for tests, benchmarks and -v output.
struct ConnectionStats {
  uint64_t frames_in = 0, bytes_in = 0;
  uint64_t frames_out = 0, bytes_out = 0;
  uint64_t direct_read_bytes = 0;  // READ data placed straight in callers' buffers
};

struct ServerInfo {
  uint16_t dialect = 0;
  uint16_t security_mode = 0;
  uint32_t capabilities = 0;
  uint32_t max_transact = 65536, max_read = 65536, max_write = 65536;
  uint16_t cipher = 0;  // 3.1.1 negotiated cipher (0: none)
  uint16_t signing_algorithm = 1;  // proto::SigningAlgorithm (AES_CMAC default for 3.x)
  std::array<std::byte, 16> server_guid{};
  Bytes security_blob;  // the server's SPNEGO hints
  bool signing_required() const { return security_mode & 0x0002; }
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
  const std::array<std::byte, 16>& client_guid() const { return client_guid_; }

  // Sends req (waiting for credits) and calls done with the final response
  // or an error. `done` runs on the receiver thread, or on the calling
  // thread if sending fails; it must not block on another call.
  // Responses whose Status is an error are delivered as responses; the
  // caller decides (many commands carry data with warnings).
  // read_into: for a READ, the buffer its data should land in. When the
  // response is plain (not sealed) the receiver reads the payload straight
  // into it and Response::direct views it; otherwise the data stays in the
  // frame and the caller copies.
  void submit(session::Request req, Completion done, MutableByteView read_into = {});
  // Synchronous form of submit.
  Result<session::Response> call(session::Request req);

  // Session security state lives in the machine; these lock around it.
  void add_session(session::SessionSecurity s);
  void remove_session(uint64_t id);
  void begin_session_preauth();
  Bytes session_preauth_value();

  // Why the connection is dead, if it is.
  std::optional<Error> dead() const;
  void close();

  uint32_t credits_available() const;
  ConnectionStats stats() const;
  // Buffers for frames and transfer chunks, reused instead of allocated.
  BufferPool& pool() { return *pool_; }

 private:
  explicit Connection(ConnectionOptions opts) : opts_(std::move(opts)) {}
  Result<void> negotiate();
  void reader_loop();
  void fail_all(const Error& e);
  void expire(Clock::time_point now);

  struct Waiter {
    Completion done;
    Clock::time_point deadline;
    MutableByteView read_into;
    bool receiving = false;  // data is being read into read_into: do not expire
  };
  // Reads one frame and runs it through the machine (under mu_); a sealed
  // frame goes to the crypto workers instead and leaves rs empty.
  Result<void> read_and_receive(std::vector<session::Response>& rs);
  // Matches responses to waiters and runs their completions.
  void dispatch(std::vector<session::Response>& rs);
  // Decrypts a sealed frame on a worker, then dispatches it.
  Result<void> unseal_async(std::shared_ptr<Bytes> buf, size_t len);
  std::unique_ptr<WorkerPool> crypto_;
  size_t direct_waiters_ = 0;  // waiters with read_into (guarded by mu_)

  ConnectionOptions opts_;
  ServerInfo server_;
  std::array<std::byte, 16> client_guid_{};
  transport::TcpStream tcp_;
  std::shared_ptr<BufferPool> pool_ = BufferPool::create();
  std::thread reader_;

  mutable std::mutex mu_;  // machine_, waiters_, dead_
  std::condition_variable credits_cv_;
  session::Machine machine_;
  std::map<uint64_t, Waiter> waiters_;
  std::optional<Error> dead_;
  ConnectionStats stats_;  // guarded by mu_
  bool closing_ = false;

  std::mutex send_mu_;  // frames go out whole and in MessageId order
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

}  // namespace smbkit::client
