// Fuzzes the receive path of SMB3 encryption: decode_transform_header and
// decrypt (copying, in place, and split: the rest of the message into a
// buffer of its own, at a point the input picks) with fixed keys, plus signature
// verification. Arbitrary input must never crash; a tag can't be forged, so
// decryption is expected to fail after the header checks.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "auth/sealing.h"
#include "auth/signing.h"
#include "proto/constants.h"
#include "proto/transform_header.h"

namespace {

using namespace smbkit;

const std::byte kKey[32] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte*>(data), size);

  auto h = proto::decode_transform_header(in);
  if (h.ok()) {
    Bytes out;
    ByteWriter w(out);
    proto::encode_transform_header(*h, w);
    if (out.size() != proto::kTransformHeaderSize) __builtin_trap();
  }

  // The first byte picks the cipher so every decrypt path gets input.
  uint16_t cipher = size ? static_cast<uint16_t>(1 + data[0] % 4) : proto::AES_128_GCM;
  size_t key_len = (cipher == proto::AES_256_CCM || cipher == proto::AES_256_GCM) ? 32 : 16;
  ByteView key(kKey, key_len);

  proto::TransformHeader th;
  auto pt = auth::decrypt_message(cipher, key, in, &th);
  if (pt.ok() && pt->size() != size - proto::kTransformHeaderSize) __builtin_trap();

  Bytes copy(in.begin(), in.end());
  auto n = auth::decrypt_in_place(cipher, key, copy);
  if (n.ok() != pt.ok()) __builtin_trap();

  // Split at a point the second byte picks (as a READ's DataOffset would),
  // the rest into a buffer of its own; the same verdict, and on failure
  // nothing left in either place.
  Bytes split_frame(in.begin(), in.end());
  Bytes rest;
  const size_t keep_pick = size > 1 ? data[1] : 0;
  auth::Unsealer u(cipher, key);
  bool split = false;
  auto m = u.decrypt_split(
      split_frame, 80,
      [&](ByteView first, size_t len) {
        if (first.size() > len) __builtin_trap();
        size_t keep = std::min(len, first.size() + keep_pick);
        rest.assign(len - keep, std::byte{0x5a});
        return auth::Unsealer::Placement{keep, MutableByteView(rest)};
      },
      &split);
  if (m.ok() != pt.ok()) __builtin_trap();
  if (!m.ok())
    for (std::byte b : rest)
      if (b != std::byte{0} && b != std::byte{0x5a}) __builtin_trap();

  (void)auth::verify_message(auth::SignAlg::aes_cmac, ByteView(kKey, 16), in);
  (void)auth::verify_message(auth::SignAlg::aes_gmac, ByteView(kKey, 16), in);
  (void)auth::verify_message(auth::SignAlg::hmac_sha256, ByteView(kKey, 16), in);
  return 0;
}
