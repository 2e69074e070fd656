#include "proto/close.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"
#include "proto/create.h"

namespace smbkit::proto {
namespace {

// Samba 4.17's CLOSE response to a request without POSTQUERY_ATTRIB.
const char* kCapturedResponse =
    "fe534d42400001000000000006007f000100000000000000050000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "3c00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000";

// MS-SMB2 2.2.15, field by field.
TEST(Close, RequestByteExact) {
  CloseRequest req{SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB, FileId{0x11, 0x22}};
  Bytes b = encoded(req, encode_close_request);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "1800"                // StructureSize = 24
            "0100"                // Flags = POSTQUERY_ATTRIB
            "00000000"            // Reserved
            "1100000000000000"    // FileId.Persistent
            "2200000000000000");  // FileId.Volatile
  auto d = decode_close_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Flags, SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB);
  EXPECT_EQ(d->FileId, (FileId{0x11, 0x22}));
}

TEST(Close, ResponseRoundTrip) {
  CloseResponse r;
  r.Flags = SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB;
  r.CreationTime = 1;
  r.LastAccessTime = 2;
  r.LastWriteTime = 3;
  r.ChangeTime = 4;
  r.AllocationSize = 4096;
  r.EndofFile = 100;
  r.FileAttributes = FILE_ATTRIBUTE_ARCHIVE;
  Bytes b = encoded(r, encode_close_response);
  ASSERT_EQ(b.size(), 64u + 60u);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64, 8)), "3c00" "0100" "00000000");
  EXPECT_EQ(to_hex(ByteView(b).subspan(64 + 56)), "20000000");  // FileAttributes
  auto d = decode_close_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Flags, r.Flags);
  EXPECT_EQ(d->ChangeTime, 4u);
  EXPECT_EQ(d->AllocationSize, 4096u);
  EXPECT_EQ(d->EndofFile, 100u);
  EXPECT_EQ(d->FileAttributes, FILE_ATTRIBUTE_ARCHIVE);
}

TEST(Close, DecodesCapturedResponse) {
  auto d = decode_close_response(from_hex(kCapturedResponse));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Flags, 0);
  EXPECT_EQ(d->EndofFile, 0u);
}

TEST(Close, RejectsMalformed) {
  Bytes good = from_hex(kCapturedResponse);
  Bytes b = good;
  b.resize(b.size() - 1);
  EXPECT_EQ(decode_close_response(b).error().status, STATUS_INVALID_NETWORK_RESPONSE);
  b = good;
  b[64] = std::byte{24};
  EXPECT_FALSE(decode_close_response(b).ok());
  EXPECT_FALSE(decode_close_request(good).ok());  // StructureSize 60 != 24
  EXPECT_FALSE(decode_close_request(ByteView(good).first(64 + 23)).ok());
}

}  // namespace
}  // namespace smbkit::proto
