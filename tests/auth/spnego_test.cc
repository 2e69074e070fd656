#include <gtest/gtest.h>

#include <algorithm>

#include "auth/ntlm_acceptor.h"
#include "auth/ntlm_initiator.h"
#include "auth/spnego_initiator.h"

namespace smbkit::auth {
namespace {

// Captured from Samba 4.17 smbd (standalone, "ntlm auth = ntlmv2-only") on
// 127.0.0.1: the SMB2 NEGOTIATE security buffer, then one SESSION_SETUP
// exchange of SpnegoNtlmClient (user "ntlmkit", password "Pässword1", domain
// "WORKGROUP", workstation "E2EHOST") with the fixed randomness of
// FixedRandom below. Samba answered STATUS_SUCCESS, its mechListMIC verified,
// and the SMB2 signature of its final response verified under our session key.
const char* kSambaNegotiateBlob =
    "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa32a3028a0261b246e6f745f6465"
    "66696e65645f696e5f5246433431373840706c656173655f69676e6f7265";
const char* kSambaInit =
    "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa22a04284e544c4d535350000100"
    "0000358288e200000000280000000000000028000000060100000000000f";
const char* kSambaChallenge =
    "a18181307fa0030a0101a10c060a2b06010401823702020aa26a04684e544c4d535350000200000004000400"
    "3800000035828ae2286e0038a7196c4100000000000000002c002c003c000000060100000000000f56004d00"
    "0200040056004d000100040056004d00040000000300040076006d0007000800447ca49c9480dd0100000000";
const char* kSambaAuth =
    "a18201323082012ea2820116048201124e544c4d53535000030000001800180086000000640064009e000000"
    "12001200580000000e000e006a0000000e000e00780000001000100002010000358288e2060100000000000f"
    "89c3d314f230f2a6947a5d6c5f89b44457004f0052004b00470052004f00550050006e0074006c006d006b00"
    "6900740045003200450048004f0053005400000000000000000000000000000000000000000000000000851f"
    "41ee6d447cef06558723a7784c150101000000000000447ca49c9480dd011122334455667788000000000200"
    "040056004d000100040056004d00040000000300040076006d0007000800447ca49c9480dd01060004000200"
    "000000000000000000000ca3de94b4a07ae4c5ccf73820bf9d16a31204100100000099ed87f11d0b992d0000"
    "0000";
const char* kSambaFinal =
    "a11b3019a0030a0100a3120410010000002ce8c282ce62356300000000";
const char* kNoMicInit =
    "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa22a04284e544c4d535350000100"
    "0000358288e200000000280000000000000028000000060100000000000f";
const char* kNoMicChallenge =
    "a18181307fa0030a0101a10c060a2b06010401823702020aa26a04684e544c4d535350000200000004000400"
    "3800000035828ae231d20b7c25df621200000000000000002c002c003c000000060100000000000f56004d00"
    "0200040056004d000100040056004d00040000000300040076006d00070008008a5867a89480dd0100000000";
const char* kNoMicAuth =
    "a182011e3082011aa2820116048201124e544c4d53535000030000001800180086000000640064009e000000"
    "12001200580000000e000e006a0000000e000e00780000001000100002010000358288e2060100000000000f"
    "ec48fb68ea67b9e3d1232b8c750466d257004f0052004b00470052004f00550050006e0074006c006d006b00"
    "6900740045003200450048004f00530054000000000000000000000000000000000000000000000000000302"
    "d754aca7fcc0f1c0936ccfedd4f201010000000000008a5867a89480dd011122334455667788000000000200"
    "040056004d000100040056004d00040000000300040076006d00070008008a5867a89480dd01060004000200"
    "0000000000000000000057fa209717f087cdbb1f5fdc3a2c327b";
const char* kNoMicRequest =
    "a1293027a0030a0101a10c060a2b06010401823702020aa3120410010000002ce8c282ce62356300000000";
const char* kNoMicReply =
    "a1163014a31204100100000099ed87f11d0b992d00000000";
const char* kNoMicFinal =
    "a1073005a0030a0100";

void FixedRandom(MutableByteView v) {
  for (size_t i = 0; i < v.size(); i++) v[i] = std::byte(0x11 * (i % 15 + 1));
}

NtlmCredentials samba_user() { return {"ntlmkit", "P\xc3\xa4ssword1", "WORKGROUP", "E2EHOST"}; }

SpnegoNtlmOptions fixed_options(bool send_mic = true) {
  SpnegoNtlmOptions o;
  o.random = FixedRandom;
  o.send_mech_list_mic = send_mic;
  return o;
}

std::string hex(ByteView b) { return to_hex(b); }
bool rejected(const Error& e) { return e.is(STATUS_INVALID_NETWORK_RESPONSE); }

TEST(Spnego, DecodesSambaNegotiateBlob) {
  auto t = decode_neg_token_init(from_hex(kSambaNegotiateBlob));
  ASSERT_TRUE(t.ok()) << t.error().message();
  ASSERT_EQ(t->mechTypes.size(), 1u);
  EXPECT_EQ(t->mechTypes[0], oid_ntlmssp());
  EXPECT_EQ(t->mechTypes[0].to_string(), "1.3.6.1.4.1.311.2.2.10");
  EXPECT_EQ(hex(t->mechTypesDer), "300c060a2b06010401823702020a");
  ASSERT_TRUE(t->negHints.has_value());
  EXPECT_EQ(t->negHints->hintName, "not_defined_in_RFC4178@please_ignore");
  EXPECT_FALSE(t->mechToken || t->mechListMIC || t->reqFlags);
}

// NegTokenInit2 as Windows servers send it, crafted from the MS-SPNG 2.2.1
// layout: NEGOEX, MS-KRB5, KRB5, NTLMSSP and the same negHints.
TEST(Spnego, DecodesWindowsStyleNegTokenInit2) {
  auto t = decode_neg_token_init(from_hex(
      "606a06062b0601050502a060305ea030302e060a2b06010401823702021e06092a864882f71201020206092a"
      "864886f712010202060a2b06010401823702020aa32a3028a0261b246e6f745f646566696e65645f696e5f52"
      "46433431373840706c656173655f69676e6f7265"));
  ASSERT_TRUE(t.ok()) << t.error().message();
  ASSERT_EQ(t->mechTypes.size(), 4u);
  EXPECT_EQ(t->mechTypes[0], oid_negoex());
  EXPECT_EQ(t->mechTypes[1], oid_ms_krb5());
  EXPECT_EQ(t->mechTypes[2], oid_krb5());
  EXPECT_EQ(t->mechTypes[3], oid_ntlmssp());
  SpnegoNtlmClient c({"u", "p", "", ""});
  EXPECT_TRUE(c.check_server_hint(from_hex(kSambaNegotiateBlob)).ok());
  EXPECT_TRUE(c.check_server_hint({}).ok());
  const Oid krb[] = {oid_krb5()};
  EXPECT_TRUE(c.check_server_hint(encode_neg_token_init(krb, {})).error().is(STATUS_NOT_SUPPORTED));
}

TEST(Spnego, NegTokenInitEncodeDecode) {
  NtlmClient n({"u", "p", "", ""});
  Bytes neg = n.negotiate_message();
  const Oid mechs[] = {oid_ntlmssp()};
  Bytes tok = encode_neg_token_init(mechs, neg);
  EXPECT_EQ(hex(tok), hex(from_hex(kSambaInit)));  // the token Samba accepted
  auto d = decode_neg_token_init(tok);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(hex(*d->mechToken), hex(neg));
  EXPECT_EQ(hex(d->mechTypesDer), hex(encode_mech_type_list(mechs)));
  // RFC 4178 NegTokenInit with reqFlags and mechListMIC ([3] OCTET STRING).
  Bytes full = from_hex(
      "602706062b0601050502a01d301ba00e300c060a2b06010401823702020aa1040302"
      "0780a3030401ff");
  auto f = decode_neg_token_init(full);
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(hex(*f->reqFlags), "0780");
  EXPECT_EQ(hex(*f->mechListMIC), "ff");
  EXPECT_FALSE(f->negHints);
}

TEST(Spnego, NegTokenRespDecodeEncode) {
  auto c = decode_neg_token_resp(from_hex(kSambaChallenge));
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->negState, NegState::accept_incomplete);
  EXPECT_EQ(c->supportedMech, oid_ntlmssp());
  ASSERT_TRUE(c->responseToken);
  EXPECT_TRUE(decode_challenge_message(*c->responseToken).ok());
  EXPECT_FALSE(c->mechListMIC);
  EXPECT_EQ(hex(encode_neg_token_resp(*c)), hex(from_hex(kSambaChallenge)));

