#include "proto/transform_header.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Header of the AES-128-GCM WRITE request in "SMB 3.1.1 Encryption in
// Windows 10" (Microsoft Open Specifications blog), Appendix A.1.
const char kPublished[] =
    "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"
    "000001002500000000100000";

TEST(TransformHeader, DecodesPublishedHeader) {
  Bytes b = from_hex(kPublished);
  ASSERT_EQ(b.size(), kTransformHeaderSize);
  auto h = decode_transform_header(b);
  ASSERT_TRUE(h.ok()) << h.error().message();
  EXPECT_EQ(to_hex(h->Signature), "bd73d97d2bc9001bcafac0fdff5feebc");
  EXPECT_EQ(to_hex(h->Nonce), "c7d6822d269caf48904c664c00000000");
  EXPECT_EQ(h->OriginalMessageSize, 0x87u);
  EXPECT_EQ(h->Reserved, 0);
  EXPECT_EQ(h->Flags, SMB2_TRANSFORM_HEADER_FLAG_ENCRYPTED);
  EXPECT_EQ(h->SessionId, 0x100000000025ull);
  Bytes out;
  ByteWriter w(out);
  encode_transform_header(*h, w);
  EXPECT_EQ(to_hex(out), to_hex(b));
}

TEST(TransformHeader, DecodeIgnoresTrailingCiphertext) {
  Bytes b = from_hex(kPublished);
  b.resize(b.size() + 10, std::byte{0xAB});
  EXPECT_TRUE(decode_transform_header(b).ok());
}

TEST(TransformHeader, RoundTrip) {
  TransformHeader h;
  for (size_t i = 0; i < 16; i++) {
    h.Signature[i] = std::byte(static_cast<uint8_t>(i));
    h.Nonce[i] = std::byte(static_cast<uint8_t>(0xF0 | i));
  }
  h.OriginalMessageSize = 0x01020304;
  h.SessionId = 0x1122334455667788ull;
  Bytes out;
  ByteWriter w(out);
  encode_transform_header(h, w);
  ASSERT_EQ(out.size(), kTransformHeaderSize);
  EXPECT_EQ(to_hex(ByteView(out).first(4)), "fd534d42");
  EXPECT_EQ(to_hex(ByteView(out).subspan(36, 8)), "0403020100000100");
  auto d = decode_transform_header(out);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Signature, h.Signature);
  EXPECT_EQ(d->Nonce, h.Nonce);
  EXPECT_EQ(d->OriginalMessageSize, h.OriginalMessageSize);
  EXPECT_EQ(d->SessionId, h.SessionId);
}

TEST(TransformHeader, RejectsMalformed) {
  Bytes good = from_hex(kPublished);
  auto malformed = [](ByteView b) {
    auto r = decode_transform_header(b);
    return !r.ok() && r.error().is(STATUS_INVALID_NETWORK_RESPONSE);
  };
  EXPECT_TRUE(malformed({}));
  expect_truncations_fail(good, decode_transform_header);
  Bytes b = good;
  b[0] = std::byte{0xFE};  // an SMB2 header, not a transform header
  EXPECT_TRUE(malformed(b));
  b = good;
  b[0] = std::byte{0xFC};  // compression transform header
  EXPECT_TRUE(malformed(b));
  for (uint16_t flags : {0x0000, 0x0002, 0x0101, 0xFFFF}) {
    b = good;
    store_le16(b.data() + 42, flags);
    EXPECT_TRUE(malformed(b)) << flags;
  }
}

}  // namespace
}  // namespace smbkit::proto
