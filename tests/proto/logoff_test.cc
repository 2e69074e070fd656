#include "proto/logoff.h"

#include <gtest/gtest.h>

#include "proto/header.h"

namespace smbkit::proto {
namespace {

Bytes header_for(uint16_t command, bool response) {
  Header h;
  h.Command = command;
  if (response) h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
  Bytes b;
  ByteWriter w(b);
  encode_header(h, w);
  return b;
}

// SambaLogoffRequest logoff_request LogoffRequest (real smbclient, captured on loopback)
constexpr std::string_view kSambaLogoffRequest =
    "fe534d4240000100000000000200010000000000000000000a00000000000000"
    "0000000000000000a7d2046e0000000000000000000000000000000000000000"
    "04000000";

// SambaLogoffResponse logoff_response LogoffResponse (real Samba 4.17)
constexpr std::string_view kSambaLogoffResponse =
    "fe534d4240000100000000000200010001000000000000000a00000000000000"
    "0000000000000000a7d2046e0000000000000000000000000000000000000000"
    "04000000";

TEST(Logoff, LogoffRequestByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_LOGOFF, false);
  ByteWriter w(out);
  ASSERT_TRUE(encode_logoff_request(LogoffRequest{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_logoff_request(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, LogoffRequest{});
}

TEST(Logoff, LogoffRequestMalformed) {
  Bytes good = header_for(SMB2_LOGOFF, false);
  ByteWriter w(good);
  ASSERT_TRUE(encode_logoff_request(LogoffRequest{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_logoff_request(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_logoff_request(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_logoff_request(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_logoff_request(longer).ok());
}

TEST(Logoff, LogoffResponseByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_LOGOFF, true);
  ByteWriter w(out);
  ASSERT_TRUE(encode_logoff_response(LogoffResponse{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_logoff_response(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, LogoffResponse{});
}

TEST(Logoff, LogoffResponseMalformed) {
  Bytes good = header_for(SMB2_LOGOFF, true);
  ByteWriter w(good);
  ASSERT_TRUE(encode_logoff_response(LogoffResponse{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_logoff_response(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_logoff_response(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_logoff_response(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_logoff_response(longer).ok());
}

TEST(Logoff, SambaLogoffRequest) {
  Bytes wire = from_hex(kSambaLogoffRequest);
  ASSERT_EQ(wire.size(), 68u);
  auto m = decode_logoff_request(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(encode_logoff_request(*m, w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

TEST(Logoff, SambaLogoffResponse) {
  Bytes wire = from_hex(kSambaLogoffResponse);
  ASSERT_EQ(wire.size(), 68u);
  auto m = decode_logoff_response(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(encode_logoff_response(*m, w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

}  // namespace
}  // namespace smbkit::proto