  auto f = decode_neg_token_resp(from_hex(kSambaFinal));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->negState, NegState::accept_completed);
  EXPECT_EQ(hex(*f->mechListMIC), "010000002ce8c282ce62356300000000");
  EXPECT_EQ(hex(encode_neg_token_resp(*f)), hex(from_hex(kSambaFinal)));

  Bytes mine = encode_neg_token_resp(from_hex("4e544c4d"), from_hex("0102"));
  EXPECT_EQ(hex(mine), "a110300ea20604044e544c4da30404020102");
  auto m = decode_neg_token_resp(mine);
  EXPECT_FALSE(m->negState || m->supportedMech);
  EXPECT_EQ(hex(encode_neg_token_resp({}, {})), "a1023000");
}

// Replays the recorded Samba exchange: our tokens must be byte-identical to
// the ones Samba accepted, and Samba's mechListMIC must verify.
TEST(SpnegoNtlmClient, ReplaysSambaExchange) {
  SpnegoNtlmClient c(samba_user(), fixed_options());
  EXPECT_EQ(hex(c.initial_token()), hex(from_hex(kSambaInit)));
  auto auth = c.next_token(from_hex(kSambaChallenge), 0);
  ASSERT_TRUE(auth.ok()) << auth.error().message();
  EXPECT_EQ(hex(*auth), hex(from_hex(kSambaAuth)));
  EXPECT_TRUE(c.mech_list_mic_sent());
  EXPECT_TRUE(c.ntlm().mic_sent());
  EXPECT_FALSE(c.complete());
  auto fin = c.next_token(from_hex(kSambaFinal), 0);
  ASSERT_TRUE(fin.ok()) << fin.error().message();
  EXPECT_TRUE(fin->empty());
  EXPECT_TRUE(c.complete());
  EXPECT_TRUE(c.server_mech_list_mic_verified());
  EXPECT_EQ(hex(c.session_key()), "99aabbccddeeff112233445566778899");
  EXPECT_FALSE(c.next_token({}, 0).ok());  // nothing more expected
}

