#include "proto/tree_disconnect.h"

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

// SambaTreeDisconnectRequest tree_disconnect_request TreeDisconnectRequest (real smbclient)
constexpr std::string_view kSambaTreeDisconnectRequest =
    "fe534d4240000100000000000400010010000000000000000500000000000000"
    "0000000024b4c09fee4d44520000000000000000000000000000000000000000"
    "04000000";

// SambaTreeDisconnectResponse tree_disconnect_response TreeDisconnectResponse (real Samba 4.17)
constexpr std::string_view kSambaTreeDisconnectResponse =
    "fe534d4240000100000000000400010011000000000000000500000000000000"
    "0000000024b4c09fee4d44520000000000000000000000000000000000000000"
    "04000000";

TEST(TreeDisconnect, TreeDisconnectRequestByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_TREE_DISCONNECT, false);
  ByteWriter w(out);
  ASSERT_TRUE(encode_tree_disconnect_request(TreeDisconnectRequest{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_tree_disconnect_request(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, TreeDisconnectRequest{});
}

TEST(TreeDisconnect, TreeDisconnectRequestMalformed) {
  Bytes good = header_for(SMB2_TREE_DISCONNECT, false);
  ByteWriter w(good);
  ASSERT_TRUE(encode_tree_disconnect_request(TreeDisconnectRequest{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_tree_disconnect_request(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_tree_disconnect_request(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_tree_disconnect_request(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_tree_disconnect_request(longer).ok());
}

TEST(TreeDisconnect, TreeDisconnectResponseByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_TREE_DISCONNECT, true);
  ByteWriter w(out);
  ASSERT_TRUE(encode_tree_disconnect_response(TreeDisconnectResponse{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_tree_disconnect_response(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, TreeDisconnectResponse{});
}

TEST(TreeDisconnect, TreeDisconnectResponseMalformed) {
  Bytes good = header_for(SMB2_TREE_DISCONNECT, true);
  ByteWriter w(good);
  ASSERT_TRUE(encode_tree_disconnect_response(TreeDisconnectResponse{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_tree_disconnect_response(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_tree_disconnect_response(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_tree_disconnect_response(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_tree_disconnect_response(longer).ok());
}

TEST(TreeDisconnect, SambaTreeDisconnectRequest) {
  Bytes wire = from_hex(kSambaTreeDisconnectRequest);
  ASSERT_EQ(wire.size(), 68u);
  auto m = decode_tree_disconnect_request(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(encode_tree_disconnect_request(*m, w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

TEST(TreeDisconnect, SambaTreeDisconnectResponse) {
  Bytes wire = from_hex(kSambaTreeDisconnectResponse);
  ASSERT_EQ(wire.size(), 68u);
  auto m = decode_tree_disconnect_response(wire);
  ASSERT_TRUE(m.ok()) << m.error().message();
  Bytes out(wire.begin(), wire.begin() + 64);
  ByteWriter w(out);
  ASSERT_TRUE(encode_tree_disconnect_response(*m, w).ok());
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

}  // namespace
}  // namespace smbkit::proto
