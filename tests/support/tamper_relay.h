// A man-in-the-middle relay on loopback for the security tests: it reads
// every Direct TCP frame in both directions and hands it to a hook that
// may rewrite it, drop it, answer in the server's place, or close the
// connection. It plays the hostile network (or a hostile server in front
// of a real one) so that each check of docs/design/security.md can be
// shown failing against the real smbd.
//
// Frames are whole SMB2 messages (or compound chains, or transform
// headers) without the 4-byte Direct TCP length: the relay frames them
// again on the way out, so a hook may change their length.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::testing {

enum class Toward : uint8_t { server, client };

// What the hook sees and may do for one frame.
class TamperContext {
 public:
  virtual ~TamperContext() = default;
  // Which accepted connection this is (0 for the first).
  virtual int connection() const = 0;
  // Sends a frame of our own (framed by the relay), after `delay` from now.
  // Frames sent toward one side go out in the order they are due.
  virtual void send(Toward to, Bytes frame, std::chrono::milliseconds delay = {}) = 0;
};

enum class Verdict : uint8_t {
  forward,  // the (possibly rewritten) frame goes on
  drop,     // it vanishes
  close,    // both sockets are reset, as a cut link would
};

// Runs on the relay's threads, one frame at a time per connection.
using TamperHook = std::function<Verdict(Toward, Bytes& frame, TamperContext&)>;

class TamperRelay {
 public:
  // Relays 127.0.0.1:port() to 127.0.0.1:target_port; `hook` may be null
  // (plain relay) and replaced later with set_hook.
  static Result<std::unique_ptr<TamperRelay>> start(uint16_t target_port, TamperHook hook = {});
  ~TamperRelay();
  uint16_t port() const { return port_; }
  // Replaces the hook and waits for a call of the old one in progress:
  // once it returns, the old hook runs no more (set_hook({}) unhooks).
  // Not from inside a hook.
  void set_hook(TamperHook hook);
  // Frames seen so far in each direction (before the hook's verdict).
  uint64_t frames(Toward t) const { return t == Toward::server ? to_server_.load() : to_client_.load(); }
  // Connections accepted so far.
  int connections() const { return accepted_.load(); }

 private:
  TamperRelay() = default;
  class Conn;
  void accept_loop();
  // Runs the hook (forward when there is none), counted in active_.
  Verdict call_hook(Toward to, Bytes& frame, TamperContext& ctx);

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> to_server_{0}, to_client_{0};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  // Lock order: mu_ is a leaf; the hook runs outside it.
  mutable std::mutex mu_;
  std::condition_variable idle_;              // active_ fell to 0
  int active_ = 0;                            // hook calls in progress, guarded by mu_
  TamperHook hook_;                           // guarded by mu_
  std::vector<std::shared_ptr<Conn>> conns_;  // guarded by mu_
};

// A hook for a scope: set on construction, removed (and any call of it in
// progress waited for) on destruction. Declared after the locals its hook
// uses, it goes first, so the relay's threads never call a hook whose
// locals are gone (a fixture's relay outlives the test body).
class ScopedHook {
 public:
  ScopedHook(TamperRelay& r, TamperHook hook) : r_(r) { r_.set_hook(std::move(hook)); }
  ~ScopedHook() { r_.set_hook({}); }
  ScopedHook(const ScopedHook&) = delete;
  ScopedHook& operator=(const ScopedHook&) = delete;

 private:
  TamperRelay& r_;
};

// SMB2 header fields by offset (MS-SMB2 2.2.1.2), for hooks that rewrite
// a plain message in place. `at` is the message's offset in the frame
// (a later message of a compound chain starts at its predecessor's
// NextCommand).
namespace smb2 {
inline constexpr size_t kStatus = 8, kCommand = 12, kCredit = 14, kFlags = 16, kNextCommand = 20,
                        kMessageId = 24, kAsyncId = 32, kTreeId = 36, kSessionId = 40, kSignature = 48,
                        kHeaderSize = 64;
inline constexpr uint32_t kFlagServerToRedir = 0x1, kFlagAsync = 0x2, kFlagSigned = 0x8;
// A plain SMB2 message (not a transform or compression header).
bool is_plain(const Bytes& f);
// A transform header (encrypted message).
bool is_sealed(const Bytes& f);
bool is_response(const Bytes& f, size_t at = 0);
uint16_t command(const Bytes& f, size_t at = 0);
// Where each message of a compound chain starts (MS-SMB2 3.2.4.1.4,
// following NextCommand), and the chain's commands in order.
std::vector<size_t> message_offsets(const Bytes& f);
std::vector<uint16_t> chain_commands(const Bytes& f);
uint32_t status(const Bytes& f, size_t at = 0);
uint32_t flags(const Bytes& f, size_t at = 0);
uint64_t message_id(const Bytes& f, size_t at = 0);
uint64_t session_id(const Bytes& f, size_t at = 0);
void set_status(Bytes& f, uint32_t v, size_t at = 0);
void set_flags(Bytes& f, uint32_t v, size_t at = 0);
void set_session_id(Bytes& f, uint64_t v, size_t at = 0);
// Clears SMB2_FLAGS_SIGNED and zeroes the signature.
void strip_signature(Bytes& f, size_t at = 0);
// STATUS_PENDING interim response to request `req` (a plain request
// message): async, with AsyncId `async_id`, one credit granted.
Bytes interim_response(const Bytes& req, uint64_t async_id);
}  // namespace smb2

}  // namespace smbkit::testing