// Without a proactive mechListMIC, Samba answers accept-incomplete with its
// own MIC (MS-SPNG 3.2.5.1); we verify it and send ours in a third round.
TEST(SpnegoNtlmClient, ReplaysSambaMicRequest) {
  SpnegoNtlmClient c(samba_user(), fixed_options(false));
  EXPECT_EQ(hex(c.initial_token()), hex(from_hex(kNoMicInit)));
  auto auth = c.next_token(from_hex(kNoMicChallenge), 0);
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ(hex(*auth), hex(from_hex(kNoMicAuth)));
  EXPECT_FALSE(c.mech_list_mic_sent());
  auto reply = c.next_token(from_hex(kNoMicRequest), 0);
  ASSERT_TRUE(reply.ok()) << reply.error().message();
  EXPECT_EQ(hex(*reply), hex(from_hex(kNoMicReply)));
  EXPECT_TRUE(c.server_mech_list_mic_verified());
  EXPECT_FALSE(c.complete());
  ASSERT_TRUE(c.next_token(from_hex(kNoMicFinal), 0).ok());
  EXPECT_TRUE(c.complete());
}

// The recorded exchange seen from the server side: our NTLM acceptor
// verifies the AUTHENTICATE Samba accepted, derives the same session key,
// and computes the very mechListMIC Samba sent (an independent acceptor).
TEST(SpnegoNtlmAcceptor, AgreesWithSambaOnTheRecordedExchange) {
  NegTokenInit init = decode_neg_token_init(from_hex(kSambaInit)).value();
  Bytes neg = init.mechToken.value();
  Bytes chal = decode_neg_token_resp(from_hex(kSambaChallenge)).value().responseToken.value();
  NegTokenResp auth_tok = decode_neg_token_resp(from_hex(kSambaAuth)).value();
  Bytes auth = auth_tok.responseToken.value();
  Bytes client_mic = auth_tok.mechListMIC.value();
  Bytes samba_mic = decode_neg_token_resp(from_hex(kSambaFinal)).value().mechListMIC.value();
  NtHashLookup lookup = [](std::string_view user,
                           std::string_view domain) -> std::optional<NtHash> {
    if (user != "ntlmkit" || domain != "WORKGROUP") return std::nullopt;
    Bytes h = ntowf_v1("P\xc3\xa4ssword1").value();
    NtHash out;
    std::copy_n(h.begin(), out.size(), out.begin());
    return out;
  };
  auto r = ntlm_verify_authenticate(neg, chal, auth, lookup);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->outcome, NtlmOutcome::authenticated);
  EXPECT_TRUE(r->mic_verified);
  EXPECT_EQ(hex(r->session_key), "99aabbccddeeff112233445566778899");
  Bytes der = init.mechTypesDer;
  EXPECT_TRUE(
      ntlm_verify_mech_list_mic(r->keys, r->negotiated_flags, der, client_mic, NtlmRole::initiator)
          .ok());
  auto ours = ntlm_mech_list_mic(r->keys, r->negotiated_flags, der, NtlmRole::acceptor);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(hex(*ours), hex(samba_mic));
}

TEST(SpnegoNtlmClient, FinalWithoutTokenCompletes) {
  SpnegoNtlmClient c(samba_user(), fixed_options());
  c.initial_token();
  ASSERT_TRUE(c.next_token(from_hex(kSambaChallenge), 0).ok());
  ASSERT_TRUE(c.next_token({}, 0).ok());
  EXPECT_TRUE(c.complete());
}

