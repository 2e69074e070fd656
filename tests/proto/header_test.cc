#include "proto/header.h"

#include <gtest/gtest.h>

namespace smbkit::proto {
namespace {

TEST(Header, SyncRoundTrip) {
  Header h;
  h.CreditCharge = 1;
  h.Command = SMB2_NEGOTIATE;
  h.CreditRequestResponse = 31;
  h.MessageId = 0;
  h.Reserved = 0xFEFF;
  h.TreeId = 0;
  Bytes b;
  ByteWriter w(b);
  encode_header(h, w);
  ASSERT_EQ(b.size(), kHeaderSize);
  EXPECT_EQ(to_hex(ByteView(b).first(16)), "fe534d42400001000000000000001f00");
  auto d = decode_header(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Command, SMB2_NEGOTIATE);
  EXPECT_EQ(d->CreditRequestResponse, 31);
  EXPECT_EQ(d->Reserved, 0xFEFFu);
  EXPECT_FALSE(d->is_async());
}

TEST(Header, AsyncForm) {
  Header h;
  h.Flags = SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND;
  h.Status = STATUS_PENDING;
  h.AsyncId = 0x1122334455667788ull;
  h.SessionId = 7;
  Bytes b;
  ByteWriter w(b);
  encode_header(h, w);
  auto d = decode_header(b);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->is_async());
  EXPECT_EQ(d->AsyncId, 0x1122334455667788ull);
  EXPECT_EQ(d->SessionId, 7u);
  EXPECT_EQ(d->Status, STATUS_PENDING);
}

TEST(Header, RejectsBadInput) {
  Bytes b(63);
  EXPECT_FALSE(decode_header(b).ok());
  Header h;
  Bytes ok;
  ByteWriter w(ok);
  encode_header(h, w);
  ok[0] = std::byte{0xFF};
  EXPECT_EQ(decode_header(ok).error().status, STATUS_INVALID_NETWORK_RESPONSE);
  ok[0] = std::byte{0xFE};
  ok[4] = std::byte{65};  // StructureSize
  EXPECT_FALSE(decode_header(ok).ok());
}

}  // namespace
}  // namespace smbkit::proto
