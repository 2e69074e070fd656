#include "proto/ioctl.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Real smbclient (max protocol SMB3_00) -> Samba 4.17, captured on loopback.
constexpr std::string_view kSambaValidateRequest =
    "fe534d4240000100000000000b00010008000000000000000400000000000000"
    "00000000b10004c8a7d2046e00000000edb6af50b3ccb701ab3236f961d95646"
    "3900"                              // StructureSize 57
    "0000"                              // Reserved
    "04021400"                          // CtlCode FSCTL_VALIDATE_NEGOTIATE_INFO
    "ffffffffffffffffffffffffffffffff"  // FileId (none)
    "78000000" "1e000000"               // InputOffset 120, InputCount 30
    "00000000"                          // MaxInputResponse
    "78000000" "00000000"               // OutputOffset 120, OutputCount 0
    "18000000"                          // MaxOutputResponse 24
    "01000000"                          // Flags SMB2_0_IOCTL_IS_FSCTL
    "00000000"                          // Reserved2
    "7f000000"                          // Input: Capabilities
    "e4ac28b9382aa1468bf4f584f7f3b4cc"  //   Guid
    "0100"                              //   SecurityMode
    "0300"                              //   DialectCount 3
    "0202" "1002" "0003";               //   Dialects
constexpr std::string_view kSambaValidateResponse =
    "fe534d4240000100000000000b00010009000000000000000400000000000000"
    "00000000b10004c8a7d2046e000000002e63a3255b1c0c5773828517a872bb9d"
    "3100"                              // StructureSize 49
    "0000"                              // Reserved
    "04021400"                          // CtlCode
    "ffffffffffffffffffffffffffffffff"  // FileId
    "70000000" "00000000"               // InputOffset 112, InputCount 0
    "70000000" "18000000"               // OutputOffset 112, OutputCount 24
    "00000000"                          // Flags
    "00000000"                          // Reserved2
    "4f000000"                          // Output: Capabilities
    "766d0000000000000000000000000000"  //   Guid
    "0100"                              //   SecurityMode
    "0003";                             //   Dialect 3.0
// FSCTL_DFS_GET_REFERRALS on IPC$ (REQ_GET_DFS_REFERRAL input).
constexpr std::string_view kSambaDfsRequest =
    "fe534d4240000100000000000b00010010000000000000000400000000000000"
    "0000000024b4c09fee4d44520000000000000000000000000000000000000000"
    "3900000094010600ffffffffffffffffffffffffffffffff7800000024000000"
    "000000007800000000000000ffff0000010000000000000003005c0031003200"
    "37002e0030002e0030002e0031005c00730068006100720065000000";

TEST(Ioctl, SambaValidateNegotiateRoundTripsByteExact) {
  Bytes wire = from_hex(kSambaValidateRequest);
  auto req = decode_ioctl_request(wire);
  ASSERT_TRUE(req.ok()) << req.error().message();
  EXPECT_EQ(req->CtlCode, FSCTL_VALIDATE_NEGOTIATE_INFO);
  EXPECT_EQ(req->FileId, kNoFileId);
  EXPECT_EQ(req->Flags, SMB2_0_IOCTL_IS_FSCTL);
  EXPECT_EQ(req->MaxOutputResponse, 24u);
  EXPECT_TRUE(req->Output.empty());
  auto vin = decode_validate_negotiate_info_request(req->Input);
  ASSERT_TRUE(vin.ok());
  EXPECT_EQ(vin->Capabilities, 0x7fu);
  EXPECT_EQ(vin->SecurityMode, SMB2_NEGOTIATE_SIGNING_ENABLED);
  EXPECT_EQ(vin->Dialects, (std::vector<uint16_t>{0x0202, 0x0210, 0x0300}));
  auto vin_bytes = encode_validate_negotiate_info_request(*vin);
  ASSERT_TRUE(vin_bytes.ok());
  EXPECT_EQ(*vin_bytes, req->Input);
  expect_reencodes(wire, *req, encode_ioctl_request);

  wire = from_hex(kSambaValidateResponse);
  auto rsp = decode_ioctl_response(wire);
  ASSERT_TRUE(rsp.ok()) << rsp.error().message();
  EXPECT_EQ(rsp->CtlCode, FSCTL_VALIDATE_NEGOTIATE_INFO);
  EXPECT_TRUE(rsp->Input.empty());
  auto vout = decode_validate_negotiate_info_response(rsp->Output);
  ASSERT_TRUE(vout.ok());
  EXPECT_EQ(vout->Capabilities, 0x4fu);
  EXPECT_EQ(vout->SecurityMode, SMB2_NEGOTIATE_SIGNING_ENABLED);
  EXPECT_EQ(vout->Dialect, SMB2_DIALECT_0300);
  auto vout_bytes = encode_validate_negotiate_info_response(*vout);
  ASSERT_TRUE(vout_bytes.ok());
  EXPECT_EQ(*vout_bytes, rsp->Output);
  expect_reencodes(wire, *rsp, encode_ioctl_response);
}

