// The role-free session security core shared by the client and the server
// machines: a session's keys named by direction (the key we sign with, the
// key we seal what we send with, the key we unseal what we receive with),
// built from the derived keys for a role; the seal transform and its nonce
// source; signature verification of a received message; the sessions of a
// connection with their keyed unsealers; which messages feed the 3.1.1
// preauth integrity hashes; and finish_frame, which signs or seals one
// outgoing message and frames it for Direct TCP. Nothing here knows which
// side of the connection it runs on.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "auth/keys.h"
#include "auth/sealing.h"
#include "auth/signing.h"
#include "base/bytes.h"
#include "base/result.h"
#include "base/secret.h"
#include "proto/header.h"

namespace smbkit::session {

// MS-SMB2 2.1: Direct TCP transport header (0x00 + 24-bit big-endian length).
inline constexpr size_t kDirectTcpHeader = 4;
inline constexpr uint32_t kMaxFrame = 0x00FFFFFF;
// Room a message needs ahead of it to be framed and sealed where it lies:
// the Direct TCP header and a TRANSFORM_HEADER (MS-SMB2 2.2.41).
inline constexpr size_t kFrameHeadroom = kDirectTcpHeader + proto::kTransformHeaderSize;

// Which end of the connection a SessionSecurity belongs to. It only picks
// which derived cipher key seals what we send and which unseals what we
// receive.
enum class Role : uint8_t { client, server };

// Security state of one SMB2 session (MS-SMB2 3.2.1.3 client, 3.3.1.8 server).
struct SessionSecurity {
  uint64_t session_id = 0;
  bool signing_required = false;  // sign what we send, refuse what arrives unsigned
  auth::SignAlg sign_alg = auth::SignAlg::hmac_sha256;
  // The keys are wiped when the session (or any copy of it) is freed.
  // Session.SigningKey: one key for both directions (MS-SMB2 3.1.4.1).
  SecretBytes signing_key;
  bool encrypt_data = false;  // Session.EncryptData: seal every message
  uint16_t cipher = 0;        // proto::Cipher
  SecretBytes seal_key;       // seals the messages we send
  SecretBytes unseal_key;     // unseals the messages we receive
  bool can_encrypt() const { return cipher != 0 && !seal_key.empty(); }

  // The security of session `session_id` at `role`, from the keys
  // auth::derive_session_keys gave: the client seals with the
  // client-to-server key and unseals with the server-to-client key, the
  // server the other way round. `cipher` counts from 3.0 on (MS-SMB2
  // 3.1.4.3); `signing_algorithm` is proto::SigningAlgorithm (3.1.1).
  // Signing and encryption policy (signing_required, encrypt_data) is the
  // caller's to set.
  static SessionSecurity from_keys(Role role, uint64_t session_id, uint16_t dialect, uint16_t cipher,
                                   uint16_t signing_algorithm, const auth::SessionKeys& keys);
  // Derives the keys (MS-SMB2 3.1.4.2) from the GSS session key and the
  // session's preauth hash value (3.1.1), then as from_keys.
  static SessionSecurity derive(Role role, uint64_t session_id, uint16_t dialect, uint16_t cipher,
                                uint16_t signing_algorithm, ByteView gss_session_key, ByteView preauth_hash);
};

// A signature or encryption still to apply to an outgoing message. Holds
// copies of what it needs, so it can run on any thread after the machine
// moved on.
struct FrameTransform {
  enum class Kind : uint8_t { none, sign, seal };
  Kind kind = Kind::none;
  uint16_t algorithm = 0;  // auth::SignAlg value for sign, proto::Cipher for seal
  SecretBytes key;
  uint64_t session_id = 0;
  std::array<std::byte, 16> nonce{};
  size_t nonce_len = 0;
};

// The sign transform of session `s`.
FrameTransform sign_transform(const SessionSecurity& s);

// Nonces for seal transforms (MS-SMB2 3.1.4.3): they must never repeat
// under one key. A 64-bit counter in the low bytes and a per-connection
// random prefix above it (11 bytes used for CCM, 12 for GCM); the counter
// does not wrap in any connection's lifetime.
class NonceSource {
 public:
  void set_prefix(uint32_t p) { prefix_ = p; }
  // The seal transform for one message (or one compound chain) of `s`:
  // its seal key and a fresh nonce.
  FrameTransform seal_transform(const SessionSecurity& s);

