#include "session/server_machine.h"

#include <algorithm>

#include "proto/constants.h"
#include "proto/error_response.h"
#include "proto/transform_header.h"
#include "session/credits.h"

namespace smbkit::session {

using namespace proto;

namespace {

// MS-SMB2 2.2.1: the StructureSize every command body starts with; its
// fixed part is StructureSize rounded down to even (an odd size counts
// the first byte of a variable buffer).
uint16_t fixed_body_size(ByteView msg) {
  if (msg.size() < kHeaderSize + 2) return 0;
  return load_le16(msg.data() + kHeaderSize) & ~uint16_t{1};
}

bool exempt_from_session_checks(uint16_t command) {
  // NEGOTIATE has no session; SESSION_SETUP is checked by authentication
  // itself (a re-authentication arrives signed or sealed by its session
  // and is verified like any request).
  return command == SMB2_NEGOTIATE || command == SMB2_SESSION_SETUP;
}

}  // namespace

void ServerMachine::set_dialect(uint16_t dialect, bool large_mtu) {
  dialect_ = dialect;
  multi_credit_ = dialect > SMB2_DIALECT_0202 && large_mtu;
}

Result<size_t> ServerMachine::frame_length(ByteView h) const {
  if (h.size() < kDirectTcpHeader) return protocol_error("short Direct TCP header");
  // MS-SMB2 2.1: a zero byte, then the 24-bit big-endian StreamProtocolLength.
  if (h[0] != std::byte{0}) return protocol_error("bad Direct TCP header");
  size_t len = (size_t(h[1]) << 16) | (size_t(h[2]) << 8) | size_t(h[3]);
  if (len < kHeaderSize || len > cfg_.max_frame) return protocol_error("Direct TCP frame size out of bounds");
  return len;
}

Result<void> ServerMachine::consume(uint64_t mid, uint16_t charge) {
  uint64_t n = std::max<uint16_t>(charge, 1);
  // MS-SMB2 3.3.1.1: every id of the range granted and never received.
  if (mid < window_start_ || mid >= window_end_ || n > window_end_ - mid)
    return protocol_error("MessageId " + std::to_string(mid) + " outside the granted window");
  for (uint64_t i = mid; i < mid + n; i++)
    if (used_.count(i)) return protocol_error("MessageId " + std::to_string(i) + " used twice");
  for (uint64_t i = mid; i < mid + n; i++) used_.insert(i);
  while (!used_.empty() && *used_.begin() == window_start_) {
    used_.erase(used_.begin());
    window_start_++;
  }
  return {};
}

Result<void> ServerMachine::receive(Bytes frame, std::vector<ServerRequest>& out) {
  if (frame.size() < 4 || frame.size() > cfg_.max_frame) return protocol_error("frame size out of bounds");
  auto buf = std::make_shared<Bytes>(std::move(frame));
  uint32_t proto_id = load_le32(buf->data());
  uint64_t sealed = 0;
  size_t off = 0, end = buf->size();
  if (proto_id == kTransformProtocolId) {
    // MS-SMB2 3.3.5.2.1.1: decrypt with the session the transform header
    // names; an unknown session or a failed tag ends the connection.
    SMBKIT_TRY(auto u, sessions_.unseal_in_place(MutableByteView(*buf)));
    sealed = u.session_id;
    off = kTransformHeaderSize;
    end = kTransformHeaderSize + u.length;
  } else if (proto_id != kSmb2ProtocolId) {
    return protocol_error("not an SMB2 request frame");
  }
  return receive_messages(std::move(buf), off, end, sealed, out);
}

Result<ServerMachine::UnsealKey> ServerMachine::unseal_key(ByteView transform) const {
  SMBKIT_TRY(const SessionSecurity* s, sessions_.sealed_by(transform));
  return UnsealKey{s->session_id, s->cipher, s->unseal_key};
}

Result<void> ServerMachine::receive_unsealed(Bytes frame, const UnsealKey& by, size_t length,
                                             std::vector<ServerRequest>& out) {
  if (length > frame.size() || frame.size() - length < kTransformHeaderSize)
    return protocol_error("bad unsealed frame");
  // The session may have gone while the frame was decrypted elsewhere.
  if (!sessions_.find(by.session_id)) return protocol_error("encrypted message for an unknown session");
  const size_t end = kTransformHeaderSize + length;
  return receive_messages(std::make_shared<const Bytes>(std::move(frame)), kTransformHeaderSize, end, by.session_id,
                          out);
}

Result<void> ServerMachine::receive_messages(std::shared_ptr<const Bytes> cbuf, size_t off, size_t end, uint64_t sealed,
                                             std::vector<ServerRequest>& out) {
  uint64_t prev_session = 0;
  uint32_t prev_tree = 0;
  return for_each_chain_message(*cbuf, off, end, [&](const ChainMessage& m, size_t n) -> Result<void> {
    const Header& h = m.hdr;
    if (h.is_response()) return protocol_error("response received from client");
    ServerRequest r;
    r.hdr = h;
    r.buf = cbuf;
    r.offset = m.offset;
    r.length = m.length;
    r.encrypted = sealed != 0;
    r.related = h.Flags & SMB2_FLAGS_RELATED_OPERATIONS;
    // MS-SMB2 3.3.5.2.7.2: a related operation runs in the session and
    // tree of the one before it.
    r.session_id = r.related && n > 0 ? prev_session : h.SessionId;
    r.tree_id = r.related && n > 0 ? prev_tree : h.TreeId;
    SMBKIT_CHECK(check(r, sealed));
    if (r.related && n == 0) r.refused = r.refused ? r.refused : STATUS_INVALID_PARAMETER;
    prev_session = r.session_id;
    prev_tree = r.tree_id;
    out.push_back(std::move(r));
    return {};
  });
}

bool ServerMachine::is_smb1_negotiate(ByteView frame) {
  // MS-SMB 2.2.3.1: 0xFF 'S' 'M' 'B', then the command, SMB_COM_NEGOTIATE.
  return frame.size() >= kSmb1HeaderSize && load_le32(frame.data()) == kSmb1ProtocolId &&
         std::to_integer<uint8_t>(frame[4]) == kSmb1ComNegotiate;
}

Result<ServerRequest> ServerMachine::receive_smb1_negotiate(Bytes frame) {
  if (dialect_ != 0 || window_start_ != 0 || !pending_.empty() || !used_.empty())
    return protocol_error("SMB1 NEGOTIATE after the first frame");
  if (!is_smb1_negotiate(frame)) return protocol_error("not an SMB1 NEGOTIATE");
  SMBKIT_CHECK(consume(0, 1));
  Pending p;
  p.command = SMB2_NEGOTIATE;
  pending_[0] = p;
  ServerRequest r;
  r.hdr.Command = SMB2_NEGOTIATE;
  r.length = frame.size();
  r.buf = std::make_shared<const Bytes>(std::move(frame));
  return r;
}

Result<void> ServerMachine::check(ServerRequest& r, uint64_t sealed) {
  const Header& h = r.hdr;
  const bool cancel = h.Command == SMB2_CANCEL;
  uint16_t charge = multi_credit_ ? std::max<uint16_t>(h.CreditCharge, 1) : 1;
  // MS-SMB2 3.3.5.2.3: CANCEL uses no sequence number.
  if (!cancel) {
    if (pending_.count(h.MessageId)) return protocol_error("MessageId in use");
    SMBKIT_CHECK(consume(h.MessageId, charge));
  }
  // MS-SMB2 3.3.5.4: a connection negotiates once.
  if (h.Command == SMB2_NEGOTIATE && dialect_ != 0) return protocol_error("second NEGOTIATE on the connection");
  // MS-SMB2 3.3.5.2.1.1: a sealed message belongs to the session that
  // sealed it.
  if (sealed && r.session_id != sealed)
    return security_violation(STATUS_ACCESS_DENIED, "request sealed by another session");

  Pending p;
  p.command = h.Command;
  p.session_id = r.session_id;
  p.credit_request = h.CreditRequestResponse;
  p.charge = h.CreditCharge;
  p.encrypted = sealed != 0;
  p.related = r.related;

  // MS-SMB2 3.3.5.2.5: the CreditCharge pays for what the request sends.
  const uint64_t sent = r.length - std::min<size_t>(r.length, kHeaderSize + fixed_body_size(r.msg()));
  if (multi_credit_ && credit_charge_for(sent) > charge) r.refused = STATUS_INVALID_PARAMETER;

  const SessionSecurity* s = sessions_.find(r.session_id);
  if (!sealed && !exempt_from_session_checks(h.Command)) {
    // MS-SMB2 3.3.5.2.9: an encrypting session takes sealed requests only.
    if (s && s->encrypt_data && !r.refused) r.refused = STATUS_ACCESS_DENIED;
  }
  if (!sealed && (h.Flags & SMB2_FLAGS_SIGNED)) {
    // MS-SMB2 3.3.5.2.4: a signed request is verified with its session's
    // key; a signature we cannot check is refused.
    if (!s || s->signing_key.empty()) {
      if (!r.refused && h.Command != SMB2_SESSION_SETUP) r.refused = STATUS_USER_SESSION_DELETED;
    } else {
      ByteView pieces[1] = {r.msg()};
      if (verify_received(*s, pieces))
        r.signed_ = true;
      else
        r.refused = STATUS_ACCESS_DENIED;
    }
  } else if (!sealed && s && s->signing_required && !s->signing_key.empty() && !exempt_from_session_checks(h.Command) &&
             !r.refused) {
    r.refused = STATUS_ACCESS_DENIED;  // unsigned on a signing session
  }
  p.signed_ = r.signed_;
  p.flagged_signed = !sealed && (h.Flags & SMB2_FLAGS_SIGNED);

  if (h.Command == SMB2_NEGOTIATE || h.Command == SMB2_SESSION_SETUP) {
    // MS-SMB2 3.3.5.4, 3.3.5.5: the preauth integrity hashes take the
    // request as received.
    if (h.Command == SMB2_NEGOTIATE) {
      auth::PreauthHash unused;
      feed_preauth(h, r.msg(), conn_preauth_, unused);
    } else {
      auto it = session_preauth_.find(h.SessionId);
      auth::PreauthHash sess = it == session_preauth_.end() ? conn_preauth_ : it->second;
      auth::PreauthHash unused_conn;
      feed_preauth(h, r.msg(), unused_conn, sess);
      r.preauth_hash.assign(sess.value().begin(), sess.value().end());
      p.preauth = sess;
    }
  }
  if (!cancel) pending_[h.MessageId] = std::move(p);
  return {};
}

uint16_t ServerMachine::grant(const Pending& p) {
  // MS-SMB2 3.3.1.2: replace what the request used and grow towards the
  // target, one step at a time, never past it; a client left with no
  // credit always gets one.
  uint64_t held = credits_granted();
  uint64_t room = cfg_.credit_target > held ? cfg_.credit_target - held : 0;
  uint64_t want = std::max<uint16_t>(p.credit_request, 1);
  uint64_t n = std::min<uint64_t>({want, room, cfg_.max_grant});
  if (n == 0 && held == 0) n = 1;
  window_end_ += n;
  return static_cast<uint16_t>(n);
}

ServerMachine::Protect ServerMachine::protection(const Pending& p, const Header& h, bool interim) const {
  const SessionSecurity* s = sessions_.find(h.SessionId);
  const bool final_setup = h.Command == SMB2_SESSION_SETUP && h.Status == STATUS_SUCCESS;
  // MS-SMB2 3.3.4.1.4: seal what answers a sealed request or runs on an
  // encrypting session. A session's own SESSION_SETUP is answered in the
  // clear: the client has no keys before it.
  if (s && s->can_encrypt() && (p.encrypted || (s->encrypt_data && h.Command != SMB2_SESSION_SETUP)))
    return Protect::seal;
  // MS-SMB2 3.3.4.1.1: sign what answers a signed request or runs on a
  // signing session, and the final SESSION_SETUP of 3.1.1 (3.3.5.5.3);
  // interim responses and a lost session's answers are not signed.
  if (!interim && s && !s->signing_key.empty() && h.Status != STATUS_USER_SESSION_DELETED &&
      (p.signed_ || s->signing_required || (final_setup && dialect_ == SMB2_DIALECT_0311)))
    return Protect::sign;
  return Protect::none;
}

ServerMachine::Protect ServerMachine::final_protection(uint64_t message_id) const {
  auto it = pending_.find(message_id);
  if (it == pending_.end()) return Protect::sign;  // unknown: never plain, never sealed in a room
  Header h;
  h.Command = it->second.command;
  h.SessionId = it->second.session_id;
  h.Status = STATUS_SUCCESS;
  return protection(it->second, h, false);
}

bool ServerMachine::sends_plain(uint64_t message_id) const { return final_protection(message_id) == Protect::none; }

bool ServerMachine::seals(uint64_t message_id) const { return final_protection(message_id) == Protect::seal; }

Result<FrameTransform> ServerMachine::stamp(ServerResponse& rsp, bool interim) {
  Header& h = rsp.hdr;
  if (rsp.msg.size() < kHeaderSize) return nt_error(STATUS_INVALID_PARAMETER, "response too short");
  auto it = pending_.find(h.MessageId);
  if (it == pending_.end()) return nt_error(STATUS_INVALID_PARAMETER, "no request with this MessageId");
  Pending& p = it->second;
  h.Command = p.command;
  h.Flags |= SMB2_FLAGS_SERVER_TO_REDIR;
  h.Flags &= ~(SMB2_FLAGS_SIGNED | SMB2_FLAGS_RELATED_OPERATIONS);
  if (p.related) h.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  if (interim || p.async_id) {
    h.Flags |= SMB2_FLAGS_ASYNC_COMMAND;
    h.AsyncId = p.async_id;
  }
  // MS-SMB2 3.3.4.2: an interim response grants the credits; the final
  // one then grants none.
  h.CreditRequestResponse = p.granted ? 0 : grant(p);
  p.granted = true;
  h.CreditCharge = p.charge;  // MS-SMB2 3.3.4.1: the request's

  const SessionSecurity* s = sessions_.find(h.SessionId);
  const Protect prot = protection(p, h, interim);
  const bool seal = prot == Protect::seal, sign = prot == Protect::sign;
  if (sign) h.Flags |= SMB2_FLAGS_SIGNED;
  // A lost session's answer to a signed request keeps the flag, unsigned
  // (as smbd): clients skip the check of STATUS_USER_SESSION_DELETED but
  // take an answer without the flag as a downgrade (STATUS_ACCESS_DENIED).
  if (!seal && !interim && h.Status == STATUS_USER_SESSION_DELETED && p.flagged_signed) h.Flags |= SMB2_FLAGS_SIGNED;
  Bytes hb;
  hb.reserve(kHeaderSize);
  ByteWriter w(hb);
  encode_header(h, w);
  std::copy(hb.begin(), hb.end(), rsp.msg.begin());

  FrameTransform t;
  if (seal)
    t = nonces_.seal_transform(*s);
  else if (sign)
    t = sign_transform(*s);

  if (!interim && p.preauth) {
    // MS-SMB2 3.3.5.5: a session's hash takes the responses that ask for
    // more, as sent.
    if (h.Status == STATUS_MORE_PROCESSING_REQUIRED) {
      // The hash takes the message as sent: one that is signed (the
      // answers of a binding, signed with Session.SigningKey, 3.3.5.5.2)
      // is signed here, first.
      if (t.kind == FrameTransform::Kind::sign) {
        SMBKIT_CHECK(auth::sign_message(static_cast<auth::SignAlg>(t.algorithm), t.key, MutableByteView(rsp.msg)));
        t = FrameTransform{};
      }
      auth::PreauthHash unused_conn;
      feed_preauth(h, rsp.msg, unused_conn, *p.preauth);
      session_preauth_[h.SessionId] = *p.preauth;
    } else {
      session_preauth_.erase(h.SessionId);
    }
  }
  if (!interim) pending_.erase(it);
  return t;
}

Result<void> ServerMachine::send(ServerResponse& rsp, OutFrame& out) {
  SMBKIT_CHECK(send_deferred(rsp, out));
  if (out.transform.kind == FrameTransform::Kind::none) return {};
  return finish_frame(MutableByteView(rsp.msg), rsp.payload, out, rsp.room);
}

Result<void> ServerMachine::send_deferred(ServerResponse& rsp, OutFrame& out) {
  rsp.hdr.NextCommand = 0;
  auto p = pending_.find(rsp.hdr.MessageId);
  if (p != pending_.end() && p->second.async_id == 0 && rsp.hdr.Status == STATUS_PENDING)
    return nt_error(STATUS_INVALID_PARAMETER, "interim responses go through send_interim");
  SMBKIT_TRY(out.transform, stamp(rsp, false));
  // MS-SMB2 3.3.5.4: the connection's hash takes the NEGOTIATE response.
  if (rsp.hdr.Command == SMB2_NEGOTIATE) {
    auth::PreauthHash unused;
    feed_preauth(rsp.hdr, rsp.msg, conn_preauth_, unused);
  }
  out.trailer = rsp.trailer;
  out.head.clear();
  // Nothing to sign or seal: framed now.
  if (out.transform.kind == FrameTransform::Kind::none) return finish_frame(MutableByteView(rsp.msg), rsp.payload, out);
  return {};
}

Result<void> ServerMachine::send_compound(std::vector<ServerResponse>& rsps, OutFrame& out) {
  if (rsps.empty()) return nt_error(STATUS_INVALID_PARAMETER, "empty compound");
  Bytes chain;
  std::optional<FrameTransform> seal;
  for (size_t i = 0; i < rsps.size(); i++) {
    ServerResponse& r = rsps[i];
    if (!r.payload.empty() || r.msg.size() < kHeaderSize || r.hdr.Command == SMB2_NEGOTIATE)
      return nt_error(STATUS_INVALID_PARAMETER, "response cannot be compounded");
    const bool last = i + 1 == rsps.size();
    // MS-SMB2 3.3.4.1.3: every response but the last padded to 8 bytes,
    // NextCommand at the next.
    // An interim response (STATUS_PENDING, from interim_response) ends a
    // chain: what follows it is answered later.
    const bool interim = r.hdr.Status == STATUS_PENDING;
    if (interim && !last) return nt_error(STATUS_INVALID_PARAMETER, "interim response inside a compound");
    if (!last) r.msg.resize((r.msg.size() + 7) & ~size_t{7});
    r.hdr.NextCommand = last ? 0 : static_cast<uint32_t>(r.msg.size());
    SMBKIT_TRY(FrameTransform t, stamp(r, interim));
    if (t.kind == FrameTransform::Kind::sign) {
      // Each message of a chain is signed on its own, over its padding.
      SMBKIT_CHECK(auth::sign_message(static_cast<auth::SignAlg>(t.algorithm), t.key, r.msg));
    } else if (t.kind == FrameTransform::Kind::seal && !seal) {
      seal = std::move(t);
    }
    chain.insert(chain.end(), r.msg.begin(), r.msg.end());
  }
  out.transform = seal ? std::move(*seal) : FrameTransform{};
  return finish_frame(MutableByteView(chain), {}, out);
}

Result<ServerResponse> ServerMachine::interim_response(uint64_t message_id, uint64_t async_id) {
  auto it = pending_.find(message_id);
  if (it == pending_.end()) return nt_error(STATUS_INVALID_PARAMETER, "no request with this MessageId");
  if (async_id == 0) return nt_error(STATUS_INVALID_PARAMETER, "AsyncId 0");
  it->second.async_id = async_id;
  ServerResponse r;
  r.hdr.MessageId = message_id;
  r.hdr.Command = it->second.command;
  r.hdr.SessionId = it->second.session_id;
  r.hdr.Status = STATUS_PENDING;
  // MS-SMB2 2.2.2: an interim response's body is an empty ERROR response.
  r.msg.resize(kHeaderSize);
  ByteWriter w(r.msg);
  SMBKIT_CHECK(encode_error_response(ErrorResponse{}, w));
  return r;
}

Result<void> ServerMachine::send_interim(uint64_t message_id, uint64_t async_id, OutFrame& out) {
  SMBKIT_TRY(ServerResponse r, interim_response(message_id, async_id));
  SMBKIT_TRY(out.transform, stamp(r, true));
  return finish_frame(MutableByteView(r.msg), {}, out);
}

Result<void> ServerMachine::send_unsolicited(ServerResponse& rsp, uint64_t seal_session, OutFrame& out) {
  Header& h = rsp.hdr;
  if (rsp.msg.size() < kHeaderSize) return nt_error(STATUS_INVALID_PARAMETER, "message too short");
  h.MessageId = ~0ull;
  h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
  h.CreditRequestResponse = 0;
  h.CreditCharge = 0;
  h.NextCommand = 0;
  Bytes hb;
  hb.reserve(kHeaderSize);
  ByteWriter w(hb);
  encode_header(h, w);
  std::copy(hb.begin(), hb.end(), rsp.msg.begin());
  const SessionSecurity* s = sessions_.find(seal_session);
  out.transform = s && s->can_encrypt() && s->encrypt_data ? nonces_.seal_transform(*s) : FrameTransform{};
  return finish_frame(MutableByteView(rsp.msg), {}, out);
}

ServerResponse ServerMachine::response_to(const ServerRequest& req, uint32_t status) {
  ServerResponse r;
  r.hdr.MessageId = req.hdr.MessageId;
  r.hdr.Command = req.hdr.Command;
  r.hdr.SessionId = req.session_id;
  r.hdr.TreeId = req.tree_id;
  r.hdr.Status = status;
  r.msg.resize(kHeaderSize);
  return r;
}

ServerResponse ServerMachine::error_response(const ServerRequest& req, uint32_t status) {
  ServerResponse r = response_to(req, status);
  ByteWriter w(r.msg);
  (void)encode_error_response(ErrorResponse{}, w);  // an empty ErrorData cannot fail
  return r;
}

bool ServerMachine::charge_covers(const ServerRequest& req, uint64_t expected_response_bytes) const {
  if (!multi_credit_) return expected_response_bytes <= 65536;
  return credit_charge_for(expected_response_bytes) <= std::max<uint16_t>(req.hdr.CreditCharge, 1);
}

}  // namespace smbkit::session
