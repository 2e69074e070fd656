#include "proto/read.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Samba 4.17's READ response for 6 bytes ("hello\n") of a.txt.
const char* kCapturedResponse =
    "fe534d42400001000000000008007f000100000000000000060000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "1100500006000000000000000000000068656c6c6f0a";

// MS-SMB2 2.2.19, field by field.
TEST(Read, RequestByteExact) {
  ReadRequest req;
  req.Flags = SMB2_READFLAG_READ_UNBUFFERED;
  req.Length = 0x10000;
  req.Offset = 0x123456789ull;
  req.FileId = {1, 2};
  req.MinimumCount = 1;
  req.RemainingBytes = 0x20000;
  Bytes b = encoded(req, encode_read_request);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "3100"                // StructureSize = 49
            "50"                  // Padding = 0x50
            "01"                  // Flags = READ_UNBUFFERED
            "00000100"            // Length = 64 KiB
            "8967452301000000"    // Offset
            "0100000000000000"    // FileId.Persistent
            "0200000000000000"    // FileId.Volatile
            "01000000"            // MinimumCount
            "00000000"            // Channel = NONE
            "00000200"            // RemainingBytes
            "0000"                // ReadChannelInfoOffset
            "0000"                // ReadChannelInfoLength
            "00");                // the one Buffer byte
  auto d = decode_read_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Length, 0x10000u);
  EXPECT_EQ(d->Offset, 0x123456789ull);
  EXPECT_EQ(d->FileId, (FileId{1, 2}));
  EXPECT_EQ(d->MinimumCount, 1u);
  EXPECT_EQ(d->RemainingBytes, 0x20000u);
  EXPECT_TRUE(d->ReadChannelInfo.empty());
}

TEST(Read, RequestWithChannelInfo) {
  ReadRequest req;
  req.Channel = SMB2_CHANNEL_RDMA_V1;
  req.ReadChannelInfo = from_hex("00112233445566778899aabbccddeeff");
  Bytes b = encoded(req, encode_read_request);
  EXPECT_EQ(load_le16(b.data() + 64 + 44), 0x70);  // ReadChannelInfoOffset
  auto d = decode_read_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ReadChannelInfo, req.ReadChannelInfo);
  store_le16(b.data() + 64 + 46, 17);  // length past the end
  EXPECT_FALSE(decode_read_request(b).ok());
  store_le16(b.data() + 64 + 46, 16);
  store_le16(b.data() + 64 + 44, 0x40);  // offset inside the header
  EXPECT_FALSE(decode_read_request(b).ok());
}

TEST(Read, DecodesCapturedResponseZeroCopy) {
  Bytes msg = from_hex(kCapturedResponse);
  auto d = decode_read_response(msg);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->DataOffset, 0x50);
  EXPECT_EQ(d->DataLength, 6u);
  EXPECT_EQ(d->DataRemaining, 0u);
  EXPECT_EQ(as_chars(d->Data), "hello\n");
  EXPECT_EQ(d->Data.data(), msg.data() + 0x50);  // a view, not a copy

  auto f = decode_read_response_fixed(ByteView(msg).first(80));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->DataOffset, 0x50);
  EXPECT_EQ(f->DataLength, 6u);
  EXPECT_TRUE(read_data_fits(*f, msg.size()));
  EXPECT_FALSE(read_data_fits(*f, msg.size() - 1));
  EXPECT_FALSE(decode_read_response_fixed(ByteView(msg).first(79)).ok());
}

TEST(Read, ResponseRoundTrip) {
  Bytes payload = from_hex("0102030405");
  ReadResponse r;
  r.Data = payload;
  r.DataRemaining = 7;
  Bytes b = encoded(r, encode_read_response);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "1100"        // StructureSize = 17
            "50"          // DataOffset
            "00"          // Reserved
            "05000000"    // DataLength
            "07000000"    // DataRemaining
            "00000000"    // Flags
            "0102030405");
  auto d = decode_read_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(to_hex(d->Data), "0102030405");
  EXPECT_EQ(d->DataRemaining, 7u);
}

TEST(Read, RejectsMalformedResponses) {
  const Bytes good = from_hex(kCapturedResponse);
  auto bad = refuses(good, decode_read_response);
  bad([](Bytes& b) { b.resize(64 + 15); });
  bad([](Bytes& b) { b.resize(b.size() - 1); });               // data cut short
  bad([](Bytes& b) { b[64] = std::byte{16}; });                // StructureSize
  bad([](Bytes& b) { b[66] = std::byte{0x40}; });              // DataOffset in fixed part
  bad([](Bytes& b) { b[66] = std::byte{0xFF}; });              // DataOffset past end
  bad([](Bytes& b) { store_le32(b.data() + 68, 0xFFFFFFFF); }); // DataLength
  // DataLength 0 is fine whatever DataOffset says.
  Bytes z = good;
  store_le32(z.data() + 68, 0);
  z[66] = std::byte{0};
  auto d = decode_read_response(z);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->Data.empty());
}

}  // namespace
}  // namespace smbkit::proto
