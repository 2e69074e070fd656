// The sans-I/O SMB2 server connection machine: request frames in, response
// frames out. On each received request it applies the checks of MS-SMB2
// 3.3.5.2 (frame size, decryption with the named session's key, compound
// splitting, the MessageId sequence window, CreditCharge, signature and
// encryption policy) and keeps the 3.1.1 preauth integrity hashes; on each
// response it grants credits, signs or seals per session and request, and
// builds compound and interim (STATUS_PENDING) responses. It opens no
// socket, starts no thread and reads no clock. Single owner, not
// thread-safe. The codec (proto) and the security core (session/security.h)
// are the client machine's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "auth/keys.h"
#include "base/bytes.h"
#include "base/result.h"
#include "proto/header.h"
#include "session/security.h"

namespace smbkit::session {

struct ServerConfig {
  // Credits a client may hold at once: grants grow its window towards
  // this, and never past it.
  uint32_t credit_target = 512;
  // The most credits one response grants.
  uint16_t max_grant = 256;
  // The largest Direct TCP frame accepted (MS-SMB2 2.1 allows 2^24 - 1).
  uint32_t max_frame = kMaxFrame;
};

// One request taken off the wire, checked. When `refused` is not zero the
// machine refused it (bad signature, unsigned on a signing session, not
// sealed on an encrypting session, bad CreditCharge, a related operation
// first in its chain): the caller answers with that status (error_response)
// and does not act on it.
struct ServerRequest {
  proto::Header hdr;
  std::shared_ptr<const Bytes> buf;  // the decoded frame this message lives in
  size_t offset = 0, length = 0;
  // The session and tree it runs in: a related operation's are those of
  // the one before it in the chain (MS-SMB2 3.3.5.2.7.2).
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  bool related = false;
  bool encrypted = false;  // arrived sealed by session_id
  bool signed_ = false;    // arrived with a signature that verified
  uint32_t refused = 0;
  // SESSION_SETUP on 3.1.1: the session's preauth integrity hash value
  // after this request (MS-SMB2 3.3.5.5.3), the context of its keys.
  Bytes preauth_hash;
  ByteView msg() const { return ByteView(*buf).subspan(offset, length); }
};

// One response to send. `msg` holds the 64-byte header slot followed by the
// body; the machine writes the header from `hdr` (MessageId naming the
// request it answers; Command, Status, SessionId, TreeId set by the
// caller; credits, flags and signature by the machine). `payload` (READ
// data) follows `msg` without a copy unless the response is sealed.
struct ServerResponse {
  proto::Header hdr;
  Bytes msg;
  ByteView payload;
  // READ data the transport sends after msg from the file itself (zero
  // copy): counted in the frame's length only. Needs sends_plain().
  size_t trailer = 0;
  // Optional: the writable buffer payload ends, with room ahead of it to
  // seal the frame where the payload lies (finish_frame's room). Its
  // owner keeps it alive until the frame is sent.
  MutableByteView room;
};

class ServerMachine {
 public:
  explicit ServerMachine(ServerConfig cfg = {}) : cfg_(cfg) {}

  // After NEGOTIATE: the dialect and whether multi-credit is in use
  // (MS-SMB2 3.3.5.4: dialect > 2.0.2 and SMB2_GLOBAL_CAP_LARGE_MTU).
  void set_dialect(uint16_t dialect, bool large_mtu);
  uint16_t dialect() const { return dialect_; }
  void set_nonce_prefix(uint32_t p) { nonces_.set_prefix(p); }

  void add_session(SessionSecurity s) { sessions_.add(std::move(s)); }
  void remove_session(uint64_t id) {
    sessions_.remove(id);
    session_preauth_.erase(id);
  }
  const SessionSecurity* session(uint64_t id) const { return sessions_.find(id); }

  // Connection.PreauthIntegrityHashValue (MS-SMB2 3.3.5.4).
  const auth::PreauthHash& connection_preauth() const { return conn_preauth_; }

  // MS-SMB2 2.1: the length a 4-byte Direct TCP header announces, checked
  // against the configured bounds before the frame is read.
  Result<size_t> frame_length(ByteView direct_tcp_header) const;
  // One frame without its Direct TCP header. Appends the requests it
  // carries. An error is fatal to the connection: a malformed frame or
  // chain, a sealed frame that does not decrypt or names an unknown
  // session, a MessageId outside the granted window or used before
  // (MS-SMB2 3.3.5.2.3).
  Result<void> receive(Bytes frame, std::vector<ServerRequest>& out);
  // Decryption outside the machine (on worker threads): the session a
  // sealed frame names, with its cipher and key (errors as receive's for
  // an unknown session or a malformed transform header); the caller
  // decrypts the frame in place (unseal_in_place) and hands it back, in
  // the order frames arrived, to receive_unsealed: the plaintext at
  // frame[52, 52 + length).
  struct UnsealKey {
    uint64_t session_id = 0;
    uint16_t cipher = 0;
    SecretBytes key;
  };
  Result<UnsealKey> unseal_key(ByteView transform) const;
  Result<void> receive_unsealed(Bytes frame, const UnsealKey& by, size_t length, std::vector<ServerRequest>& out);

  // MS-SMB2 3.3.5.3: an SMB1 NEGOTIATE (the multi-protocol negotiate of
  // a client that also speaks SMB1) as the connection's first frame. It
  // takes MessageId 0; the answer is an SMB2 NEGOTIATE response sent for
  // the returned request (3.3.5.3.1), whose msg() is the SMB1 message.
  Result<ServerRequest> receive_smb1_negotiate(Bytes frame);
  static bool is_smb1_negotiate(ByteView frame);

