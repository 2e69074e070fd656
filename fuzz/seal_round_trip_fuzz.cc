// Fuzzes the send side of SMB3 encryption: for any plaintext, cipher,
// nonce and SessionId, Sealer::encrypt_in_place writes exactly the bytes
// encrypt() returns (pieces split at an input-chosen point), and the
// Unsealer opens both back to the plaintext.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "auth/sealing.h"
#include "proto/constants.h"
#include "proto/transform_header.h"

namespace {

using namespace smbkit;

const std::byte kKey[32] = {std::byte{9}, std::byte{8}, std::byte{7}, std::byte{6}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Input: cipher (1), split (1), SessionId (8), nonce (12), plaintext.
  if (size < 22) return 0;
  const uint16_t cipher = static_cast<uint16_t>(1 + data[0] % 4);
  const size_t key_len = (cipher == proto::AES_256_CCM || cipher == proto::AES_256_GCM) ? 32 : 16;
  ByteView key(kKey, key_len);
  uint64_t sid;
  std::memcpy(&sid, data + 2, 8);
  ByteView nonce(reinterpret_cast<const std::byte*>(data + 10), auth::cipher_nonce_size(cipher));
  ByteView pt(reinterpret_cast<const std::byte*>(data + 22), size - 22);
  const size_t split = pt.empty() ? 0 : data[1] % (pt.size() + 1);

  auth::Sealer s(cipher, key);
  ByteView pieces[2] = {pt.first(split), pt.subspan(split)};
  auto want = s.encrypt(sid, nonce, pieces);
  Bytes frame(proto::kTransformHeaderSize);
  frame.insert(frame.end(), pt.begin(), pt.end());
  auto r = s.encrypt_in_place(sid, nonce, frame);
  if (r.ok() != want.ok()) __builtin_trap();
  if (!r.ok()) {
    if (!pt.empty()) __builtin_trap();  // only an empty message is refused
    return 0;
  }
  if (frame != *want) __builtin_trap();

  auth::Unsealer u(cipher, key);
  proto::TransformHeader h;
  auto n = u.decrypt_in_place(frame, &h);
  if (!n.ok() || *n != pt.size() || h.SessionId != sid) __builtin_trap();
  if (std::memcmp(frame.data() + proto::kTransformHeaderSize, pt.data(), pt.size()) != 0) __builtin_trap();
  return 0;
}
