#include "proto/copychunk.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

CopychunkKey key_of(uint8_t first) {
  CopychunkKey k{};
  for (size_t i = 0; i < k.size(); i++) k[i] = std::byte(first + i);
  return k;
}

TEST(Copychunk, ResumeKeyResponseRoundTrips) {
  // MS-SMB2 2.2.32.3: 24-byte key, ContextLength 4, 4 bytes of Context.
  Bytes wire = from_hex(
      "000102030405060708090a0b0c0d0e0f1011121314151617"
      "04000000"
      "aabbccdd");
  auto v = decode_resume_key_response(wire);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->ResumeKey, key_of(0));
  EXPECT_EQ(v->Context, from_hex("aabbccdd"));
  auto again = encode_resume_key_response(*v);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, wire);
}

TEST(Copychunk, ResumeKeyResponseLengthsChecked) {
  Bytes full = from_hex(
      "000102030405060708090a0b0c0d0e0f1011121314151617"
      "00000000");
  EXPECT_TRUE(decode_resume_key_response(full).ok());
  for (size_t n = 0; n < full.size(); n++) EXPECT_FALSE(decode_resume_key_response(ByteView(full).first(n)).ok()) << n;
  // ContextLength past the output (and a huge one) is refused.
  Bytes past = from_hex(
      "000102030405060708090a0b0c0d0e0f1011121314151617"
      "05000000"
      "aabbccdd");
  EXPECT_FALSE(decode_resume_key_response(past).ok());
  Bytes huge = from_hex(
      "000102030405060708090a0b0c0d0e0f1011121314151617"
      "ffffffff");
  EXPECT_FALSE(decode_resume_key_response(huge).ok());
}

TEST(Copychunk, CopyRoundTripsByteExact) {
  SrvCopychunkCopy c;
  c.SourceKey = key_of(0x20);
  c.Chunks = {{0x1000, 0x2000, 0x100000}, {0x0102030405060708ull, 0x1112131415161718ull, 7}};
  auto wire = encode_copychunk_copy(c);
  ASSERT_TRUE(wire.ok());
  EXPECT_EQ(*wire, from_hex("202122232425262728292a2b2c2d2e2f3031323334353637"
                            "02000000"
                            "00000000"  // ChunkCount 2, Reserved
                            "0010000000000000"
                            "0020000000000000"
                            "00001000"
                            "00000000"
                            "0807060504030201"
                            "1817161514131211"
                            "07000000"
                            "00000000"));
  EXPECT_EQ(wire->size(), kCopychunkCopyHeaderSize + 2 * kCopychunkSize);
  auto back = decode_copychunk_copy(*wire);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, c);
}

TEST(Copychunk, CopyLengthsChecked) {
  SrvCopychunkCopy c;
  c.Chunks = {{1, 2, 3}};
  Bytes wire = *encode_copychunk_copy(c);
  for (size_t n = 0; n < wire.size(); n++) EXPECT_FALSE(decode_copychunk_copy(ByteView(wire).first(n)).ok()) << n;
  // A ChunkCount larger than the chunks present, or absurdly large.
  Bytes lying = wire;
  lying[24] = std::byte{2};
  EXPECT_FALSE(decode_copychunk_copy(lying).ok());
  lying[24] = lying[25] = lying[26] = lying[27] = std::byte{0xff};
  EXPECT_FALSE(decode_copychunk_copy(lying).ok());
  // No chunks at all is a valid (empty) request.
  SrvCopychunkCopy empty;
  auto e = decode_copychunk_copy(*encode_copychunk_copy(empty));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->Chunks.empty());
}

TEST(Copychunk, ResponseRoundTripsAndIsExactlyTwelveBytes) {
  // Samba's limits answer (STATUS_INVALID_PARAMETER): 256 chunks, 1 MiB, 16
  // MiB.
  Bytes wire = from_hex(
      "00010000"
      "00001000"
      "00000001");
  auto v = decode_copychunk_response(wire);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->ChunksWritten, 256u);
  EXPECT_EQ(v->ChunkBytesWritten, 1u << 20);
  EXPECT_EQ(v->TotalBytesWritten, 16u << 20);
  EXPECT_EQ(*encode_copychunk_response(*v), wire);
  for (size_t n = 0; n < wire.size(); n++) EXPECT_FALSE(decode_copychunk_response(ByteView(wire).first(n)).ok()) << n;
  Bytes longer = wire;
  longer.push_back(std::byte{0});
  EXPECT_FALSE(decode_copychunk_response(longer).ok());
}

}  // namespace
}  // namespace smbkit::proto
