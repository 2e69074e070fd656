// The tests shared by the commands whose body is StructureSize (4) and
// Reserved only: ECHO (MS-SMB2 2.2.28 / 2.2.29), LOGOFF (2.2.7 / 2.2.8),
// TREE_DISCONNECT (2.2.11 / 2.2.12) and CANCEL (2.2.30). echo_test.cc,
// logoff_test.cc, tree_disconnect_test.cc and cancel_test.cc instantiate
// them.
#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

TEST_P(EmptyBodyTest, ByteExactAndRoundTrip) {
  const EmptyBodyCodec& c = GetParam();
  Bytes out = header_for(c.command, c.response);
  ByteWriter w(out);
  ASSERT_TRUE(c.encode(w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = c.decode(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(*back);  // equals the empty struct
}

TEST_P(EmptyBodyTest, Malformed) {
  const EmptyBodyCodec& c = GetParam();
  Bytes good = header_for(c.command, c.response);
  ByteWriter w(good);
  ASSERT_TRUE(c.encode(w).ok());
  expect_truncations_fail(good, c.decode);
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = c.decode(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(c.decode(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(c.decode(longer).ok());
}

// A real message decodes and re-encodes byte for byte after its header.
TEST_P(EmptyBodyCaptureTest, SambaMessageRoundTripsByteExact) {
  const EmptyBodyCodec& c = GetParam();
  Bytes wire = from_hex(c.samba_capture);
  ASSERT_EQ(wire.size(), 68u);
  auto m = c.decode(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_TRUE(*m);  // equals the empty struct, which is what encode() writes
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(c.encode(w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

}  // namespace
}  // namespace smbkit::proto