 private:
  uint64_t counter_ = 1;
  uint32_t prefix_ = 0;
};

// What to write to the socket: `head` (Direct TCP length + message or
// transform) then `payload`.
struct OutFrame {
  Bytes head;
  ByteView payload;
  // The frame's own buffer when it is not in head (a sealed message with a
  // payload, encrypted into a buffer that was not zeroed first): payload
  // points into it.
  std::shared_ptr<std::byte[]> storage;
  // Bytes the transport sends after payload from elsewhere (a READ's data
  // straight from the file): counted in the Direct TCP length, not in
  // size(). Only on a frame neither signed nor sealed.
  size_t trailer = 0;
  // Non-none only for a deferred transform: head is empty until
  // finish_frame ran.
  FrameTransform transform;
  size_t size() const { return head.size() + payload.size(); }
};

// Applies out.transform to one outgoing message (signs msg in place, or
// encrypts msg and payload) and builds out's Direct TCP frame: msg (one
// message or a compound chain) followed by payload, sent without a copy
// when not sealed. Thread-safe: cipher contexts are kept per thread.
// MS-SMB2 3.1.4.1 (signing), 3.1.4.3 (encryption).
//
// room (optional): a writable buffer that ends where payload ends, with at
// least kFrameHeadroom + msg.size() bytes of it ahead of the payload (a
// READ's data read into it at that offset). A sealed frame is then built
// inside it: msg is put ahead of the payload and the whole is encrypted in
// place, with no copy of the payload and no new buffer; out.head is left
// empty and out.payload is the frame, in room, which the caller keeps
// alive until the frame is sent. A room that does not fit is not used;
// a sealed message with a payload is then encrypted into out.storage.
Result<void> finish_frame(MutableByteView msg, ByteView payload, OutFrame& out, MutableByteView room = {});
// Whether finish_frame can seal msg + payload inside room.
bool seals_in_room(ByteView msg, ByteView payload, MutableByteView room);

// Decrypts one sealed frame (transform header + ciphertext) in place with
// `key` (MS-SMB2 3.3.5.2.1.1, 3.2.5.1.1.1): the plaintext length, at
// frame[52, 52 + n). Thread-safe like finish_frame. A frame that does not
// decrypt is a security violation.
Result<size_t> unseal_frame(uint16_t cipher, const Bytes& key, MutableByteView frame);

// MS-SMB2 3.1.5.1: verifies the signature of one received message given as
// pieces (the message, then any data placed elsewhere). STATUS_INVALID_SIGNATURE
// as a security violation when it does not verify.
Result<void> verify_received(const SessionSecurity& s, std::span<const ByteView> pieces);

// The sessions of one connection with their keyed decryption contexts
// (built on first use, dropped with the session).
class SessionTable {
 public:
  void add(SessionSecurity s) {
    unsealers_.erase(s.session_id);
    sessions_[s.session_id] = std::move(s);
  }
  void remove(uint64_t id) {
    sessions_.erase(id);
    unsealers_.erase(id);
  }
  const SessionSecurity* find(uint64_t id) const {
    auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : &it->second;
  }
  size_t size() const { return sessions_.size(); }

  // The session a sealed frame names and its unseal key (for decryption
  // outside the machine). Errors: a malformed transform header, or a
  // session unknown or without an unseal key (a protocol error).
  Result<const SessionSecurity*> sealed_by(ByteView transform) const;
  // Decrypts one transform (header + ciphertext, the whole frame) in place
  // with the key of the session it names (MS-SMB2 3.2.5.1.1.1, 3.3.5.2.1.1).
  // Returns the session and the plaintext length (at frame[52, 52 + n)). A
  // frame that does not decrypt is a security violation.
  struct Unsealed {
    uint64_t session_id;
    size_t length;
  };
  Result<Unsealed> unseal_in_place(MutableByteView frame);

 private:
  std::map<uint64_t, SessionSecurity> sessions_;
  std::map<uint64_t, std::unique_ptr<auth::Unsealer>> unsealers_;
};

// MS-SMB2 3.2.5.2, 3.3.5.4, 3.3.5.5 (3.1.1 preauth integrity): which hash
// a message, sent or received, feeds. The connection's hash restarts at a
// NEGOTIATE request and takes its response; a session's takes its
// SESSION_SETUP requests and the responses that ask for more
// (STATUS_MORE_PROCESSING_REQUIRED), never the final one.
enum class PreauthFeed : uint8_t { none, connection_restart, connection, session };
PreauthFeed preauth_feed(const proto::Header& h);
// Feeds `msg` (whose header is h) into the hash preauth_feed(h) names.
void feed_preauth(const proto::Header& h, ByteView msg, auth::PreauthHash& connection, auth::PreauthHash& session);

// The error of a message that failed verification (bad or missing
// signature, missing encryption, another session's message, a frame that
// does not decrypt): the connection is torn down, and a client does not
// send its requests again.
// Most messages one compound frame may carry.
inline constexpr size_t kMaxCompoundMessages = 64;

// One message of a compound chain: its header and where it lies in the frame.
struct ChainMessage {
  proto::Header hdr;
  size_t offset = 0, length = 0;
};

// Walks the messages of frame[base, end) (MS-SMB2 3.2.5.1.9 for responses,
// 3.3.5.2.7 for requests): each but the last ends where its NextCommand
// says, 8-byte aligned and inside the frame; at most kMaxCompoundMessages.
// Calls each(message, index) in order; an error from it ends the walk.
template <class F>
Result<void> for_each_chain_message(ByteView frame, size_t base, size_t end, F&& each) {
  if (base > end || end > frame.size()) return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  size_t off = base;
  for (size_t n = 0;; n++) {
    if (n >= kMaxCompoundMessages) return protocol_error("compound chain too long");
    ByteView rest = frame.subspan(off, end - off);
    SMBKIT_TRY(proto::Header h, proto::decode_header(rest));
    size_t len = rest.size();
    if (h.NextCommand) {
      if (h.NextCommand % 8 || h.NextCommand < proto::kHeaderSize || h.NextCommand >= rest.size())
        return protocol_error("bad NextCommand in a compound chain");
      len = h.NextCommand;
    }
    SMBKIT_CHECK(each(ChainMessage{h, off, len}, n));
    if (!h.NextCommand) return {};
    off += len;
  }
}

Error security_violation(uint32_t status, std::string what);
bool is_security_violation(const Error& e);

}  // namespace smbkit::session
