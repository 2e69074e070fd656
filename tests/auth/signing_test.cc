// Signing known-answer tests.
//  AES-CMAC: signed SESSION_SETUP messages published by Microsoft:
//   [ANATOMY] "SMB 2 and SMB 3 security in Windows 10: the anatomy of signing
//             and cryptographic keys", Appendix, SMB 3.1.1 multichannel.
//   [ENC311]  "SMB 3.1.1 Encryption in Windows 10", Appendix A.1 / A.2.
//  HMAC-SHA256 and AES-GMAC: no published SMB2 signing vector was found. The
//  expected values were computed once, independently of this code, with
//  Python (hmac/hashlib and the `cryptography` package's AESGCM with empty
//  plaintext), building the GMAC nonce by hand from MS-SMB2 3.1.4.1:
//    hmac.new(key, msg_with_zero_sig, hashlib.sha256).digest()[:16]
//    AESGCM(key).encrypt(struct.pack("<QI", MessageId, bits), b"", msg)
#include "auth/signing.h"

#include <gtest/gtest.h>

#include "auth_test_util.h"
#include "proto/constants.h"
#include "proto/header.h"

namespace smbkit::auth {
namespace {

using namespace smbkit::proto;

// [ANATOMY] master session, final SESSION_SETUP response (MessageId 3,
// flags SERVER_TO_REDIR|SIGNED), signed with SigningKey 73FE7A9A...
const char kAnatomyFinalResponse[] =
    "FE534D4240000100000000000100800009000000000000000300000000000000FFFE000000000000"
    "1900000000100000EBE146DA120BA25FC3376A49DFE31BC10900000048001D00A11B3019A0030A01"
    "00A3120410010000003B453CDC3524164200000000";
const char kAnatomySigningKey[] = "73FE7A9A77BEF0BDE49C650D8CCB5F76";

// [ANATOMY] second channel: first SESSION_SETUP (binding) request, signed by
// the client with the master Session.SigningKey (MS-SMB2 3.2.4.2.3).
const char kBindingRequest[] =
    "FE534D4240000100000000000100800008000000000000000200000000000000FFFE000000000000"
    "190000000010000068BD0C58F613CE1334B1EB51C68D39EA19000101010000000000000058004A00"
    "0000000000000000604806062B0601050502A03E303CA00E300C060A2B06010401823702020AA22A"
    "04284E544C4D5353500001000000978208E200000000000000000000000000000000060380250000"
    "000F";
// ... its STATUS_MORE_PROCESSING_REQUIRED response, signed by the server with
// Session.SigningKey (MS-SMB2 3.3.4.1.1).
const char kBindingResponse[] =
    "FE534D4240000100160000C00100010009000000000000000200000000000000FFFE000000000000"
    "1900000000100000014A71CAE724995E612430E2BE87578C090000004800B300A181B03081ADA003"
    "0A0101A10C060A2B06010401823702020AA281970481944E544C4D53535000020000000C000C0038"
    "00000015828AE23823DA68E32D2FE1000000000000000050005000440000000A0092270000000F53"
    "005500540033003100310002000C0053005500540033003100310001000C00530055005400330031"
    "00310004000C0053005500540033003100310003000C005300550054003300310031000700080041"
    "3B42AECBAED00100000000";
// ... and the final response, signed with the new Channel.SigningKey.
const char kBindingFinalResponse[] =
    "FE534D4240000100000000000100800009000000000000000300000000000000FFFE000000000000"
    "19000000001000008D604217FFBACF40635BF9D8729921500900000048001D00A11B3019A0030A01"
    "00A312041001000000CFB046FC5D368E2200000000";
const char kChannelSigningKey[] = "C962BCA1A9DD1697B030644199705431";

// [ENC311] A.1 and A.2 final SESSION_SETUP responses.
const char kGcmBlogFinalResponse[] =
    "FE534D4240000100000000000100800009000000000000000200000000000000FFFE000000000000"
    "25000000001000006B85A4519A0F3EEA35BA946DD3AFE6B80900000048001D00A11B3019A0030A01"
    "00A3120410010000003932A87523AB660100000000";
const char kCcmBlogFinalResponse[] =
    "FE534D4240000100000000000100800009000000000000000200000000000000FFFE000000000000"
    "21000000001000003676196AEE8CA17E5D50A53642EF2BE40900000048001D00A11B3019A0030A01"
    "00A3120410010000000F57444342A2717E00000000";

std::string sig_hex(ByteView msg) { return to_hex(msg.subspan(kSignatureOffset, 16)); }

Bytes zero_sig(Bytes m) {
  std::fill(m.begin() + kSignatureOffset, m.begin() + kSignatureOffset + 16, std::byte{0});
  return m;
}

// Signs a copy (signature zeroed) and checks it reproduces the published bytes;
// verifies the published message.
void check_published(SignAlg alg, const char* key_hex, const char* msg_hex) {
  SCOPED_TRACE(msg_hex);
  Bytes key = from_hex(key_hex);
  Bytes msg = from_hex(msg_hex);
  EXPECT_TRUE(verify_message(alg, key, msg).ok());
  Bytes copy = zero_sig(msg);
  ASSERT_TRUE(sign_message(alg, key, copy).ok());
  EXPECT_EQ(to_hex(copy), to_hex(msg));
}

TEST(Signing, AesCmacPublishedVectors) {
  check_published(SignAlg::aes_cmac, kAnatomySigningKey, kAnatomyFinalResponse);
  check_published(SignAlg::aes_cmac, kAnatomySigningKey, kBindingRequest);
  check_published(SignAlg::aes_cmac, kAnatomySigningKey, kBindingResponse);
  check_published(SignAlg::aes_cmac, kChannelSigningKey, kBindingFinalResponse);
  check_published(SignAlg::aes_cmac, "8765949DFEAEE105CE9118B45BE988F0", kGcmBlogFinalResponse);
  check_published(SignAlg::aes_cmac, "3DCC82C5795AE27F383242761078C59B", kCcmBlogFinalResponse);
}

TEST(Signing, HmacSha256KnownAnswer) {
  // Independent Python value (see file comment), key = the [ANATOMY] 3.1.1
  // session key, message = kAnatomyFinalResponse.
  Bytes msg = zero_sig(from_hex(kAnatomyFinalResponse));
  Bytes key = from_hex("270E1BA896585EEB7AF3472D3B4C75A7");
  ASSERT_TRUE(sign_message(SignAlg::hmac_sha256, key, msg).ok());
  EXPECT_EQ(sig_hex(msg), "69f4b33f052c75b5f93906a96746a04e");
  EXPECT_TRUE(verify_message(SignAlg::hmac_sha256, key, msg).ok());
}

TEST(Signing, AesGmacKnownAnswer) {
  // Server-to-client message: nonce = 03 00 00 00 00 00 00 00 | 01 00 00 00.
  Bytes msg = zero_sig(from_hex(kAnatomyFinalResponse));
  Bytes key = from_hex(kAnatomySigningKey);
  ASSERT_TRUE(sign_message(SignAlg::aes_gmac, key, msg).ok());
  EXPECT_EQ(sig_hex(msg), "75d05bac99ff7fcc52a44c354381d559");
  EXPECT_TRUE(verify_message(SignAlg::aes_gmac, key, msg).ok());
}

TEST(Signing, AesGmacCancelBit) {
  // Async CANCEL request, MessageId 7: nonce = 07 00.. | 02 00 00 00.
  Bytes msg = from_hex(
      "fe534d4240000000000000000c0000000a000000000000000700000000000000"
      "210000000000000019000000001000000000000000000000000000000000000004000000");
  Bytes key = from_hex(kAnatomySigningKey);
  ASSERT_TRUE(sign_message(SignAlg::aes_gmac, key, msg).ok());
  EXPECT_EQ(sig_hex(msg), "f8820e0c01f17ad9bf913f110c3cc7e4");
  // The same bytes as a non-CANCEL command sign differently (nonce bit 1).
  Bytes echo = msg;
  store_le16(echo.data() + 12, SMB2_ECHO);
  Bytes echo2 = echo;
  ASSERT_TRUE(sign_message(SignAlg::aes_gmac, key, echo2).ok());
  store_le16(echo2.data() + 12, SMB2_CANCEL);
  EXPECT_NE(sig_hex(echo2), sig_hex(msg));
}

TEST(Signing, SetsSignedFlag) {
  Header h;
  h.Command = SMB2_ECHO;
  h.MessageId = 9;
  h.SessionId = 0x1234;
  Bytes msg;
  ByteWriter w(msg);
  encode_header(h, w);
  w.u16(4);
  w.u16(0);
  ASSERT_TRUE(sign_message(SignAlg::aes_cmac, Bytes(16, std::byte{7}), msg).ok());
  auto d = decode_header(msg);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->Flags & SMB2_FLAGS_SIGNED);
  // Signing again (flag already set, old signature present) is idempotent.
  Bytes again = msg;
  ASSERT_TRUE(sign_message(SignAlg::aes_cmac, Bytes(16, std::byte{7}), again).ok());
  EXPECT_EQ(again, msg);
}

TEST(Signing, PiecesMatchContiguous) {
  Bytes whole = zero_sig(from_hex(kBindingRequest));
  for (SignAlg alg : {SignAlg::hmac_sha256, SignAlg::aes_cmac, SignAlg::aes_gmac}) {
    Bytes key = from_hex(kAnatomySigningKey);
    Bytes a = whole;
    ASSERT_TRUE(sign_message(alg, key, a).ok());
    // Header in its own buffer, payload split in two pieces.
    Bytes header(whole.begin(), whole.begin() + 64);
    ByteView body = ByteView(whole).subspan(64);
    ByteView payload[] = {body.first(10), body.subspan(10)};
    ASSERT_TRUE(sign_message(alg, key, header, payload).ok());
    EXPECT_EQ(to_hex(header), to_hex(ByteView(a).first(64)));
    ByteView pieces[] = {header, payload[0], payload[1]};
    EXPECT_TRUE(verify_message(alg, key, pieces).ok());
    // A first piece larger than the header also works.
    ByteView split[] = {ByteView(a).first(100), ByteView(a).subspan(100)};
    EXPECT_TRUE(verify_message(alg, key, split).ok());
  }
}

TEST(Signing, TamperDetected) {
  for (SignAlg alg : {SignAlg::hmac_sha256, SignAlg::aes_cmac, SignAlg::aes_gmac}) {
    Bytes key = from_hex(kAnatomySigningKey);
    Bytes msg = zero_sig(from_hex(kBindingResponse));
    ASSERT_TRUE(sign_message(alg, key, msg).ok());
    ASSERT_TRUE(verify_message(alg, key, msg).ok());
    for (size_t at : {size_t{0}, size_t{16}, size_t{24}, size_t{47}, size_t{48}, size_t{63},
                      size_t{64}, msg.size() - 1}) {
      Bytes bad = msg;
      bad[at] ^= std::byte{0x01};
      auto r = verify_message(alg, key, bad);
      ASSERT_FALSE(r.ok()) << "offset " << at;
      EXPECT_TRUE(r.error().is(STATUS_INVALID_SIGNATURE));
    }
    Bytes other_key = key;
    other_key[0] ^= std::byte{0x80};
    EXPECT_TRUE(verify_message(alg, other_key, msg).error().is(STATUS_INVALID_SIGNATURE));
    // Appending bytes changes the signed range.
    Bytes longer = msg;
    longer.push_back(std::byte{0});
    EXPECT_TRUE(verify_message(alg, key, longer).error().is(STATUS_INVALID_SIGNATURE));
  }
}

TEST(Signing, BadInputs) {
  Bytes key16(16, std::byte{1});
  Bytes short_msg(63);
  EXPECT_TRUE(
      sign_message(SignAlg::aes_cmac, key16, short_msg).error().is(STATUS_INVALID_PARAMETER));
  EXPECT_TRUE(verify_message(SignAlg::aes_cmac, key16, short_msg)
                  .error()
                  .is(STATUS_INVALID_NETWORK_RESPONSE));
  EXPECT_TRUE(verify_message(SignAlg::aes_cmac, key16, std::span<const ByteView>{})
                  .error()
                  .is(STATUS_INVALID_NETWORK_RESPONSE));
  Bytes msg = from_hex(kAnatomyFinalResponse);
  EXPECT_TRUE(sign_message(SignAlg::aes_cmac, Bytes(32), msg).error().is(STATUS_INVALID_PARAMETER));
  EXPECT_TRUE(sign_message(SignAlg::aes_gmac, Bytes(15), msg).error().is(STATUS_INVALID_PARAMETER));
  EXPECT_TRUE(sign_message(SignAlg::hmac_sha256, {}, msg).error().is(STATUS_INVALID_PARAMETER));
  // A failed sign leaves the signature untouched.
  EXPECT_EQ(to_hex(msg), lower(kAnatomyFinalResponse));
}

TEST(Signing, AlgorithmSelection) {
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0202, AES_GMAC), SignAlg::hmac_sha256);
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0210, AES_CMAC), SignAlg::hmac_sha256);
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0300, AES_GMAC), SignAlg::aes_cmac);
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0302, HMAC_SHA256), SignAlg::aes_cmac);
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0311, AES_CMAC), SignAlg::aes_cmac);
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0311, AES_GMAC), SignAlg::aes_gmac);
  EXPECT_EQ(sign_alg_for(SMB2_DIALECT_0311, HMAC_SHA256), SignAlg::hmac_sha256);
}

}  // namespace
}  // namespace smbkit::auth
