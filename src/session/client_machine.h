// The sans-I/O SMB2 client connection machine: MessageIds and the credit
// window, the pending-request table, signing, sealing and verification,
// compound splitting and interim (STATUS_PENDING) responses (MS-SMB2 3.2).
// Keys, signing, sealing and framing come from the role-free core
// (session/security.h) it shares with session::ServerMachine. It takes
// frames in and hands frames out; it opens no socket, starts no thread and
// reads no clock, so it can be driven byte for byte by tests and simulators.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/header.h"
#include "session/credits.h"
#include "session/security.h"

namespace smbkit::session {

// One request to send. `msg` holds the 64-byte header slot followed by the
// body; the machine writes the header from `hdr` after assigning MessageId,
// CreditCharge and CreditRequest. `payload` is sent after `msg` without
// being copied (WRITE data) unless the message must be encrypted.
struct Request {
  proto::Header hdr;
  Bytes msg;
  ByteView payload;
  uint64_t charge_bytes = 0;  // max(bytes sent, bytes expected back)
  bool encrypt = false;       // tree or session requires encryption
  bool sign = false;          // sign even if the session does not require it
  // Leave signing/encryption to the caller (finish_frame), so that large
  // WRITEs are transformed on worker threads outside the machine's lock.
  bool defer_transform = false;
};

// Applies out.transform to req (signs req.msg in place, or encrypts req.msg
// and req.payload) and builds out's Direct TCP frame (session/security.h).
// MS-SMB2 3.2.4.1.1 (signing), 3.1.4.3 (encryption).
inline Result<void> finish_frame(Request& req, OutFrame& out) {
  return finish_frame(MutableByteView(req.msg), req.payload, out);
}

struct Response {
  proto::Header hdr;
  std::shared_ptr<const Bytes> buf;  // the decoded frame this message lives in
  size_t offset = 0, length = 0;
  bool encrypted = false;
  bool interim = false;  // STATUS_PENDING: the final response comes later
  // The signature could not be checked because the session's keys were not
  // known yet (final SESSION_SETUP response, or the final answer to a
  // binding, signed with the new channel's key): the caller must verify.
  bool signature_unchecked = false;
  // Answers a request we abandoned (timed out): credits counted, else ignore.
  bool orphan = false;
  // A READ whose data the transport placed straight into the caller's
  // buffer: the message is msg() followed by these bytes.
  ByteView direct;
  ByteView msg() const { return ByteView(*buf).subspan(offset, length); }
};

struct ClientMachineConfig {
  uint32_t credit_target = 512;  // window we grow towards
};

class ClientMachine {
 public:
  explicit ClientMachine(ClientMachineConfig cfg = {}) : cfg_(cfg) {}

  // After NEGOTIATE: the dialect and whether multi-credit is in use.
  void set_dialect(uint16_t dialect, bool large_mtu);
  uint16_t dialect() const { return dialect_; }
  void set_credit_target(uint32_t target) { cfg_.credit_target = target; }

  CreditWindow& credits() { return credits_; }
  const CreditWindow& credits() const { return credits_; }
  uint16_t charge_for(uint64_t bytes) const { return credits_.charge(bytes); }
  bool can_send(uint64_t charge_bytes) const { return credits_.can_send(charge_for(charge_bytes)); }

  void add_session(SessionSecurity s) { sessions_.add(std::move(s)); }
  void remove_session(uint64_t id) {
    sessions_.remove(id);
    channel_sequence_.erase(id);
  }
  const SessionSecurity* session(uint64_t id) const { return sessions_.find(id); }
  // Session.ChannelSequence (MS-SMB2 3.2.1.3): stamped into the
  // ChannelSequence field of every 3.x request of session `id` (2.2.1.2;
  // before it is set, the Status a request was built with goes out).
  // It only moves forward (16-bit serial arithmetic): an older value set
  // late is ignored.
  void set_channel_sequence(uint64_t id, uint16_t seq);
  uint16_t channel_sequence(uint64_t id) const;

  // 3.1.1 preauth integrity: the connection hash (NEGOTIATE) and the hash of
  // the session setup in progress (start it with begin_session_preauth()).
  const auth::PreauthHash& connection_preauth() const { return conn_preauth_; }
  void begin_session_preauth() { sess_preauth_ = conn_preauth_; }
  const auth::PreauthHash& session_preauth() const { return sess_preauth_; }

