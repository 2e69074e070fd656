#include "proto/cancel.h"

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

TEST(Cancel, CancelRequestByteExactAndRoundTrip) {
  Bytes out = header_for(SMB2_CANCEL, false);
  ByteWriter w(out);
  ASSERT_TRUE(encode_cancel_request(CancelRequest{}, w).ok());
  ASSERT_EQ(out.size(), 68u);
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "0400"   // StructureSize 4
            "0000"); // Reserved
  auto back = decode_cancel_request(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, CancelRequest{});
}

TEST(Cancel, CancelRequestMalformed) {
  Bytes good = header_for(SMB2_CANCEL, false);
  ByteWriter w(good);
  ASSERT_TRUE(encode_cancel_request(CancelRequest{}, w).ok());
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_FALSE(decode_cancel_request(Bytes(good.begin(), good.begin() + n)).ok()) << n;
  Bytes bad = good;
  bad[64] = std::byte{5};  // StructureSize 5
  auto r = decode_cancel_request(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  bad[64] = std::byte{4};
  bad[65] = std::byte{1};  // StructureSize 0x0104
  EXPECT_FALSE(decode_cancel_request(bad).ok());
  // Trailing bytes (e.g. compound padding) are ignored.
  Bytes longer = good;
  longer.resize(good.size() + 4);
  EXPECT_TRUE(decode_cancel_request(longer).ok());
}

// MS-SMB2 3.2.4.24: cancelling a pending async request names it by AsyncId
// in an async header; the body is the same 4 bytes.
TEST(Cancel, AsyncCancelMessageByteExact) {
  Header h;
  h.Command = SMB2_CANCEL;
  h.Flags = SMB2_FLAGS_ASYNC_COMMAND;
  h.MessageId = 0;
  h.AsyncId = 0x0000000000000042ull;
  h.SessionId = 0x0000000011223344ull;
  Bytes out;
  ByteWriter w(out);
  encode_header(h, w);
  ASSERT_TRUE(encode_cancel_request(CancelRequest{}, w).ok());
  EXPECT_EQ(to_hex(out),
            "fe534d42"          // ProtocolId
            "4000"              // StructureSize 64
            "0000"              // CreditCharge
            "00000000"          // ChannelSequence/Reserved
            "0c00"              // Command CANCEL
            "0000"              // CreditRequest
            "02000000"          // Flags ASYNC_COMMAND
            "00000000"          // NextCommand
            "0000000000000000"  // MessageId
            "4200000000000000"  // AsyncId
            "4433221100000000"  // SessionId
            "00000000000000000000000000000000"  // Signature
            "0400"              // StructureSize 4
            "0000");            // Reserved
  ASSERT_TRUE(decode_cancel_request(out).ok());
}

}  // namespace
}  // namespace smbkit::proto
