#include "proto/tree_connect.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Real smbclient -> Samba 4.17 exchanges captured on loopback.
constexpr std::string_view kSambaIpcRequest =
    "fe534d4240000100000000000300010018000000000000000300000000000000"
    "0000000000000000ee4d4452000000001e5ce222e259355a74822062ca86ac93"
    "0900"       // StructureSize 9
    "0000"       // Flags
    "4800"       // PathOffset 72
    "2000"       // PathLength 32
    "5c005c003100320037002e0030002e0030002e0031005c004900500043002400";  // \\127.0.0.1\IPC$
constexpr std::string_view kSambaIpcResponse =
    "fe534d4240000100000000000300010019000000000000000300000000000000"
    "0000000024b4c09fee4d44520000000083833c96fe527175b76e11096d89e754"
    "1000"       // StructureSize 16
    "02"         // ShareType PIPE
    "00"         // Reserved
    "00000000"   // ShareFlags (manual caching)
    "00000000"   // Capabilities
    "a9001f00";  // MaximalAccess
constexpr std::string_view kSambaShareRequest =
    "fe534d4240000100000000000300010018000000000000000600000000000000"
    "0000000000000000ee4d44520000000075f07e100e3d5a4e78e75809e4f55e20"
    "09000000480022005c005c003100320037002e0030002e0030002e0031005c00"
    "73006800610072006500";
constexpr std::string_view kSambaShareResponse =
    "fe534d4240000100000000000300010019000000000000000600000000000000"
    "000000000ff310faee4d445200000000104bf4dcf8ecaa1d1a3b28f4d24dd0ec"
    "100001000000000000000000ff011f00";

TEST(TreeConnect, SambaExchangesRoundTripByteExact) {
  Bytes wire = from_hex(kSambaIpcRequest);
  auto req = decode_tree_connect_request(wire);
  ASSERT_TRUE(req.ok()) << req.error().message();
  EXPECT_EQ(req->Path, "\\\\127.0.0.1\\IPC$");
  EXPECT_EQ(req->Flags, 0);
  expect_reencodes(wire, *req, encode_tree_connect_request);

  wire = from_hex(kSambaShareRequest);
  req = decode_tree_connect_request(wire);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->Path, "\\\\127.0.0.1\\share");

  wire = from_hex(kSambaIpcResponse);
  auto rsp = decode_tree_connect_response(wire);
  ASSERT_TRUE(rsp.ok()) << rsp.error().message();
  EXPECT_EQ(rsp->ShareType, SMB2_SHARE_TYPE_PIPE);
  EXPECT_EQ(rsp->ShareFlags & SMB2_SHAREFLAG_CACHING_MASK, SMB2_SHAREFLAG_MANUAL_CACHING);
  EXPECT_EQ(rsp->MaximalAccess, 0x001f00a9u);
  expect_reencodes(wire, *rsp, encode_tree_connect_response);

  rsp = decode_tree_connect_response(from_hex(kSambaShareResponse));
  ASSERT_TRUE(rsp.ok());
  EXPECT_EQ(rsp->ShareType, SMB2_SHARE_TYPE_DISK);
  EXPECT_EQ(rsp->MaximalAccess, 0x001f01ffu);
}

TEST(TreeConnect, HandBuiltRequestByteExact) {
  TreeConnectRequest req;
  req.Flags = SMB2_TREE_CONNECT_FLAG_CLUSTER_RECONNECT;
  req.Path = "\\\\h\\s";
  Bytes want = msg(SMB2_TREE_CONNECT, false,
                   "0900"                  // StructureSize 9
                   "0100"                  // Flags CLUSTER_RECONNECT
                   "4800"                  // PathOffset 72
                   "0a00"                  // PathLength 10
                   "5c005c0068005c007300"  // "\\h\s" UTF-16LE
  );
  expect_encodes_as(req, want, encode_tree_connect_request, decode_tree_connect_request);
}

TEST(TreeConnect, HandBuiltResponseByteExact) {
  TreeConnectResponse rsp;
  rsp.ShareType = SMB2_SHARE_TYPE_DISK;
  rsp.ShareFlags = SMB2_SHAREFLAG_ENCRYPT_DATA | SMB2_SHAREFLAG_NO_CACHING | SMB2_SHAREFLAG_DFS;
  rsp.Capabilities = SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY;
  rsp.MaximalAccess = 0x001f01ff;
  Bytes want = msg(SMB2_TREE_CONNECT, true,
                   "1000"      // StructureSize 16
                   "01"        // ShareType DISK
                   "00"        // Reserved
                   "31800000"  // ShareFlags ENCRYPT_DATA|NO_CACHING|DFS
                   "10000000"  // Capabilities CONTINUOUS_AVAILABILITY
                   "ff011f00"  // MaximalAccess
  );
  expect_encodes_as(rsp, want, encode_tree_connect_response, decode_tree_connect_response);
  EXPECT_EQ(rsp.ShareFlags & SMB2_SHAREFLAG_CACHING_MASK, SMB2_SHAREFLAG_NO_CACHING);
  EXPECT_TRUE(rsp.ShareFlags & SMB2_SHAREFLAG_ENCRYPT_DATA);
}

TEST(TreeConnect, ExtensionPresent) {
  // Encoding tree connect contexts is not supported and says so.
  TreeConnectRequest req;
  req.Flags = SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT;
  req.Path = "\\\\h\\s";
  Bytes out = header_for(SMB2_TREE_CONNECT, false);
  ByteWriter w(out);
  auto e = encode_tree_connect_request(req, w);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().status, STATUS_NOT_SUPPORTED);

  // A request carrying the 2.2.9.1 extension still yields its path.
  Bytes ext = msg(SMB2_TREE_CONNECT, false,
                  "0900"                      // StructureSize 9
                  "0400"                      // Flags EXTENSION_PRESENT
                  "5800"                      // PathOffset 88 (after the extension)
                  "0a00"                      // PathLength 10
                  "00000000"                  // TreeConnectContextOffset
                  "0000"                      // TreeConnectContextCount
                  "00000000000000000000"      // Reserved
                  "5c005c0068005c007300");    // PathName
  auto r = decode_tree_connect_request(ext);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->Path, "\\\\h\\s");
  // ...and a path pointing into the extension is refused.
  EXPECT_FALSE(decode_tree_connect_request(patched(ext, 68, "4800")).ok());
  // An extension cut short is refused.
  EXPECT_FALSE(
      decode_tree_connect_request(msg(SMB2_TREE_CONNECT, false, "0900 0400 4800 0000 0000")).ok());
}

TEST(TreeConnect, MalformedRequests) {
  Bytes good = from_hex(kSambaIpcRequest);
  expect_truncations_fail(good, decode_tree_connect_request);
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 64, "0800")).ok());  // StructureSize
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 68, "4600")).ok());  // into fixed part
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 68, "4a00")).ok());  // past the end
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 70, "2100")).ok());  // odd length
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 70, "2200")).ok());  // past the end
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 70, "ffff")).ok());
  EXPECT_FALSE(decode_tree_connect_request(patched(good, 102, "00d8")).ok());  // lone surrogate
}

TEST(TreeConnect, MalformedResponses) {
  Bytes good = from_hex(kSambaShareResponse);
  expect_truncations_fail(good, decode_tree_connect_response);
  auto r = decode_tree_connect_response(patched(good, 64, "0900"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
}

}  // namespace
}  // namespace smbkit::proto
