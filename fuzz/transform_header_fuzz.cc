// Fuzzes the receive path of SMB3 encryption: decode_transform_header and
// decrypt (copying and in place) with fixed keys, plus signature
// verification. Arbitrary input must never crash; a tag can't be forged, so
// decryption is expected to fail after the header checks.
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

  (void)auth::verify_message(auth::SignAlg::aes_cmac, ByteView(kKey, 16), in);
  (void)auth::verify_message(auth::SignAlg::aes_gmac, ByteView(kKey, 16), in);
  (void)auth::verify_message(auth::SignAlg::hmac_sha256, ByteView(kKey, 16), in);
  return 0;
}
