#include "proto/cancel.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// MS-SMB2 2.2.30: the shared tests of empty_body_test.cc (CANCEL has no
// response, and the captures hold no CANCEL request).
INSTANTIATE_TEST_SUITE_P(Cancel, EmptyBodyTest,
                         ::testing::Values(empty_body_codec("CancelRequest", SMB2_CANCEL, false,
                                                            encode_cancel_request,
                                                            decode_cancel_request)),
                         empty_body_name);

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
