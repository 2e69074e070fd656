#include "session/machine.h"

#include "auth/sealing.h"
#include "base/log.h"

namespace smbkit::session {

using namespace proto;

void Machine::set_dialect(uint16_t dialect, bool large_mtu) {
  dialect_ = dialect;
  // MS-SMB2 3.2.5.2: multi-credit requests need dialect > 2.0.2 and LARGE_MTU.
  credits_.set_multi_credit(dialect > SMB2_DIALECT_0202 && large_mtu);
}

const SessionSecurity* Machine::session(uint64_t id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

static void put_direct_tcp_header(Bytes& head, size_t len) {
  head[0] = std::byte{0};
  head[1] = std::byte((len >> 16) & 0xff);
  head[2] = std::byte((len >> 8) & 0xff);
  head[3] = std::byte(len & 0xff);
}

Result<uint64_t> Machine::send(Request& req, OutFrame& out) {
  if (req.msg.size() < kHeaderSize) return nt_error(STATUS_INVALID_PARAMETER, "request too short");
  uint16_t charge = credits_.charge(req.charge_bytes);
  if (!credits_.can_send(charge))
    return nt_error(STATUS_INSUFFICIENT_RESOURCES, "credit window exhausted");
  const SessionSecurity* s = session(req.hdr.SessionId);
  bool encrypt = req.encrypt || (s && s->encrypt_data);
  if (encrypt && (!s || !s->can_encrypt()))
    return nt_error(STATUS_ACCESS_DENIED, "encryption required but no session keys");

  Header& h = req.hdr;
  // MS-SMB2 3.2.4.1.5: CreditCharge is 0 on 2.0.2 (and before NEGOTIATE
  // picked a dialect); otherwise the number of credits consumed.
  h.CreditCharge = credits_.multi_credit() ? charge : 0;
  h.CreditRequestResponse = credits_.request_for(charge, cfg_.credit_target);
  h.MessageId = credits_.consume(charge);
  h.Flags &= ~SMB2_FLAGS_SERVER_TO_REDIR;
  {
    Bytes hb;
    hb.reserve(kHeaderSize);
    ByteWriter w(hb);
    encode_header(h, w);
    std::copy(hb.begin(), hb.end(), req.msg.begin());
  }
  // SESSION_SETUP is signed only when asked: a re-authentication of an
  // established session (MS-SMB2 3.2.4.1.1), never a new one.
  bool sign = !encrypt && s && !s->signing_key.empty() &&
              (h.Command == SMB2_SESSION_SETUP ? req.sign : (s->signing_required || req.sign));
  if (sign) {
    ByteView pieces[1] = {req.payload};
    auto r = req.payload.empty()
                 ? auth::sign_message(s->sign_alg, s->signing_key, req.msg)
                 : auth::sign_message(s->sign_alg, s->signing_key, req.msg,
                                      std::span<const ByteView>(pieces, 1));
    if (!r) return r.take_error();
  }
  // MS-SMB2 3.2.5.2: preauth hash over NEGOTIATE and SESSION_SETUP requests.
  if (h.Command == SMB2_NEGOTIATE) {
    conn_preauth_.init();
    conn_preauth_.update(req.msg);
  } else if (h.Command == SMB2_SESSION_SETUP) {
    sess_preauth_.update(req.msg);
  }

  if (encrypt) {
    SMBKIT_CHECK(seal(*s, req.msg, req.payload, out));
  } else {
    size_t len = req.msg.size() + req.payload.size();
    if (len > kMaxFrame) return nt_error(STATUS_INVALID_PARAMETER, "message too large");
    out.head.resize(kDirectTcpHeader);
    put_direct_tcp_header(out.head, len);
    out.head.insert(out.head.end(), req.msg.begin(), req.msg.end());
    out.payload = req.payload;
  }
  pending_[h.MessageId] = Pending{h.Command, h.SessionId, 0, encrypt};
  return h.MessageId;
}

Result<void> Machine::seal(const SessionSecurity& s, ByteView msg, ByteView payload, OutFrame& out) {
  // MS-SMB2 3.1.4.3: nonces must never repeat under one key; a counter
  // with a random per-connection prefix (11 bytes used for CCM, 12 for GCM).
  std::byte nonce[16]{};
  store_le64(nonce, nonce_counter_++);
  store_le32(nonce + 8, nonce_prefix_);
  size_t nlen = (s.cipher == AES_128_CCM || s.cipher == AES_256_CCM) ? 11 : 12;
  ByteView pieces[2] = {msg, payload};
  size_t total = 52 + msg.size() + payload.size();
  if (total > kMaxFrame) return nt_error(STATUS_INVALID_PARAMETER, "message too large");
  out.head.clear();
  out.head.reserve(kDirectTcpHeader + total);
  out.head.resize(kDirectTcpHeader);
  put_direct_tcp_header(out.head, total);
  SMBKIT_CHECK(sealer_for(s).encrypt_append(s.session_id, ByteView(nonce, nlen),
                                            std::span<const ByteView>(pieces, payload.empty() ? 1 : 2),
                                            out.head));
  out.payload = {};
  return {};
}

Result<void> Machine::send_cancel(uint64_t message_id, OutFrame& out) {
  auto it = pending_.find(message_id);
  if (it == pending_.end()) return nt_error(STATUS_NOT_FOUND, "no such pending request");
  Header h;
  h.Command = SMB2_CANCEL;
  h.MessageId = message_id;
  h.SessionId = it->second.session_id;
  if (it->second.async_id) {
    h.Flags |= SMB2_FLAGS_ASYNC_COMMAND;
    h.AsyncId = it->second.async_id;
  }
  Bytes msg;
  ByteWriter w(msg);
  encode_header(h, w);
  w.u16(4);  // MS-SMB2 2.2.30: StructureSize
  w.u16(0);
  const SessionSecurity* s = session(h.SessionId);
  if (it->second.encrypted && s) return seal(*s, msg, {}, out);
  if (s && s->signing_required && !s->signing_key.empty())
    SMBKIT_CHECK(auth::sign_message(s->sign_alg, s->signing_key, msg));
  out.head.resize(kDirectTcpHeader);
  put_direct_tcp_header(out.head, msg.size());
  out.head.insert(out.head.end(), msg.begin(), msg.end());
  return {};
}

auth::Sealer& Machine::sealer_for(const SessionSecurity& s) {
  auto& p = sealers_[s.session_id];
  if (!p) p = std::make_unique<auth::Sealer>(s.cipher, s.encryption_key);
  return *p;
}

auth::Unsealer& Machine::unsealer_for(const SessionSecurity& s) {
  auto& p = unsealers_[s.session_id];
  if (!p) p = std::make_unique<auth::Unsealer>(s.cipher, s.decryption_key);
  return *p;
}

Result<void> Machine::receive(Bytes frame, std::vector<Response>& out) {
  size_t len = frame.size();
  return receive(std::make_shared<Bytes>(std::move(frame)), len, out);
}

Result<void> Machine::receive(std::shared_ptr<Bytes> buf, size_t len, std::vector<Response>& out) {
  if (!buf || len > buf->size()) return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  if (len < 4) return protocol_error("frame too short");
  uint32_t proto_id = load_le32(buf->data());
  bool encrypted = false;
  size_t base = 0, end = len;
  if (proto_id == kTransformProtocolId) {
    // MS-SMB2 3.2.5.1.1: decrypt (in place) with the session the transform
    // header names.
    if (len < 52) return protocol_error("transform header truncated");
    uint64_t sid = load_le64(buf->data() + 44);
    const SessionSecurity* s = session(sid);
    if (!s || s->decryption_key.empty())
      return protocol_error("encrypted message for an unknown session");
    SMBKIT_TRY(size_t n, unsealer_for(*s).decrypt_in_place(MutableByteView(buf->data(), len)));
    base = 52;
    end = 52 + n;
    encrypted = true;
  } else if (proto_id == kCompressionProtocolId) {
    return protocol_error("compressed message but compression was not negotiated");
  } else if (proto_id != kSmb2ProtocolId) {
    return protocol_error("not an SMB2 frame");
  }
  return receive_messages(std::move(buf), base, end, encrypted, out);
}

Result<Machine::UnsealKey> Machine::unseal_key(ByteView transform) const {
  if (transform.size() < 52) return protocol_error("transform header truncated");
  const SessionSecurity* s = session(load_le64(transform.data() + 44));
  if (!s || s->decryption_key.empty()) return protocol_error("encrypted message for an unknown session");
  return UnsealKey{s->cipher, s->decryption_key};
}

Result<void> Machine::receive_messages(std::shared_ptr<Bytes> buf, size_t base, size_t end, bool encrypted,
                                       std::vector<Response>& out) {
  if (!buf || base > end || end > buf->size()) return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  std::shared_ptr<const Bytes> cbuf = std::move(buf);
  size_t off = base;
  for (int n = 0;; n++) {
    if (n > 64) return protocol_error("compound chain too long");
    ByteView rest = ByteView(*cbuf).subspan(off, end - off);
    SMBKIT_TRY(Header h, decode_header(rest));
    size_t len = rest.size();
    if (h.NextCommand) {
      // MS-SMB2 3.2.5.1.9: each message of a chain starts 8-byte aligned.
      if (h.NextCommand % 8 || h.NextCommand < kHeaderSize || h.NextCommand >= rest.size())
        return protocol_error("bad NextCommand in compound response");
      len = h.NextCommand;
    }
    Response r;
    r.hdr = h;
    r.buf = cbuf;
    r.offset = off;
    r.length = len;
    r.encrypted = encrypted;
    auto keep = finish_message(r);
    if (!keep) return keep.take_error();
    out.push_back(std::move(r));
    if (!h.NextCommand) break;
    off += len;
  }
  return {};
}

Result<void> Machine::receive_split(std::shared_ptr<Bytes> head, size_t head_len, ByteView direct,
                                    std::vector<Response>& out) {
  if (!head || head_len > head->size()) return nt_error(STATUS_INVALID_PARAMETER, "bad frame buffer");
  SMBKIT_TRY(Header h, decode_header(ByteView(head->data(), head_len)));
  if (h.NextCommand) return protocol_error("split receive of a compound message");
  Response r;
  r.hdr = h;
  r.buf = std::move(head);
  r.offset = 0;
  r.length = head_len;
  r.direct = direct;
  SMBKIT_CHECK(finish_message(r));
  out.push_back(std::move(r));
  return {};
}

Result<void> Machine::finish_message(Response& r) {
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
  if (it->second.command != h.Command) return protocol_error("response command mismatch");
  const SessionSecurity* s = session(h.SessionId);
  if (!r.encrypted && !interim && !s && (h.Flags & SMB2_FLAGS_SIGNED)) r.signature_unchecked = true;
  if (!r.encrypted && !interim && s) {
    ByteView pieces[2] = {r.msg(), r.direct};
    if (h.Flags & SMB2_FLAGS_SIGNED) {
      if (!s->signing_key.empty()) {
        auto v = auth::verify_message(s->sign_alg, s->signing_key,
                                      std::span<const ByteView>(pieces, r.direct.empty() ? 1 : 2));
        if (!v) r.security_error = nt_error(STATUS_INVALID_SIGNATURE, "response signature");
      } else {
        r.signature_unchecked = true;
      }
    } else if (s->signing_required && !s->signing_key.empty()) {
      r.security_error = nt_error(STATUS_INVALID_SIGNATURE, "unsigned response on a signed session");
    }
    if (s->encrypt_data && !s->decryption_key.empty())
      r.security_error = nt_error(STATUS_ACCESS_DENIED, "unencrypted response on an encrypted session");
  }
  if (interim) {
    it->second.async_id = h.AsyncId;
    return {};
  }
  if (h.Command == SMB2_NEGOTIATE) {
    conn_preauth_.update(r.msg());
  } else if (h.Command == SMB2_SESSION_SETUP && h.Status == STATUS_MORE_PROCESSING_REQUIRED) {
    sess_preauth_.update(r.msg());
  }
  pending_.erase(it);
  return {};
}

}  // namespace smbkit::session
