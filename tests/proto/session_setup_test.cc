#include "proto/session_setup.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Real smbclient -> Samba 4.17 messages captured on loopback. First
// request: SPNEGO NegTokenInit carrying an NTLMSSP NEGOTIATE.
constexpr std::string_view kSambaRequest1 =
    "fe534d4240000100000000000100002010000000000000000100000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "1900"              // StructureSize 25
    "00"                // Flags
    "01"                // SecurityMode SIGNING_ENABLED
    "01000000"          // Capabilities DFS
    "00000000"          // Channel
    "5800" "4a00"       // SecurityBufferOffset 88, Length 74
    "0000000000000000"  // PreviousSessionId
    "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa22a04284e544c4d5353"
    "5000010000001582086200000000280000000000000028000000060100000000000f";

// Samba's STATUS_MORE_PROCESSING_REQUIRED answer (NTLMSSP CHALLENGE).
constexpr std::string_view kSambaResponse1 =
    "fe534d4240000100160000c00100010011000000000000000100000000000000"
    "0000000000000000ee4d44520000000000000000000000000000000000000000"
    "0900"         // StructureSize 9
    "0000"         // SessionFlags
    "4800" "8400"  // SecurityBufferOffset 72, Length 132
    "a18181307fa0030a0101a10c060a2b06010401823702020aa26a04684e544c4d5353500002000000"
    "040004003800000015828a622de696b7f24a81ff00000000000000002c002c003c00000006010000"
    "0000000f56004d000200040056004d000100040056004d00040000000300040076006d0007000800"
    "b44723069480dd0100000000";

// The final STATUS_SUCCESS answer (SPNEGO accept-completed + mechListMIC).
constexpr std::string_view kSambaResponse2 =
    "fe534d4240000100000000000100002019000000000000000200000000000000"
    "0000000000000000ee4d445200000000d84ffac2a75b61ea02c772bd99bfdc3a"
    "0900000048001d00a11b3019a0030a0100a3120410010000004f707a81452eb0b900000000";

TEST(SessionSetup, SambaRequestRoundTripsByteExact) {
  Bytes wire = from_hex(kSambaRequest1);
  ASSERT_EQ(wire.size(), 162u);
  auto req = decode_session_setup_request(wire);
  ASSERT_TRUE(req.ok()) << req.error().message();
  EXPECT_EQ(req->Flags, 0);
  EXPECT_EQ(req->SecurityMode, SMB2_NEGOTIATE_SIGNING_ENABLED);
  EXPECT_EQ(req->Capabilities, SMB2_GLOBAL_CAP_DFS);
  EXPECT_EQ(req->PreviousSessionId, 0u);
  ASSERT_EQ(req->SecurityBuffer.size(), 74u);
  EXPECT_EQ(to_hex(ByteView(req->SecurityBuffer).subspan(34, 8)), "4e544c4d53535000");  // "NTLMSSP\0"
  expect_reencodes(wire, *req, encode_session_setup_request);
}

TEST(SessionSetup, SambaResponsesRoundTripByteExact) {
  for (auto hex : {kSambaResponse1, kSambaResponse2}) {
    Bytes wire = from_hex(hex);
    auto rsp = decode_session_setup_response(wire);
    ASSERT_TRUE(rsp.ok()) << rsp.error().message();
    EXPECT_EQ(rsp->SessionFlags, 0);
    expect_reencodes(wire, *rsp, encode_session_setup_response);
  }
  auto r1 = decode_session_setup_response(from_hex(kSambaResponse1));
  EXPECT_EQ(r1->SecurityBuffer.size(), 132u);
  auto r2 = decode_session_setup_response(from_hex(kSambaResponse2));
  EXPECT_EQ(r2->SecurityBuffer.size(), 29u);
}

TEST(SessionSetup, HandBuiltBindingRequestByteExact) {
  SessionSetupRequest req;
  req.Flags = SMB2_SESSION_FLAG_BINDING;
  req.SecurityMode = SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED;
  req.Capabilities = SMB2_GLOBAL_CAP_DFS;
  req.Channel = 0;
  req.PreviousSessionId = 0x1122334455667788ull;
  req.SecurityBuffer = from_hex("a0a1a2");
  Bytes want = msg(SMB2_SESSION_SETUP, false,
                   "1900"              // StructureSize 25
                   "01"                // Flags SMB2_SESSION_FLAG_BINDING
                   "03"                // SecurityMode ENABLED|REQUIRED
                   "01000000"          // Capabilities DFS
                   "00000000"          // Channel
                   "5800"              // SecurityBufferOffset 88
                   "0300"              // SecurityBufferLength 3
                   "8877665544332211"  // PreviousSessionId
                   "a0a1a2");          // Buffer
  expect_encodes_as(req, want, encode_session_setup_request, decode_session_setup_request);
}

TEST(SessionSetup, HandBuiltResponseFlags) {
  SessionSetupResponse rsp;
  rsp.SessionFlags = SMB2_SESSION_FLAG_ENCRYPT_DATA;
  Bytes want = msg(SMB2_SESSION_SETUP, true,
                   "0900"   // StructureSize 9
                   "0400"   // SessionFlags ENCRYPT_DATA
                   "4800"   // SecurityBufferOffset 72
                   "0000"   // SecurityBufferLength 0
                   "00");   // the Buffer byte StructureSize 9 counts
  expect_encodes_as(rsp, want, encode_session_setup_response, decode_session_setup_response);
  // Guest / null flags are plain bits.
  auto g =
      decode_session_setup_response(msg(SMB2_SESSION_SETUP, true, "0900 0300 0000 0000"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->SessionFlags, SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL);
}

TEST(SessionSetup, MalformedRequests) {
  Bytes good = from_hex(kSambaRequest1);
  expect_truncations_fail(good, decode_session_setup_request);
  EXPECT_FALSE(decode_session_setup_request(patched(good, 64, "1800")).ok());  // StructureSize
  EXPECT_FALSE(decode_session_setup_request(patched(good, 76, "5700")).ok());  // into fixed part
  EXPECT_FALSE(decode_session_setup_request(patched(good, 76, "5900")).ok());  // one past
  EXPECT_FALSE(decode_session_setup_request(patched(good, 78, "4b00")).ok());  // length past
  EXPECT_FALSE(decode_session_setup_request(patched(good, 76, "ffff")).ok());
}

TEST(SessionSetup, MalformedResponses) {
  Bytes good = from_hex(kSambaResponse1);
  expect_truncations_fail(good, decode_session_setup_response);
  auto bad = decode_session_setup_response(patched(good, 64, "0800"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_FALSE(decode_session_setup_response(patched(good, 68, "4000")).ok());  // offset 64
  EXPECT_FALSE(decode_session_setup_response(patched(good, 68, "0000")).ok());  // offset 0
  EXPECT_FALSE(decode_session_setup_response(patched(good, 70, "8500")).ok());  // length past
  // An empty buffer with any offset is fine; a body of exactly 8 bytes too.
  auto e =
      decode_session_setup_response(msg(SMB2_SESSION_SETUP, true, "0900 0000 0000 0000"));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->SecurityBuffer.empty());
}

}  // namespace
}  // namespace smbkit::proto