  // The final response to a request (MS-SMB2 3.3.4.1): grants credits,
  // signs or seals, frames.
  Result<void> send(ServerResponse& rsp, OutFrame& out);
  // The same, leaving the signature or seal to the caller: out.transform
  // is set and out.head empty when there is one; finish_frame(rsp.msg,
  // rsp.payload, out) then completes the frame on any thread (while rsp
  // stays alive). Frames must still go out in the order sent here.
  Result<void> send_deferred(ServerResponse& rsp, OutFrame& out);
  // Whether the final response to `message_id` goes out neither signed
  // nor sealed (so that it may carry a trailer).
  bool sends_plain(uint64_t message_id) const;
  // Whether the final response to `message_id` goes out sealed.
  bool seals(uint64_t message_id) const;
  // Responses to the requests of one compound frame, in order, as one
  // frame (MS-SMB2 3.3.4.1.3): each but the last padded to 8 bytes, each
  // signed on its own, sealed as one transform if any is sealed. No
  // payloads. The last may be an interim response (interim_response): a
  // request that goes async ends what can be answered of its chain now.
  Result<void> send_compound(std::vector<ServerResponse>& rsps, OutFrame& out);
  // An interim response (MS-SMB2 3.3.4.2): STATUS_PENDING with the
  // AsyncId the final response will carry; it grants the request's credits.
  Result<void> send_interim(uint64_t message_id, uint64_t async_id, OutFrame& out);
  // A message the server sends unasked (MS-SMB2 3.3.4.6/3.3.4.7 oplock
  // and lease break notifications): MessageId 0xFFFFFFFFFFFFFFFF, no
  // credits, not signed (as smbd); sealed with the keys of
  // `seal_session` when that session encrypts its traffic. rsp.hdr's
  // Command, SessionId and TreeId are the caller's.
  Result<void> send_unsolicited(ServerResponse& rsp, uint64_t seal_session, OutFrame& out);
  // The same interim response, not framed: for send_compound, after the
  // responses of the requests before it in its chain.
  Result<ServerResponse> interim_response(uint64_t message_id, uint64_t async_id);
  // A response to req with this status: the header fields it echoes and
  // a header slot; the caller appends the body, then send().
  static ServerResponse response_to(const ServerRequest& req, uint32_t status);
  // The body of an SMB2 ERROR response (MS-SMB2 2.2.2) for a request,
  // e.g. one the machine refused, ready for send().
  static ServerResponse error_response(const ServerRequest& req, uint32_t status);

  // Whether a request's CreditCharge pays for `expected_response_bytes`
  // back (MS-SMB2 3.3.5.2.5): READ Length, QUERY_DIRECTORY and IOCTL
  // output sizes are the command handler's to check.
  bool charge_covers(const ServerRequest& req, uint64_t expected_response_bytes) const;

  // Credits the client holds now: MessageIds granted and not yet used.
  uint64_t credits_granted() const { return window_end_ - window_start_ - used_.size(); }
  size_t pending() const { return pending_.size(); }

 private:
  // A request that has not had its final response.
  struct Pending {
    uint16_t command = 0;
    uint64_t session_id = 0;
    uint16_t credit_request = 0;
    uint16_t charge = 0;  // CreditCharge as received
    bool encrypted = false, signed_ = false, related = false;
    bool flagged_signed = false;  // SMB2_FLAGS_SIGNED set, verified or not
    bool granted = false;         // an interim response already granted its credits
    uint64_t async_id = 0;
    std::optional<auth::PreauthHash> preauth;  // SESSION_SETUP in progress
  };
  // MS-SMB2 3.3.5.2.3 / 3.3.1.1: takes [mid, mid + charge) out of the
  // sequence window, or fails.
  Result<void> consume(uint64_t mid, uint16_t charge);
  // The checks of one message of a (possibly compound) frame.
  Result<void> check(ServerRequest& r, uint64_t sealed_session);
  // The requests of frame[off, end), sealed by `sealed` (0: plain).
  Result<void> receive_messages(std::shared_ptr<const Bytes> buf, size_t off, size_t end, uint64_t sealed,
                                std::vector<ServerRequest>& out);
  // Credits a response to `p` grants (MS-SMB2 3.3.1.2).
  uint16_t grant(const Pending& p);
  // Header, credits, signing and preauth for one response; returns the
  // transform it needs (sign or seal) and the pending entry it closes.
  Result<FrameTransform> stamp(ServerResponse& rsp, bool interim);
  // Whether a response to `p` (header h) is sealed, or signed.
  enum class Protect : uint8_t { none, sign, seal };
  Protect protection(const Pending& p, const proto::Header& h, bool interim) const;
  // The protection of the final response to a pending request.
  Protect final_protection(uint64_t message_id) const;

  ServerConfig cfg_;
  uint16_t dialect_ = 0;
  bool multi_credit_ = false;
  SessionTable sessions_;
  NonceSource nonces_;
  // The sequence window: MessageIds in [window_start_, window_end_) not in
  // used_ may be received. window_start_ is the lowest not used yet.
  uint64_t window_start_ = 0, window_end_ = 1;
  std::set<uint64_t> used_;
  std::map<uint64_t, Pending> pending_;
  auth::PreauthHash conn_preauth_;
  // Per session being set up: the hash after its last response.
  std::map<uint64_t, auth::PreauthHash> session_preauth_;
};

}  // namespace smbkit::session
