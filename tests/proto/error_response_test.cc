#include "proto/error_response.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// The header of a CREATE response that failed with `status`.
Bytes error_header(uint32_t status) {
  Header h;
  h.Command = SMB2_CREATE;
  h.Status = status;
  h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
  return header_bytes(h);
}

// That header followed by the body written as hex.
Bytes msg(uint32_t status, std::string_view body_hex) {
  return with_body(error_header(status), body_hex);
}

// Real Samba 4.17 answer to FSCTL_DFS_GET_REFERRALS on a non-DFS server
// (STATUS_NOT_FOUND 0xc0000225), captured on loopback.
constexpr std::string_view kSambaIoctlError =
    "fe534d4240000100250200c00b00010011000000000000000400000000000000"
    "0000000024b4c09fee4d44520000000000000000000000000000000000000000"
    "0900"       // StructureSize 9
    "00"         // ErrorContextCount 0
    "00"         // Reserved
    "00000000"   // ByteCount 0
    "00";        // the one ErrorData byte

// MS-SMB2 2.2.2.2.1 laid out by hand: SubstituteName "ab", PrintName "ab".
constexpr std::string_view kSymlink =
    "20000000"   // SymLinkLength 32 (all after this field)
    "53594d4c"   // SymLinkErrorTag 0x4C4D5953 ("SYML")
    "0c0000a0"   // ReparseTag IO_REPARSE_TAG_SYMLINK
    "1400"       // ReparseDataLength 20 (12 + PathBuffer)
    "0400"       // UnparsedPathLength 4
    "0000"       // SubstituteNameOffset 0
    "0400"       // SubstituteNameLength 4
    "0400"       // PrintNameOffset 4
    "0400"       // PrintNameLength 4
    "01000000"   // Flags SYMLINK_FLAG_RELATIVE
    "61006200"   // PathBuffer: "ab"
    "61006200";  //             "ab"

TEST(ErrorResponse, SambaErrorRoundTripsByteExact) {
  Bytes wire = from_hex(kSambaIoctlError);
  ASSERT_EQ(wire.size(), 73u);
  auto rsp = decode_error_response(wire);
  ASSERT_TRUE(rsp.ok()) << rsp.error().message();
  EXPECT_TRUE(rsp->ErrorData.empty());
  EXPECT_TRUE(rsp->ErrorContexts.empty());
  expect_reencodes(wire, *rsp, encode_error_response);
  // Without the pad byte (some servers) it still decodes.
  EXPECT_TRUE(decode_error_response(ByteView(wire).first(72)).ok());
}

// A real Samba 4.17 interim response (STATUS_PENDING, async, AsyncId 5) to
// a CREATE waiting on an oplock break: an ERROR body whose one ErrorData
// byte is 0x21, not 0.
constexpr std::string_view kSambaInterim =
    "fe534d42400000000301000005007f0003000000000000000500000000000000"
    "0500000000000000209651d90000000000000000000000000000000000000000"
    "090000000000000021";

TEST(ErrorResponse, SambaInterimResponse) {
  Bytes wire = from_hex(kSambaInterim);
  auto h = decode_header(wire);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->is_async());
  EXPECT_EQ(h->Status, STATUS_PENDING);
  EXPECT_EQ(h->AsyncId, 5u);
  auto rsp = decode_error_response(wire);
  ASSERT_TRUE(rsp.ok()) << rsp.error().message();
  EXPECT_TRUE(rsp->ErrorData.empty());
}

TEST(ErrorResponse, SymlinkInErrorDataByteExact) {
  SymbolicLinkErrorResponse s;
  s.UnparsedPathLength = 4;
  s.SubstituteName = "ab";
  s.PrintName = "ab";
  s.Flags = SymbolicLinkErrorResponse::SYMLINK_FLAG_RELATIVE;
  auto enc = encode_symbolic_link_error_response(s);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(to_hex(*enc), to_hex(from_hex(kSymlink)));

  ErrorResponse rsp;
  rsp.ErrorData = *enc;
  Bytes out = error_header(STATUS_STOPPED_ON_SYMLINK);
  ByteWriter w(out);
  ASSERT_TRUE(encode_error_response(rsp, w).ok());
  Bytes want = msg(STATUS_STOPPED_ON_SYMLINK,
                   std::string("0900"        // StructureSize 9
                               "00"          // ErrorContextCount 0 (SMB 2.x/3.0.x form)
                               "00"          // Reserved
                               "24000000") + // ByteCount 36
                       std::string(kSymlink));
  EXPECT_EQ(to_hex(out), to_hex(want));
  auto back = decode_error_response(out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, rsp);
  auto link = symbolic_link_error(*back);
  ASSERT_TRUE(link.ok()) << link.error().message();
  EXPECT_EQ(*link, s);
}

