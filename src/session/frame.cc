// finish_frame and unseal_frame: the signing/encryption half of sending a
// message and the decryption half of receiving one, callable on any thread
// so that large WRITEs and READ answers are transformed in parallel and
// outside the connection's lock or loop.
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "proto/constants.h"
#include "proto/transform_header.h"
#include "session/security.h"

namespace smbkit::session {

using namespace proto;

namespace {

void put_direct_tcp_header(std::byte* head, size_t len) {
  head[0] = std::byte{0};
  head[1] = std::byte((len >> 16) & 0xff);
  head[2] = std::byte((len >> 8) & 0xff);
  head[3] = std::byte(len & 0xff);
}

// Cipher contexts are not shareable between threads; keep one per thread
// and key (a handful of sessions at most).
auth::Sealer& thread_sealer(uint16_t cipher, const Bytes& key) {
  thread_local std::map<std::pair<uint16_t, Bytes>, std::unique_ptr<auth::Sealer>> cache;
  auto& s = cache[{cipher, key}];
  if (!s) s = std::make_unique<auth::Sealer>(cipher, key);
  return *s;
}

}  // namespace

Result<size_t> unseal_frame(uint16_t cipher, const Bytes& key, MutableByteView frame) {
  thread_local std::map<std::pair<uint16_t, Bytes>, std::unique_ptr<auth::Unsealer>> cache;
  auto& u = cache[{cipher, key}];
  if (!u) u = std::make_unique<auth::Unsealer>(cipher, key);
  auto n = u->decrypt_in_place(frame);
  if (!n) return security_violation(n.error().status, n.error().context);
  return *n;
}

bool seals_in_room(ByteView msg, ByteView payload, MutableByteView room) {
  return !payload.empty() && !room.empty() && payload.data() + payload.size() == room.data() + room.size() &&
         room.size() >= payload.size() && room.size() - payload.size() >= kFrameHeadroom + msg.size();
}

Result<void> finish_frame(MutableByteView msg, ByteView payload, OutFrame& out, MutableByteView room) {
  const FrameTransform& t = out.transform;
  if (msg.size() < kHeaderSize) return nt_error(STATUS_INVALID_PARAMETER, "request too short");
  // A signature or a seal covers every byte: a trailer would be outside it.
  if (out.trailer && t.kind != FrameTransform::Kind::none)
    return nt_error(STATUS_INVALID_PARAMETER, "a signed or sealed frame cannot have a trailer");
  if (t.kind == FrameTransform::Kind::seal) {
    // MS-SMB2 3.1.4.3: the whole message (header, body, WRITE data) becomes
    // the transform's ciphertext.
    ByteView pieces[2] = {msg, payload};
    size_t total = kTransformHeaderSize + msg.size() + payload.size();
    if (total > kMaxFrame) return nt_error(STATUS_INVALID_PARAMETER, "message too large");
    auth::Sealer& sealer = thread_sealer(t.algorithm, t.key);
    const ByteView nonce(t.nonce.data(), t.nonce_len);
    out.head.clear();
    if (seals_in_room(msg, payload, room)) {
      // [Direct TCP][TRANSFORM_HEADER][msg][payload] where the payload lies.
      std::byte* frame = room.data() + (room.size() - payload.size() - msg.size() - kFrameHeadroom);
      std::memcpy(frame + kFrameHeadroom, msg.data(), msg.size());
      put_direct_tcp_header(frame, total);
      SMBKIT_CHECK(sealer.encrypt_in_place(t.session_id, nonce, MutableByteView(frame + kDirectTcpHeader, total)));
      out.payload = ByteView(frame, kDirectTcpHeader + total);
    } else if (payload.empty()) {
      out.head.reserve(kDirectTcpHeader + total);
      out.head.resize(kDirectTcpHeader);
      put_direct_tcp_header(out.head.data(), total);
      SMBKIT_CHECK(sealer.encrypt_append(t.session_id, nonce, std::span<const ByteView>(pieces, 1), out.head));
      out.payload = {};
    } else {
      // A large message (a WRITE's data): a vector would zero the whole
      // frame before the cipher writes it.
      std::shared_ptr<std::byte[]> buf(new std::byte[kDirectTcpHeader + total]);
      put_direct_tcp_header(buf.get(), total);
      SMBKIT_CHECK(sealer.encrypt_into(t.session_id, nonce, pieces, MutableByteView(buf.get() + kDirectTcpHeader, total)));
      out.payload = ByteView(buf.get(), kDirectTcpHeader + total);
      out.storage = std::move(buf);
    }
  } else {
    if (t.kind == FrameTransform::Kind::sign) {
      auto alg = static_cast<auth::SignAlg>(t.algorithm);
      ByteView pieces[1] = {payload};
      auto r = payload.empty() ? auth::sign_message(alg, t.key, msg)
                               : auth::sign_message(alg, t.key, msg, std::span<const ByteView>(pieces, 1));
      if (!r) return r.take_error();
    }
    size_t len = msg.size() + payload.size() + out.trailer;
    if (len > kMaxFrame) return nt_error(STATUS_INVALID_PARAMETER, "message too large");
    out.head.clear();
    out.head.resize(kDirectTcpHeader);
    put_direct_tcp_header(out.head.data(), len);
    out.head.insert(out.head.end(), msg.begin(), msg.end());
    out.payload = payload;
  }
  out.transform = {};
  return {};
}

}  // namespace smbkit::session
