#include "proto/write.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// MS-SMB2 2.2.21, field by field: the encoder writes the fixed part only.
TEST(Write, RequestFixedPartByteExact) {
  WriteRequest req;
  req.Length = 5;
  req.Offset = 0x1000;
  req.FileId = {3, 4};
  req.Flags = SMB2_WRITEFLAG_WRITE_THROUGH;
  Bytes b = encoded(req, encode_write_request);
  EXPECT_EQ(b.size(), 64u + kWriteRequestFixedSize);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "3100"                // StructureSize = 49
            "7000"                // DataOffset = 0x70
            "05000000"            // Length
            "0010000000000000"    // Offset
            "0300000000000000"    // FileId.Persistent
            "0400000000000000"    // FileId.Volatile
            "00000000"            // Channel
            "00000000"            // RemainingBytes
            "0000"                // WriteChannelInfoOffset
            "0000"                // WriteChannelInfoLength
            "01000000");          // Flags = WRITE_THROUGH

  // The caller gathers the payload after it; the decoder views it in place.
  Bytes payload = from_hex("68656c6c6f");
  b.insert(b.end(), payload.begin(), payload.end());
  auto d = decode_write_request(b);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->DataOffset, kWriteRequestDataOffset);
  EXPECT_EQ(d->Length, 5u);
  EXPECT_EQ(d->Offset, 0x1000u);
  EXPECT_EQ(d->FileId, (FileId{3, 4}));
  EXPECT_EQ(d->Flags, SMB2_WRITEFLAG_WRITE_THROUGH);
  EXPECT_EQ(as_chars(d->Data), "hello");
  EXPECT_EQ(d->Data.data(), b.data() + 0x70);
}

TEST(Write, ZeroLengthGetsOneBufferByte) {
  Bytes b = encoded(WriteRequest{}, encode_write_request);
  EXPECT_EQ(b.size(), 64u + 49u);
  auto d = decode_write_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->Data.empty());
}

TEST(Write, ChannelInfoBeforeData) {
  WriteRequest req;
  req.Channel = SMB2_CHANNEL_RDMA_V1_INVALIDATE;
  req.WriteChannelInfo = from_hex("aabbccddeeff0011");
  Bytes b = encoded(req, encode_write_request);
  auto d = decode_write_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->WriteChannelInfo, req.WriteChannelInfo);
  EXPECT_EQ(d->DataOffset, 0x78);
}

TEST(Write, Response) {
  Bytes b = encoded(WriteResponse{0x10000, 0}, encode_write_response);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "1100"        // StructureSize = 17
            "0000"        // Reserved
            "00000100"    // Count
            "00000000"    // Remaining
            "0000"        // WriteChannelInfoOffset
            "0000");      // WriteChannelInfoLength
  auto d = decode_write_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Count, 0x10000u);
  b.pop_back();
  EXPECT_FALSE(decode_write_response(b).ok());
}

TEST(Write, RejectsMalformedRequests) {
  WriteRequest req;
  req.Length = 4;
  Bytes good = encoded(req, encode_write_request);
  good.resize(good.size() + 4);
  ASSERT_TRUE(decode_write_request(good).ok());
  auto bad = refuses(good, decode_write_request);
  bad([](Bytes& b) { b.pop_back(); });                            // data cut short
  bad([](Bytes& b) { store_le32(b.data() + 68, 0xFFFFFFFF); });  // Length
  bad([](Bytes& b) { store_le16(b.data() + 66, 0x60); });        // DataOffset in fixed part
  bad([](Bytes& b) { store_le16(b.data() + 66, 0xFFFF); });
  bad([](Bytes& b) { b[64] = std::byte{48}; });
  bad([](Bytes& b) { b.resize(64 + 47); });
  bad([](Bytes& b) { store_le16(b.data() + 64 + 42, 9); });      // channel info length
}

}  // namespace
}  // namespace smbkit::proto
