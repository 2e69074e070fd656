#include "proto/flush.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// MS-SMB2 2.2.17 / 2.2.18, field by field.
TEST(Flush, ByteExactAndRoundTrip) {
  Bytes b = encoded(FlushRequest{FileId{1, 2}}, encode_flush_request);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "1800"                // StructureSize = 24
            "0000"                // Reserved1
            "00000000"            // Reserved2
            "0100000000000000"    // FileId.Persistent
            "0200000000000000");  // FileId.Volatile
  auto d = decode_flush_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->FileId, (FileId{1, 2}));

  Bytes r = encoded(FlushResponse{}, encode_flush_response);
  EXPECT_EQ(to_hex(ByteView(r).subspan(64)), "0400" "0000");
  EXPECT_TRUE(decode_flush_response(r).ok());
}

TEST(Flush, RejectsMalformed) {
  Bytes r = header_bytes();
  EXPECT_FALSE(decode_flush_response(r).ok());  // no body
  r.push_back(std::byte{4});
  r.push_back(std::byte{0});
  r.push_back(std::byte{0});
  EXPECT_FALSE(decode_flush_response(r).ok());  // 3-byte body
  r.push_back(std::byte{0});
  EXPECT_TRUE(decode_flush_response(r).ok());
  r[64] = std::byte{5};
  EXPECT_FALSE(decode_flush_response(r).ok());
  Bytes q = encoded(FlushRequest{}, encode_flush_request);
  q.pop_back();
  EXPECT_FALSE(decode_flush_request(q).ok());
}

}  // namespace
}  // namespace smbkit::proto
