#include "session/client_machine.h"

#include <algorithm>

#include "auth/sealing.h"
#include "base/log.h"
#include "proto/session_setup.h"
#include "proto/transform_header.h"

namespace smbkit::session {

using namespace proto;

void ClientMachine::set_dialect(uint16_t dialect, bool large_mtu) {
  dialect_ = dialect;
  // MS-SMB2 3.2.5.2: multi-credit requests need dialect > 2.0.2 and LARGE_MTU.
  credits_.set_multi_credit(dialect > SMB2_DIALECT_0202 && large_mtu);
}

Result<uint64_t> ClientMachine::send(Request& req, OutFrame& out) {
  if (req.msg.size() < kHeaderSize) return nt_error(STATUS_INVALID_PARAMETER, "request too short");
  uint16_t charge = credits_.charge(req.charge_bytes);
  if (!credits_.can_send(charge)) return nt_error(STATUS_INSUFFICIENT_RESOURCES, "credit window exhausted");
  const SessionSecurity* s = session(req.hdr.SessionId);
  bool encrypt = req.encrypt || (s && s->encrypt_data);
  if (encrypt && (!s || !s->can_encrypt()))
    return nt_error(STATUS_ACCESS_DENIED, "encryption required but no session keys");
  size_t total = req.msg.size() + req.payload.size() + (encrypt ? kTransformHeaderSize : 0);
  if (total > kMaxFrame) return nt_error(STATUS_INVALID_PARAMETER, "message too large");

  Header& h = req.hdr;
  // SESSION_SETUP is signed only when asked: a re-authentication of an
  // established session (MS-SMB2 3.2.4.1.1), never a new one.
  bool sign = !encrypt && s && !s->signing_key.empty() &&
              (h.Command == SMB2_SESSION_SETUP ? req.sign : (s->signing_required || req.sign));
  h.NextCommand = 0;
  stamp_header(req, charge, sign);
  const bool signed_req = sign;
  // MS-SMB2 3.2.5.2: preauth hash over NEGOTIATE and SESSION_SETUP
  // requests, over their final bytes: a (re-authentication) SESSION_SETUP
  // that is signed is signed here, before hashing, and never deferred.
  if (sign && h.Command == SMB2_SESSION_SETUP) {
    auto r = auth::sign_message(s->sign_alg, s->signing_key, req.msg);
    if (!r) return r.take_error();
    sign = false;  // done
  }
  feed_preauth(h, req.msg, conn_preauth_, sess_preauth_);

  out.head.clear();
  out.payload = {};
  out.transform = {};
  if (encrypt) {
    out.transform = nonces_.seal_transform(*s);
  } else if (sign) {
    out.transform = sign_transform(*s);
  }
  Pending p{h.Command, h.SessionId, 0, encrypt, signed_req};
  // MS-SMB2 2.2.5: SESSION_SETUP Flags is the byte after StructureSize.
  p.binding = h.Command == SMB2_SESSION_SETUP && req.msg.size() > kHeaderSize + 2 &&
              (std::to_integer<uint8_t>(req.msg[kHeaderSize + 2]) & SMB2_SESSION_FLAG_BINDING);
  pending_[h.MessageId] = p;
  if (!req.defer_transform || out.transform.kind == FrameTransform::Kind::none) {
    auto f = finish_frame(req, out);
    if (!f) {
      pending_.erase(h.MessageId);
      return f.take_error();
    }
  }
  return h.MessageId;
}

void ClientMachine::set_channel_sequence(uint64_t id, uint16_t seq) {
  auto [it, added] = channel_sequence_.try_emplace(id, seq);
  if (added) return;
  const uint16_t ahead = static_cast<uint16_t>(seq - it->second);
  if (ahead != 0 && ahead <= 0x7FFF) it->second = seq;
}

uint16_t ClientMachine::channel_sequence(uint64_t id) const {
  auto it = channel_sequence_.find(id);
  return it == channel_sequence_.end() ? 0 : it->second;
}

void ClientMachine::stamp_header(Request& req, uint16_t charge, bool sign) {
  Header& h = req.hdr;
  // MS-SMB2 2.2.1.2, 3.2.4.1: on 3.x the first two bytes of Status are
  // ChannelSequence (Session.ChannelSequence), the other two Reserved.
  // Until set_channel_sequence names the session, the request's own.
  if (auto it = channel_sequence_.find(h.SessionId); dialect_ >= SMB2_DIALECT_0300 && it != channel_sequence_.end())
    h.Status = it->second;
  // MS-SMB2 3.2.4.1.5: CreditCharge is 0 on 2.0.2 (and before NEGOTIATE
  // picked a dialect); otherwise the number of credits consumed.
  h.CreditCharge = credits_.multi_credit() ? charge : 0;
  h.CreditRequestResponse = credits_.request_for(charge, cfg_.credit_target);
  h.MessageId = credits_.consume(charge);
  h.Flags &= ~SMB2_FLAGS_SERVER_TO_REDIR;
  // MS-SMB2 3.2.4.1.1: the SIGNED flag is part of the signed header.
  if (sign) h.Flags |= SMB2_FLAGS_SIGNED;
  Bytes hb;
  hb.reserve(kHeaderSize);
  ByteWriter w(hb);
  encode_header(h, w);
  std::copy(hb.begin(), hb.end(), req.msg.begin());
}

uint16_t ClientMachine::compound_charge(const std::vector<Request>& reqs) const {
  uint32_t total = 0;
  for (const Request& r : reqs) total += std::max<uint16_t>(credits_.charge(r.charge_bytes), 1);
  return static_cast<uint16_t>(std::min<uint32_t>(total, 0xFFFF));
}

Result<std::vector<uint64_t>> ClientMachine::send_compound(std::vector<Request>& reqs, OutFrame& out) {
  if (reqs.empty()) return nt_error(STATUS_INVALID_PARAMETER, "empty compound");
  size_t chain_len = 0;
  bool any_encrypt = false, any_sign = false;
  for (size_t i = 0; i < reqs.size(); i++) {
    const Request& r = reqs[i];
    if (r.msg.size() < kHeaderSize) return nt_error(STATUS_INVALID_PARAMETER, "request too short");
    // Payloads (WRITE data) and deferred transforms stay with send().
    if (!r.payload.empty() || r.defer_transform || r.hdr.Command == SMB2_NEGOTIATE ||
        r.hdr.Command == SMB2_SESSION_SETUP || r.hdr.SessionId != reqs[0].hdr.SessionId)
      return nt_error(STATUS_INVALID_PARAMETER, "request cannot be compounded");
    // MS-SMB2 3.2.4.1.4: every message but the last starts the next on an
    // 8-byte boundary.
    chain_len += i + 1 == reqs.size() ? r.msg.size() : (r.msg.size() + 7) & ~size_t{7};
    any_encrypt |= r.encrypt;
    any_sign |= r.sign;
  }
  uint16_t total = compound_charge(reqs);
  if (!credits_.can_send(total)) return nt_error(STATUS_INSUFFICIENT_RESOURCES, "credit window exhausted");
  const SessionSecurity* s = session(reqs[0].hdr.SessionId);
  bool encrypt = any_encrypt || (s && s->encrypt_data);
  if (encrypt && (!s || !s->can_encrypt()))
    return nt_error(STATUS_ACCESS_DENIED, "encryption required but no session keys");
  if (chain_len + (encrypt ? kTransformHeaderSize : 0) > kMaxFrame)
    return nt_error(STATUS_INVALID_PARAMETER, "compound too large");
  bool sign = !encrypt && s && !s->signing_key.empty() && (s->signing_required || any_sign);

  Request chain;
  chain.msg.reserve(chain_len);
  std::vector<uint64_t> mids;
  for (size_t i = 0; i < reqs.size(); i++) {
    Request& r = reqs[i];
    bool last = i + 1 == reqs.size();
    if (!last) r.msg.resize((r.msg.size() + 7) & ~size_t{7});
    r.hdr.NextCommand = last ? 0 : static_cast<uint32_t>(r.msg.size());
    stamp_header(r, credits_.charge(r.charge_bytes), sign);
    // MS-SMB2 3.2.4.1.1: each message of a chain is signed on its own,
    // over its padding too.
    if (sign) SMBKIT_CHECK(auth::sign_message(s->sign_alg, s->signing_key, r.msg));
    chain.msg.insert(chain.msg.end(), r.msg.begin(), r.msg.end());
    mids.push_back(r.hdr.MessageId);
  }
  out.head.clear();
  out.payload = {};
  out.transform = {};
  if (encrypt) out.transform = nonces_.seal_transform(*s);  // the whole chain is one transform
  for (size_t i = 0; i < reqs.size(); i++)
    pending_[mids[i]] = Pending{reqs[i].hdr.Command, reqs[i].hdr.SessionId, 0, encrypt, sign};
  auto f = finish_frame(chain, out);
  if (!f) {
    for (uint64_t m : mids) pending_.erase(m);
    return f.take_error();
  }
  return mids;
}

Result<void> ClientMachine::send_cancel(uint64_t message_id, OutFrame& out) {
  auto it = pending_.find(message_id);
  if (it == pending_.end()) return nt_error(STATUS_NOT_FOUND, "no such pending request");
  Request req;
  Header& h = req.hdr;
  h.Command = SMB2_CANCEL;
  h.MessageId = message_id;
  h.SessionId = it->second.session_id;
  if (it->second.async_id) {
    h.Flags |= SMB2_FLAGS_ASYNC_COMMAND;
    h.AsyncId = it->second.async_id;
  }
  const SessionSecurity* s = session(h.SessionId);
  out.head.clear();
  out.payload = {};
  out.transform = {};
  if (it->second.encrypted && s) {
    out.transform = nonces_.seal_transform(*s);
  } else if (s && s->signing_required && !s->signing_key.empty()) {
    h.Flags |= SMB2_FLAGS_SIGNED;
    out.transform = sign_transform(*s);
  }
  ByteWriter w(req.msg);
  encode_header(h, w);
  w.u16(4);  // MS-SMB2 2.2.30: StructureSize
  w.u16(0);
  return finish_frame(req, out);
}

Result<void> ClientMachine::receive(Bytes frame, std::vector<Response>& out) {
  size_t len = frame.size();
  return receive(std::make_shared<Bytes>(std::move(frame)), len, out);
}

Result<void> ClientMachine::receive(std::shared_ptr<Bytes> buf, size_t len, std::vector<Response>& out) {
  if (!buf || len > buf->size()) return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  if (len < 4) return protocol_error("frame too short");
  uint32_t proto_id = load_le32(buf->data());
  uint64_t sid = 0;  // the transform header's session, if sealed
  size_t base = 0, end = len;
  if (proto_id == kTransformProtocolId) {
    // MS-SMB2 3.2.5.1.1: decrypt (in place) with the session the transform
    // header names.
    SMBKIT_TRY(auto u, sessions_.unseal_in_place(MutableByteView(buf->data(), len)));
    sid = u.session_id;
    base = kTransformHeaderSize;
    end = kTransformHeaderSize + u.length;
  } else if (proto_id == kCompressionProtocolId) {
    return protocol_error("compressed message but compression was not negotiated");
  } else if (proto_id != kSmb2ProtocolId) {
    return protocol_error("not an SMB2 frame");
  }
  return receive_messages(std::move(buf), base, end, sid, out);
}

Result<ClientMachine::UnsealKey> ClientMachine::unseal_key(ByteView transform) const {
  SMBKIT_TRY(const SessionSecurity* s, sessions_.sealed_by(transform));
  return UnsealKey{s->cipher, s->unseal_key};
}

Result<void> ClientMachine::receive_messages(std::shared_ptr<Bytes> buf, size_t base, size_t end,
                                             uint64_t sealed_session, std::vector<Response>& out) {
  if (!buf || base > end || end > buf->size()) return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  std::shared_ptr<const Bytes> cbuf = std::move(buf);
  return for_each_chain_message(*cbuf, base, end, [&](const ChainMessage& m, size_t) -> Result<void> {
    Response r;
    r.hdr = m.hdr;
    r.buf = cbuf;
    r.offset = m.offset;
    r.length = m.length;
    r.encrypted = sealed_session != 0;
    SMBKIT_CHECK(finish_message(r, sealed_session));
    out.push_back(std::move(r));
    return {};
  });
}

Result<void> ClientMachine::receive_split(std::shared_ptr<Bytes> buf, size_t base, size_t head_len, ByteView direct,
                                          uint64_t sealed_session, std::vector<Response>& out) {
  if (!buf || base > buf->size() || head_len > buf->size() - base)
    return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  SMBKIT_TRY(Header h, decode_header(ByteView(buf->data() + base, head_len)));
  if (h.NextCommand) return protocol_error("split receive of a compound message");
  Response r;
  r.hdr = h;
  r.buf = std::move(buf);
  r.offset = base;
  r.length = head_len;
  r.direct = direct;
  r.encrypted = sealed_session != 0;
  SMBKIT_CHECK(finish_message(r, sealed_session));
  out.push_back(std::move(r));
  return {};
}

Result<void> ClientMachine::finish_message(Response& r, uint64_t sealed_session) {
  const Header& h = r.hdr;
  if (!h.is_response()) return protocol_error("request received from server");
  if (h.MessageId == ~0ull) {
    // Unsolicited oplock or lease break (MS-SMB2 3.2.5.19).
    if (h.Command != SMB2_OPLOCK_BREAK) return protocol_error("unsolicited non-break message");
    return {};
  }
  auto it = pending_.find(h.MessageId);
  credits_.grant(h.CreditRequestResponse);
  bool interim = h.Status == STATUS_PENDING && h.is_async();
  r.interim = interim;
  if (it == pending_.end()) {
    // A response to a request we gave up on (timeout or cancel): the
    // credits still count, the message does not.
    SMBKIT_LOG(debug, "response to unknown MessageId {} dropped", h.MessageId);
    r.orphan = true;
    return {};
  }
  if (it->second.command != h.Command)
    return protocol_error("response command mismatch: MessageId " + std::to_string(h.MessageId) + " sent as command " +
                          std::to_string(it->second.command) + ", answered as " + std::to_string(h.Command) +
                          " (status 0x" +
                          [&] {
                            char b[12];
                            std::snprintf(b, sizeof b, "%08x", h.Status);
                            return std::string(b);
                          }() +
                          ")");
  SMBKIT_CHECK(check_security(it->second, r, sealed_session));
  if (interim) {
    it->second.async_id = h.AsyncId;
    return {};
  }
  feed_preauth(h, r.msg(), conn_preauth_, sess_preauth_);
  pending_.erase(it);
  return {};
}

Result<void> ClientMachine::check_security(const Pending& p, Response& r, uint64_t sealed_session) {
  const Header& h = r.hdr;
  // Built only for an error: this runs for every response.
  auto what = [&h] {
    return std::string(command_name(h.Command)) + " response (MessageId " + std::to_string(h.MessageId) + ")";
  };
  // MS-SMB2 3.2.5.1.3: the session is the request's, except for a
  // SESSION_SETUP that creates one (the response names it).
  const bool new_session = h.Command == SMB2_SESSION_SETUP && p.session_id == 0;
  if (h.SessionId != p.session_id && !new_session)
    return security_violation(STATUS_ACCESS_DENIED, what() + " names session " + std::to_string(h.SessionId) +
                                                        ", the request was sent on " + std::to_string(p.session_id));
  const SessionSecurity* s = session(h.SessionId);
  // MS-SMB2 3.2.5.1.1.1: a sealed message is decrypted with its own
  // session's key; one session cannot answer for another.
  if (sealed_session && sealed_session != h.SessionId)
    return security_violation(STATUS_ACCESS_DENIED, what() + " sealed by another session");
  // Encryption (MS-SMB2 3.2.4.1.8): a request that went out sealed, or on
  // a session that encrypts, is answered sealed; interim responses too
  // (the server seals every message of an encrypted session).
  if (!sealed_session && (p.encrypted || (s && s->encrypt_data)))
    return security_violation(STATUS_ACCESS_DENIED, what() + " not encrypted on an encrypted session or share");
  if (sealed_session) return {};  // decryption authenticated it
  // Signing (MS-SMB2 3.2.5.1.3). Interim responses are not signed
  // (MS-SMB2 3.3.4.1.1); they only tell us the request is pending.
  if (r.interim) return {};
  const bool signed_msg = h.Flags & SMB2_FLAGS_SIGNED;
  const bool keyed = s && !s->signing_key.empty();
  // MS-SMB2 3.2.5.3.1: the success that completes a binding is signed with
  // Channel.SigningKey, derived from this authentication (and on 3.1.1 this
  // connection's preauth hash): the caller verifies it (Client::bind_channel).
  // Its errors and the rounds before are signed with Session.SigningKey.
  if (p.binding && h.Status == STATUS_SUCCESS) {
    if (signed_msg) r.signature_unchecked = true;
    return {};
  }
  if (!keyed) {
    // The final SESSION_SETUP response, signed with keys only the caller
    // can derive now: it must verify it (Client::authenticate).
    if (signed_msg) r.signature_unchecked = true;
    return {};
  }
  // A request we signed (a signing session, a 3.1.1 TREE_CONNECT, a
  // VALIDATE_NEGOTIATE) is answered signed: otherwise a relay could
  // clear the flag and rewrite what we rely on. SESSION_SETUP answers are
  // checked by the authentication itself.
  const bool must_sign = (s->signing_required || p.signed_) && h.Command != SMB2_SESSION_SETUP;
  if (!signed_msg) {
    if (!must_sign) return {};
    // A server that lost the session cannot sign its answer (MS-SMB2
    // 3.3.5.2.9): that is a lost session, to be set up again on a new
    // connection, not a verdict on this one's messages.
    if (h.Status == STATUS_USER_SESSION_DELETED)
      return nt_error(STATUS_USER_SESSION_DELETED, what() + ": unsigned, session deleted");
    return security_violation(STATUS_INVALID_SIGNATURE, what() + " not signed on a signed session");
  }
  // A server that lost the session may keep the flag on its answer
  // without a signature it cannot make (smbd, smbkitd): the same lost
  // session, not checked.
  if (h.Status == STATUS_USER_SESSION_DELETED)
    return nt_error(STATUS_USER_SESSION_DELETED, what() + ": session deleted");
  ByteView pieces[2] = {r.msg(), r.direct};
  auto v = verify_received(*s, std::span<const ByteView>(pieces, r.direct.empty() ? 1 : 2));
  if (!v) return security_violation(STATUS_INVALID_SIGNATURE, what() + ": bad signature");
  return {};
}

}  // namespace smbkit::session