  // Assigns MessageId and credits, signs or encrypts, frames (with
  // req.defer_transform: leaves out.transform for finish_frame). Fails with
  // STATUS_INSUFFICIENT_RESOURCES if the window cannot pay for it (callers
  // check can_send first and wait). Returns the MessageId.
  Result<uint64_t> send(Request& req, OutFrame& out);
  // Several requests in one frame (MS-SMB2 3.2.4.1.4), in order: each
  // message but the last padded to 8 bytes with NextCommand at the next;
  // later ones may be related (the caller sets SMB2_FLAGS_RELATED_OPERATIONS
  // and FileId 0xFFFFFFFFFFFFFFFF: the file the first one opened). Each
  // message is signed on its own; a sealed chain is one transform. No
  // payloads, deferred transforms, NEGOTIATE or SESSION_SETUP; one
  // session. Returns the MessageIds. The credits needed: compound_charge.
  Result<std::vector<uint64_t>> send_compound(std::vector<Request>& reqs, OutFrame& out);
  uint16_t compound_charge(const std::vector<Request>& reqs) const;
  // A CANCEL for a pending request (MS-SMB2 3.2.4.24): uses no credit.
  Result<void> send_cancel(uint64_t message_id, OutFrame& out);

  // One frame without its 4-byte Direct TCP header. Appends the messages
  // it carries. A malformed frame is a connection-fatal error, and so is a
  // message that fails the checks against the request it answers (MS-SMB2
  // 3.2.5.1): it must carry the request's SessionId, be signed when the
  // request was signed or its session signs, and be encrypted (by that
  // session) when the request was encrypted or its session encrypts. Such
  // an error is a security violation (is_security_violation): something on
  // the path is lying, and the request is not sent again.
  Result<void> receive(Bytes frame, std::vector<Response>& out);
  // Same for the first `len` bytes of a (pooled) buffer; an encrypted frame
  // is decrypted in place.
  Result<void> receive(std::shared_ptr<Bytes> buf, size_t len, std::vector<Response>& out);
  // Decryption outside the machine (on worker threads): the key a sealed
  // frame needs, then the decrypted messages handed back. `buf[base, end)`
  // holds one message or a compound chain; `encrypted` says it arrived
  // sealed (so it is not signature-checked).
  struct UnsealKey {
    uint16_t cipher;
    SecretBytes key;
  };
  Result<UnsealKey> unseal_key(ByteView transform) const;
  // `sealed_session`: the SessionId of the transform header the messages
  // arrived in (0: they arrived plain).
  Result<void> receive_messages(std::shared_ptr<Bytes> buf, size_t base, size_t end, uint64_t sealed_session,
                                std::vector<Response>& out);
  // One message (not compound) split in two: buf holds its first head_len
  // bytes from `base` on, `direct` the rest (READ data already in the
  // caller's buffer). sealed_session: the SessionId of the transform header
  // it was decrypted from, or 0 for a plain message, whose signature is
  // checked over both pieces.
  Result<void> receive_split(std::shared_ptr<Bytes> buf, size_t base, size_t head_len, ByteView direct,
                             uint64_t sealed_session, std::vector<Response>& out);

  size_t pending() const { return pending_.size(); }
  bool is_pending(uint64_t mid) const { return pending_.count(mid) != 0; }
  // Forget a request (timed out, connection lost).
  void abandon(uint64_t mid) { pending_.erase(mid); }

  // Nonces: 64-bit counter in the low bytes, random prefix set once.
  void set_nonce_prefix(uint32_t p) { nonces_.set_prefix(p); }

 private:
  // What the response to a request in flight is checked against.
  struct Pending {
    uint16_t command;
    uint64_t session_id;
    uint64_t async_id = 0;
    bool encrypted;        // the request went out sealed
    bool signed_ = false;  // the request went out signed
    // A SESSION_SETUP with SMB2_SESSION_FLAG_BINDING: its final answer is
    // signed with the new channel's key, which only the caller can derive.
    bool binding = false;
  };
  Result<void> finish_message(Response& r, uint64_t sealed_session);
  // MS-SMB2 3.2.5.1.3: a response's security against its request.
  Result<void> check_security(const Pending& p, Response& r, uint64_t sealed_session);
  // MessageId, credits, the SIGNED flag, and the header bytes written into
  // req.msg, for a request about to go out.
  void stamp_header(Request& req, uint16_t charge, bool sign);

  ClientMachineConfig cfg_;
  CreditWindow credits_;
  uint16_t dialect_ = 0;
  SessionTable sessions_;
  std::map<uint64_t, uint16_t> channel_sequence_;
  std::map<uint64_t, Pending> pending_;
  auth::PreauthHash conn_preauth_, sess_preauth_;
  NonceSource nonces_;
};

}  // namespace smbkit::session