TEST(ErrorResponse, ContextsByteExact) {
  ErrorResponse rsp;
  rsp.ErrorContexts = {ErrorContext{SMB2_ERROR_ID_SHARE_REDIRECT, from_hex("aabbcc")},
                       ErrorContext{SMB2_ERROR_ID_DEFAULT, from_hex(kSymlink)}};
  Bytes out = error_header(STATUS_STOPPED_ON_SYMLINK);
  ByteWriter w(out);
  ASSERT_TRUE(encode_error_response(rsp, w).ok());
  Bytes want = msg(STATUS_STOPPED_ON_SYMLINK,
                   std::string("0900"        // StructureSize 9
                               "02"          // ErrorContextCount 2 (3.1.1 form)
                               "00"          // Reserved
                               "3c000000"    // ByteCount 60
                               "03000000"    // ctx 1 ErrorDataLength 3
                               "53526472"    //   ErrorId SHARE_REDIRECT
                               "aabbcc"      //   ErrorContextData
                               "0000000000"  //   pad to 8
                               "24000000"    // ctx 2 ErrorDataLength 36
                               "00000000") + //   ErrorId DEFAULT
                       std::string(kSymlink));
  EXPECT_EQ(to_hex(out), to_hex(want));
  auto back = decode_error_response(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->ErrorContexts, rsp.ErrorContexts);
  EXPECT_EQ(back->ErrorData.size(), 60u);
  auto link = symbolic_link_error(*back);
  ASSERT_TRUE(link.ok()) << link.error().message();
  EXPECT_EQ(link->SubstituteName, "ab");
  EXPECT_TRUE(link->Flags & SymbolicLinkErrorResponse::SYMLINK_FLAG_RELATIVE);

  // Contexts without a DEFAULT one: no symlink data.
  ErrorResponse only_redirect;
  only_redirect.ErrorContexts = {rsp.ErrorContexts[0]};
  EXPECT_FALSE(default_error_data(only_redirect).ok());
}

TEST(ErrorResponse, BufferTooSmall) {
  auto rsp = decode_error_response(msg(STATUS_BUFFER_TOO_SMALL,
                                       "0900"       // StructureSize 9
                                       "00" "00"    // ErrorContextCount, Reserved
                                       "04000000"   // ByteCount 4
                                       "00100000"   // required length 4096
                                       ));
  ASSERT_TRUE(rsp.ok());
  auto n = buffer_too_small_length(*rsp);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4096u);
  ErrorResponse empty;
  EXPECT_FALSE(buffer_too_small_length(empty).ok());
}

TEST(ErrorResponse, RealisticSymlinkRoundTrip) {
  SymbolicLinkErrorResponse s;
  s.SubstituteName = "\\??\\C:\\Users\\ünï\\target dir";
  s.PrintName = "C:\\Users\\ünï\\target dir";
  auto enc = encode_symbolic_link_error_response(s);
  ASSERT_TRUE(enc.ok());
  auto dec = decode_symbolic_link_error_response(*enc);
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ(*dec, s);
}

TEST(ErrorResponse, MalformedErrorResponses) {
  Bytes good = msg(STATUS_STOPPED_ON_SYMLINK, "0900 01 00 2c000000 24000000 00000000" +
                                                  std::string(kSymlink));
  ASSERT_TRUE(decode_error_response(good).ok());
  expect_truncations_fail(good, decode_error_response);
  auto r = decode_error_response(patched(good, 64, "0800"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_FALSE(decode_error_response(patched(good, 68, "2d000000")).ok());  // ByteCount past end
  EXPECT_FALSE(decode_error_response(patched(good, 68, "ffffffff")).ok());
  EXPECT_FALSE(decode_error_response(patched(good, 66, "02")).ok());  // context count overruns
  EXPECT_FALSE(decode_error_response(patched(good, 66, "ff")).ok());
  EXPECT_FALSE(decode_error_response(patched(good, 72, "25000000")).ok());  // ErrorDataLength
  EXPECT_FALSE(decode_error_response(patched(good, 72, "ffffffff")).ok());
  // A context list that fits in the message but not in ByteCount.
  EXPECT_FALSE(decode_error_response(patched(good, 68, "2b000000")).ok());
}

TEST(ErrorResponse, MalformedSymlinks) {
  const Bytes good = from_hex(kSymlink);
  ASSERT_TRUE(decode_symbolic_link_error_response(good).ok());
  expect_truncations_fail(good, decode_symbolic_link_error_response);
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 4, "00000000")).ok());  // tag
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 8, "0c000080")).ok());  // reparse tag
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 0, "21000000")).ok());  // length past
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 0, "17000000")).ok());  // < fixed
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 0, "ffffffff")).ok());
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 16, "0600")).ok());  // sub offset
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 18, "0a00")).ok());  // sub length
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 20, "ffff")).ok());  // print offset
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(good, 22, "0300")).ok());  // odd length
  // SymLinkLength bounds the names even if more bytes follow.
  Bytes longer = good;
  longer.resize(good.size() + 8);
  EXPECT_FALSE(decode_symbolic_link_error_response(patched(longer, 22, "0800")).ok());
}

}  // namespace
}  // namespace smbkit::proto