TEST(SpnegoNtlmClient, ServerErrors) {
  auto after_auth = [] {
    auto c = std::make_unique<SpnegoNtlmClient>(samba_user(), fixed_options());
    c->initial_token();
    EXPECT_TRUE(c->next_token(from_hex(kSambaChallenge), 0).ok());
    return c;
  };
  // A tampered server mechListMIC.
  Bytes final_bad = from_hex(kSambaFinal);
  final_bad[final_bad.size() - 5] ^= std::byte{1};
  EXPECT_TRUE(rejected(after_auth()->next_token(final_bad, 0).error()));
  // reject.
  NegTokenResp rej;
  rej.negState = NegState::reject;
  EXPECT_TRUE(after_auth()->next_token(encode_neg_token_resp(rej), 0).error().is(STATUS_LOGON_FAILURE));
  // Challenge round: reject, another mechanism, no token, early completion.
  auto first = [](const NegTokenResp& r) {
    SpnegoNtlmClient c(samba_user(), fixed_options());
    c.initial_token();
    return c.next_token(encode_neg_token_resp(r), 0);
  };
  EXPECT_TRUE(first(rej).error().is(STATUS_LOGON_FAILURE));
  NegTokenResp krb = decode_neg_token_resp(from_hex(kSambaChallenge)).value();
  krb.supportedMech = oid_krb5();
  EXPECT_TRUE(first(krb).error().is(STATUS_NOT_SUPPORTED));
  NegTokenResp empty;
  empty.negState = NegState::accept_incomplete;
  EXPECT_TRUE(rejected(first(empty).error()));
  empty.negState = NegState::accept_completed;
  EXPECT_TRUE(rejected(first(empty).error()));
  // Out of order.
  SpnegoNtlmClient c(samba_user(), fixed_options());
  EXPECT_TRUE(c.next_token(from_hex(kSambaChallenge), 0).error().is(STATUS_INVALID_PARAMETER));
}

TEST(SpnegoMalformed, TruncationsAndCorruptions) {
  for (const char* h : {kSambaNegotiateBlob, kSambaInit}) {
    Bytes b = from_hex(h);
    for (size_t n = 0; n < b.size(); n++)
      EXPECT_TRUE(rejected(decode_neg_token_init(ByteView(b).first(n)).error())) << n;
    Bytes extra = b;
    extra.push_back(std::byte{0});
    EXPECT_TRUE(rejected(decode_neg_token_init(extra).error()));
  }
  for (const char* h : {kSambaChallenge, kSambaAuth, kSambaFinal}) {
    Bytes b = from_hex(h);
    for (size_t n = 0; n < b.size(); n++)
      EXPECT_TRUE(rejected(decode_neg_token_resp(ByteView(b).first(n)).error())) << n;
  }
  auto init = [](std::string_view h) { return decode_neg_token_init(from_hex(h)); };
  auto resp = [](std::string_view h) { return decode_neg_token_resp(from_hex(h)); };
  EXPECT_TRUE(rejected(init("6080 06062b0601050502 a0 80 0000 0000").error()));  // indefinite
  EXPECT_TRUE(rejected(init("6008 06062a8648 86f71201").error()));  // length past content
  EXPECT_TRUE(rejected(init("600a 0606 2a864886f712 a000").error()));  // wrong GSS mech (krb5-ish)
  EXPECT_TRUE(rejected(init("a0043002a000").error()));  // mechTypes not a SEQUENCE
  EXPECT_TRUE(rejected(init("a006 3004 a002 3000").error()));  // empty mechTypes
  EXPECT_TRUE(rejected(init("a1023000").error()));  // a NegTokenResp
  EXPECT_TRUE(rejected(resp("a1073005a0030a0107").error()));  // negState 7
  EXPECT_TRUE(rejected(resp("a1093007a0040a020001").error()));  // 2-byte negState
  EXPECT_TRUE(rejected(resp("a1083006a2040302 0000").error()));  // token as BIT STRING
  EXPECT_TRUE(rejected(resp("a10a3008a3020400a0020a00").error()));  // fields out of order
  EXPECT_TRUE(rejected(resp("a1043002a400").error()));  // unknown field [4]
  // Nesting far beyond what SPNEGO needs is refused by structure or depth.
  Bytes deep = from_hex("0400");
  for (int i = 0; i < 200; i++) deep = der::tlv(der::context_tag(0), deep);
  EXPECT_TRUE(rejected(decode_neg_token_init(deep).error()));
  EXPECT_TRUE(rejected(decode_neg_token_resp(deep).error()));
}

}  // namespace
}  // namespace smbkit::auth
