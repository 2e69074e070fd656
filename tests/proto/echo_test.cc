#include "proto/echo.h"

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

// SambaEchoRequest echo_request EchoRequest (real smbclient "echo")
constexpr std::string_view kSambaEchoRequest =
    "fe534d4240000100000000000d00010000000000000000000900000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "04000000";

// SambaEchoResponse echo_response EchoResponse (real Samba 4.17)
constexpr std::string_view kSambaEchoResponse =
    "fe534d4240000100000000000d00010001000000000000000900000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "04000000";

TEST(Echo, EchoRequestByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_ECHO, false);
  ByteWriter w(out);
  ASSERT_TRUE(encode_echo_request(EchoRequest{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_echo_request(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, EchoRequest{});
}

TEST(Echo, EchoRequestMalformed) {
  Bytes good = header_for(SMB2_ECHO, false);
  ByteWriter w(good);
  ASSERT_TRUE(encode_echo_request(EchoRequest{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_echo_request(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_echo_request(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_echo_request(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_echo_request(longer).ok());
}

TEST(Echo, EchoResponseByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_ECHO, true);
  ByteWriter w(out);
  ASSERT_TRUE(encode_echo_response(EchoResponse{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_echo_response(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, EchoResponse{});
}

TEST(Echo, EchoResponseMalformed) {
  Bytes good = header_for(SMB2_ECHO, true);
  ByteWriter w(good);
  ASSERT_TRUE(encode_echo_response(EchoResponse{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_echo_response(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_echo_response(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_echo_response(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_echo_response(longer).ok());
}

TEST(Echo, SambaEchoRequest) {
  Bytes wire = from_hex(kSambaEchoRequest);
  ASSERT_EQ(wire.size(), 68u);
  auto m = decode_echo_request(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(encode_echo_request(*m, w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

TEST(Echo, SambaEchoResponse) {
  Bytes wire = from_hex(kSambaEchoResponse);
  ASSERT_EQ(wire.size(), 68u);
  auto m = decode_echo_response(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(encode_echo_response(*m, w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

}  // namespace
}  // namespace smbkit::proto