TEST(Ioctl, SambaDfsReferralRequestByteExact) {
  Bytes wire = from_hex(kSambaDfsRequest);
  auto req = decode_ioctl_request(wire);
  ASSERT_TRUE(req.ok()) << req.error().message();
  EXPECT_EQ(req->CtlCode, FSCTL_DFS_GET_REFERRALS);
  EXPECT_EQ(req->Input.size(), 36u);
  EXPECT_EQ(req->MaxOutputResponse, 0xffffu);
  expect_reencodes(wire, *req, encode_ioctl_request);
}

TEST(Ioctl, HandBuiltRequestWithInputAndOutput) {
  IoctlRequest req;
  req.CtlCode = FSCTL_PIPE_TRANSCEIVE;
  req.FileId = FileId{0x11, 0x22};
  req.Input = from_hex("0102030405");
  req.Output = from_hex("aabb");
  req.MaxInputResponse = 0;
  req.MaxOutputResponse = 0x1000;
  req.Flags = SMB2_0_IOCTL_IS_FSCTL;
  Bytes want = msg(SMB2_IOCTL, false,
                   "3900"                              // StructureSize 57
                   "0000"                              // Reserved
                   "17c01100"                          // CtlCode FSCTL_PIPE_TRANSCEIVE
                   "1100000000000000"                  // FileId.Persistent
                   "2200000000000000"                  // FileId.Volatile
                   "78000000" "05000000"               // InputOffset 120, InputCount 5
                   "00000000"                          // MaxInputResponse
                   "80000000" "02000000"               // OutputOffset 128, OutputCount 2
                   "00100000"                          // MaxOutputResponse 4096
                   "01000000"                          // Flags IS_FSCTL
                   "00000000"                          // Reserved2
                   "0102030405"                        // @120 Input
                   "000000"                            // pad to 128
                   "aabb");                            // @128 Output
  expect_encodes_as(req, want, encode_ioctl_request, decode_ioctl_request);
}

TEST(Ioctl, HandBuiltEmptyRequestAndResponse) {
  IoctlRequest req;
  req.CtlCode = FSCTL_QUERY_NETWORK_INTERFACE_INFO;
  req.FileId = kNoFileId;
  req.MaxOutputResponse = 0x10000;
  req.Flags = SMB2_0_IOCTL_IS_FSCTL;
  Bytes out = encoded(req, encode_ioctl_request, header_for(SMB2_IOCTL, false));
  EXPECT_EQ(out.size(), 64u + 57);  // the one Buffer byte StructureSize counts
  auto back = decode_ioctl_request(out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, req);

  IoctlResponse rsp;
  rsp.CtlCode = FSCTL_SRV_REQUEST_RESUME_KEY;
  rsp.FileId = FileId{1, 2};
  rsp.Input = from_hex("ee");
  rsp.Output = from_hex("0011223344556677");
  Bytes want = msg(SMB2_IOCTL, true,
                   "3100"                 // StructureSize 49
                   "0000"                 // Reserved
                   "78001400"             // CtlCode FSCTL_SRV_REQUEST_RESUME_KEY
                   "0100000000000000"     // FileId.Persistent
                   "0200000000000000"     // FileId.Volatile
                   "70000000" "01000000"  // InputOffset 112, InputCount 1
                   "78000000" "08000000"  // OutputOffset 120, OutputCount 8
                   "00000000"             // Flags
                   "00000000"             // Reserved2
                   "ee"                   // @112 Input
                   "00000000000000"       // pad to 120
                   "0011223344556677");   // @120 Output
  expect_encodes_as(rsp, want, encode_ioctl_response, decode_ioctl_response);
}

TEST(Ioctl, ValidateNegotiateInfoByteExact) {
  ValidateNegotiateInfoRequest v;
  v.Capabilities = SMB2_GLOBAL_CAP_DFS;
  v.Guid[0] = std::byte{0xab};
  v.SecurityMode = SMB2_NEGOTIATE_SIGNING_REQUIRED;
  v.Dialects = {SMB2_DIALECT_0300, SMB2_DIALECT_0302};
  auto b = encode_validate_negotiate_info_request(v);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(to_hex(*b),
            "01000000"                          // Capabilities
            "ab000000000000000000000000000000"  // Guid
            "0200"                              // SecurityMode
            "0200"                              // DialectCount
            "0003" "0203");                     // Dialects
  EXPECT_EQ(*decode_validate_negotiate_info_request(*b), v);
  // Malformed: truncated anywhere, or a DialectCount past the end.
  expect_truncations_fail(*b, decode_validate_negotiate_info_request);
  EXPECT_FALSE(decode_validate_negotiate_info_request(patched(*b, 22, "0300")).ok());

  ValidateNegotiateInfoResponse o{SMB2_GLOBAL_CAP_LEASING, {}, 1, SMB2_DIALECT_0302};
  auto ob = encode_validate_negotiate_info_response(o);
  ASSERT_TRUE(ob.ok());
  EXPECT_EQ(ob->size(), 24u);
  EXPECT_EQ(*decode_validate_negotiate_info_response(*ob), o);
  expect_truncations_fail(*ob, decode_validate_negotiate_info_response);
}

TEST(Ioctl, MalformedRequests) {
  Bytes good = from_hex(kSambaValidateRequest);
  expect_truncations_fail(good, decode_ioctl_request);
  EXPECT_FALSE(decode_ioctl_request(patched(good, 64, "3800")).ok());      // StructureSize
  EXPECT_FALSE(decode_ioctl_request(patched(good, 88, "77000000")).ok());  // InputOffset < 120
  EXPECT_FALSE(decode_ioctl_request(patched(good, 88, "79000000")).ok());  // past the end
  EXPECT_FALSE(decode_ioctl_request(patched(good, 88, "ffffffff")).ok());
  EXPECT_FALSE(decode_ioctl_request(patched(good, 92, "1f000000")).ok());  // InputCount
  EXPECT_FALSE(decode_ioctl_request(patched(good, 92, "ffffffff")).ok());
  EXPECT_FALSE(decode_ioctl_request(patched(good, 104, "1f000000")).ok());  // OutputCount past end
  // OutputOffset is not looked at while OutputCount is 0.
  EXPECT_TRUE(decode_ioctl_request(patched(good, 100, "ffffffff")).ok());
}

TEST(Ioctl, MalformedResponses) {
  Bytes good = from_hex(kSambaValidateResponse);
  expect_truncations_fail(good, decode_ioctl_response);
  auto r = decode_ioctl_response(patched(good, 64, "0900"));  // an ERROR body
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_FALSE(decode_ioctl_response(patched(good, 96, "6f000000")).ok());  // OutputOffset < 112
  EXPECT_FALSE(decode_ioctl_response(patched(good, 96, "71000000")).ok());  // past the end
  EXPECT_FALSE(decode_ioctl_response(patched(good, 100, "19000000")).ok());  // OutputCount
  EXPECT_FALSE(decode_ioctl_response(patched(good, 100, "ffffffff")).ok());
  EXPECT_FALSE(decode_ioctl_response(patched(good, 92, "19000000")).ok());  // InputCount past end
  EXPECT_TRUE(decode_ioctl_response(patched(good, 88, "00000000")).ok());   // empty: offset unused
}

// MS-SMB2 2.2.32.5: two entries, IPv4 then IPv6, 152 bytes each, chained
// by Next; the layout checked at the fields' offsets.
TEST(Ioctl, NetworkInterfaceInfoRoundTrip) {
  NetworkInterfaceInfo v4;
  v4.IfIndex = 2;
  v4.Capability = RSS_CAPABLE;
  v4.LinkSpeed = 1000000000;
  v4.Address = {std::byte{127}, std::byte{0}, std::byte{0}, std::byte{1}};
  NetworkInterfaceInfo v6;
  v6.IfIndex = 3;
  v6.LinkSpeed = 10000000000;
  v6.Address.assign(16, std::byte{0});
  v6.Address[15] = std::byte{1};
  v6.ScopeId = 5;
  auto b = encode_network_interface_info({v4, v6});
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->size(), 304u);
  EXPECT_EQ((*b)[0], std::byte{152});                // Next
  EXPECT_EQ((*b)[152], std::byte{0});                // the last: Next 0
  EXPECT_EQ((*b)[24], std::byte{0x02});              // AF_INET (InterNetwork)
  EXPECT_EQ((*b)[28], std::byte{127});               // IPv4Address after Port
  EXPECT_EQ((*b)[152 + 24], std::byte{0x17});        // InterNetworkV6
  EXPECT_EQ((*b)[152 + 24 + 8 + 15], std::byte{1});  // IPv6Address after Port, FlowInfo
  auto back = decode_network_interface_info(*b);
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0], v4);
  EXPECT_EQ((*back)[1], v6);
}

TEST(Ioctl, NetworkInterfaceInfoMalformed) {
  NetworkInterfaceInfo n;
  n.Address.assign(5, std::byte{1});
  EXPECT_FALSE(encode_network_interface_info({n}).ok());  // neither IPv4 nor IPv6
  n.Address.resize(4);
  auto b = encode_network_interface_info({n, n});
  ASSERT_TRUE(b.ok());
  expect_truncations_fail(*b, decode_network_interface_info);
  Bytes loop = *b;
  loop[0] = std::byte{8};  // Next into its own entry
  EXPECT_FALSE(decode_network_interface_info(loop).ok());
  Bytes fam = *b;
  fam[24] = std::byte{0x99};
  EXPECT_FALSE(decode_network_interface_info(fam).ok());
}

}  // namespace
}  // namespace smbkit::proto
