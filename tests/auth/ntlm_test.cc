#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "auth/crypto.h"
#include "auth/ntlm_initiator.h"
#include "auth/ntlm_vectors.h"
#include "base/utf16.h"

namespace smbkit::auth {
namespace {

std::string hex(ByteView b) { return to_hex(b); }
Bytes u16(std::string_view s) { return utf8_to_utf16le(s).value(); }

// The 4.2.4.3 CHALLENGE_MESSAGE with `flag` cleared from its NegotiateFlags.
Bytes spec_challenge_without(uint32_t flag) {
  Bytes chal = from_hex(kSpecChallenge);
  store_le32(chal.data() + 20, 0xe28a8233 & ~flag);
  return chal;
}

// c's AUTHENTICATE_MESSAGE for `challenge` at time 0, with the example's
// client challenge and random session key (4.2.1).
Result<Bytes> authenticate_as_example(NtlmClient& c, ByteView challenge) {
  return c.authenticate_message(challenge, 0, from_hex(kClientChallenge),
                                from_hex(kRandomSessionKey));
}

TEST(NtlmSpec, Ntowfv2_4_2_4_1_1) {
  auto k = ntowf_v2("Password", "User", "Domain");
  ASSERT_TRUE(k.ok()) << k.error().message();
  EXPECT_EQ(hex(*k), "0c868a403bfd7a93a3001ef22ef02e3f");
}

TEST(NtlmSpec, Ntlmv2Responses_4_2_4_2) {
  Bytes key = ntowf_v2("Password", "User", "Domain").value();
  auto r = ntlmv2_response(key, from_hex(kServerChallenge), from_hex(kClientChallenge), 0,
                           from_hex(kSpecTargetInfo));
  EXPECT_EQ(hex(ntlmv2_temp(0, from_hex(kClientChallenge), from_hex(kSpecTargetInfo))),
            hex(from_hex(kSpecTemp)));
  // 4.2.4.2.1 LMv2 Response.
  EXPECT_EQ(hex(r.LmChallengeResponse), "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
  // 4.2.4.2.2 NTLMv2 Response (the NTProofStr part).
  EXPECT_EQ(hex(r.NTProofStr), "68cd0ab851e51c96aabc927bebef6a1c");
  EXPECT_EQ(hex(r.NtChallengeResponse),
            "68cd0ab851e51c96aabc927bebef6a1c" + hex(from_hex(kSpecTemp)));
  // 4.2.4.1.3 Session Base Key.
  EXPECT_EQ(hex(r.SessionBaseKey), "8de40ccadbc14a82f15cb0ad0de95ca3");
  // 4.2.4.2.3 Encrypted Session Key (KeyExchangeKey = SessionBaseKey).
  auto enc = encrypt_session_key(r.SessionBaseKey, from_hex(kRandomSessionKey));
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(hex(*enc), "c5dad2544fc9799094ce1ce90bc9d03e");
}

TEST(NtlmSpec, FullAuthenticateMessage_4_2_4_3) {
  NtlmClientOptions o;
  o.version = NtlmVersion{5, 1, 2600, 15};  // the example's 05 01 28 0a .. 0f
  NtlmClient c({"User", "Password", "Domain", "COMPUTER"}, o);
  Bytes neg = c.negotiate_message();
  EXPECT_EQ(load_le32(neg.data() + 12),
            0xe2888235u);  // our flags = the example client's
  auto auth = authenticate_as_example(c, from_hex(kSpecChallenge));
  ASSERT_TRUE(auth.ok()) << auth.error().message();
  EXPECT_EQ(hex(*auth), hex(from_hex(kSpecAuthenticate)));
  EXPECT_FALSE(c.mic_sent());  // the example server sends no MsvAvTimestamp
  EXPECT_EQ(hex(c.session_key()), kRandomSessionKey);
  EXPECT_EQ(c.negotiated_flags(), 0xe2888235u);
}

TEST(NtlmSpec, SessionKeysAndSignature_4_2_4_4) {
  auto k = derive_session_keys(from_hex(kRandomSessionKey), 0xe2888235u);
  EXPECT_EQ(hex(k.ClientSealingKey), "59f600973cc4960a25480a7c196e4c58");
  EXPECT_EQ(hex(k.ClientSigningKey), "4788dc861b4782f35d43fd98fe1a2d39");
  // GSS_WrapEx of "Plaintext", SeqNum 0: the RC4 handle seals the message
  // and then the checksum, so the signature equals our MAC checksum run
  // through the same keystream after the message.
  Bytes plain = from_hex("50006c00610069006e007400650078007400");
  auto mac = ntlm_gss_get_mic(k.ClientSigningKey, k.ClientSealingKey,
                              0xe2888235u & ~NTLMSSP_NEGOTIATE_KEY_EXCH, 0, plain);
  ASSERT_TRUE(mac.ok());
  Bytes stream = plain;
  stream.insert(stream.end(), mac->begin() + 4, mac->begin() + 12);
  Bytes sealed = rc4(k.ClientSealingKey, stream).value();
  EXPECT_EQ(hex(ByteView(sealed).first(plain.size())), "54e50165bf1936dc996020c1811b0f06fb5f");
  Bytes sig = from_hex("01000000");
  sig.insert(sig.end(), sealed.begin() + plain.size(), sealed.end());
  sig.insert(sig.end(), mac->begin() + 12, mac->end());
  EXPECT_EQ(hex(sig), "010000007fb38ec5c55d497600000000");
  // With KEY_EXCH the checksum alone is sealed with a fresh handle.
  auto mic = ntlm_gss_get_mic(k.ClientSigningKey, k.ClientSealingKey, 0xe2888235u, 0, plain);
  ASSERT_TRUE(mic.ok());
  Bytes sealed_ck = rc4(k.ClientSealingKey, ByteView(*mac).subspan(4, 8)).value();
  EXPECT_EQ(hex(ByteView(*mic).subspan(4, 8)), hex(sealed_ck));
}

TEST(NtlmCodec, SpecChallengeDecodesAndRoundTrips) {
  Bytes raw = from_hex(kSpecChallenge);
  auto m = decode_challenge_message(raw);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->NegotiateFlags, 0xe28a8233u);
  EXPECT_EQ(hex(m->TargetName), hex(u16("Server")));
  EXPECT_EQ(hex(m->ServerChallenge), kServerChallenge);
  ASSERT_EQ(m->target_info.size(), 2u);
  EXPECT_EQ(m->target_info[0].AvId, MsvAvNbDomainName);
  EXPECT_EQ(hex(m->target_info[0].Value), hex(u16("Domain")));
  EXPECT_EQ(m->target_info[1].AvId, MsvAvNbComputerName);
  ASSERT_TRUE(m->Version.has_value());
  EXPECT_EQ(*m->Version, (NtlmVersion{6, 0, 6000, 15}));
  EXPECT_EQ(hex(encode_challenge_message(*m)), hex(raw));
  EXPECT_EQ(hex(encode_av_pairs(m->target_info)), kSpecTargetInfo);
}

TEST(NtlmCodec, SpecAuthenticateDecodesAndRoundTrips) {
  Bytes raw = from_hex(kSpecAuthenticate);
  auto m = decode_authenticate_message(raw);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(hex(m->UserName), hex(u16("User")));
  EXPECT_EQ(hex(m->DomainName), hex(u16("Domain")));
  EXPECT_EQ(hex(m->Workstation), hex(u16("COMPUTER")));
  EXPECT_EQ(hex(m->EncryptedRandomSessionKey), "c5dad2544fc9799094ce1ce90bc9d03e");
  EXPECT_FALSE(m->MIC.has_value());
  EXPECT_EQ(*m->Version, (NtlmVersion{5, 1, 2600, 15}));
  EXPECT_EQ(hex(encode_authenticate_message(*m)), hex(raw));
  auto v2 = decode_ntlmv2_response(m->NtChallengeResponse);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(hex(v2->Response), "68cd0ab851e51c96aabc927bebef6a1c");
  EXPECT_EQ(hex(v2->ChallengeFromClient), kClientChallenge);
  EXPECT_EQ(v2->av_pairs.size(), 2u);
}

TEST(NtlmCodec, NegotiateMessage) {
  NtlmClient c({"u", "p", "", ""});
  Bytes neg = c.negotiate_message();
  // Header, flags, empty DomainName/Workstation at offset 40, Version 6.1.0/15.
  EXPECT_EQ(hex(neg),
            "4e544c4d5353500001000000358288e20000000028000000000000002800000006010000"
            "0000000f");
  auto m = decode_negotiate_message(neg);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->NegotiateFlags, NtlmClient::default_flags());
  EXPECT_EQ(*m->Version, NtlmVersion{});
  EXPECT_EQ(hex(encode_negotiate_message(*m)), hex(neg));
}

// A CHALLENGE with MsvAvTimestamp (as Samba and Windows send): MIC,
// MsvAvFlags, Z(24) LM response, server time in the blob, key exchange.
TEST(NtlmClient, MicWithServerTimestamp) {
  ChallengeMessage ch;
  ch.NegotiateFlags = 0xe28a8235;
  std::memcpy(ch.ServerChallenge.data(), from_hex("1122334455667788").data(), 8);
  ch.TargetName = u16("SRV");
  ch.target_info = {{MsvAvNbDomainName, u16("SRV")},
                    {MsvAvTimestamp, from_hex("0080650d9b9480dd")}};
  ch.TargetInfo = encode_av_pairs(ch.target_info);
  ch.Version = NtlmVersion{};
  Bytes chal = encode_challenge_message(ch);

  NtlmClient c({"alice", "secret", "WG", "HOST"});
  Bytes neg = c.negotiate_message();
  Bytes esk = from_hex("000102030405060708090a0b0c0d0e0f");
  auto auth = c.authenticate_message(chal, 42, from_hex("a1a2a3a4a5a6a7a8"), esk);
  ASSERT_TRUE(auth.ok()) << auth.error().message();
  EXPECT_TRUE(c.mic_sent());
  auto m = decode_authenticate_message(*auth).value();
  EXPECT_EQ(hex(m.LmChallengeResponse), std::string(48, '0'));
  auto v2 = decode_ntlmv2_response(m.NtChallengeResponse).value();
  EXPECT_EQ(v2.TimeStamp,
            load_le64(from_hex("0080650d9b9480dd").data()));  // not 42
  const AvPair* f = find_av_pair(v2.av_pairs, MsvAvFlags);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(load_le32(f->Value.data()), kAvFlagMicPresent);
  // Recompute the MIC independently: HMAC_MD5(ESK, NEG || CHAL || AUTH(MIC=0)).
  ASSERT_TRUE(m.MIC.has_value());
  Bytes zeroed = *auth;
  std::fill(zeroed.begin() + kMicOffset, zeroed.begin() + kMicOffset + 16, std::byte{0});
  EXPECT_EQ(hex(*m.MIC), hex(hmac_md5(esk, {ByteView(neg), ByteView(chal), ByteView(zeroed)})));
  // The key exchange: RC4(SessionBaseKey, ESK), with SessionBaseKey from the
  // NTProofStr the server would recompute.
  Bytes key = ntowf_v2("secret", "alice", "WG").value();
  Bytes sbk = hmac_md5(key, v2.Response);
  EXPECT_EQ(hex(rc4(sbk, m.EncryptedRandomSessionKey).value()), hex(esk));
  EXPECT_EQ(hex(c.session_key()), hex(esk));
  EXPECT_FALSE(c.keys().ClientSigningKey.empty());
}

TEST(NtlmClient, NoKeyExchangeUsesSessionBaseKey) {
  Bytes chal = spec_challenge_without(NTLMSSP_NEGOTIATE_KEY_EXCH);
  NtlmClient c({"User", "Password", "Domain", "COMPUTER"});
  c.negotiate_message();
  auto auth = authenticate_as_example(c, chal);
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ(hex(c.session_key()), "8de40ccadbc14a82f15cb0ad0de95ca3");
  EXPECT_TRUE(decode_authenticate_message(*auth)->EncryptedRandomSessionKey.empty());
}

TEST(NtlmClient, Anonymous) {
  NtlmClient c({"", "", "", ""});
  c.negotiate_message();
  auto auth = authenticate_as_example(c, from_hex(kSpecChallenge));
  ASSERT_TRUE(auth.ok());
  auto m = decode_authenticate_message(*auth).value();
  EXPECT_TRUE(m.LmChallengeResponse.empty());
  EXPECT_TRUE(m.NtChallengeResponse.empty());
  EXPECT_TRUE(m.EncryptedRandomSessionKey.empty());
  EXPECT_TRUE(m.NegotiateFlags & NTLMSSP_ANONYMOUS);
  EXPECT_FALSE(m.NegotiateFlags & NTLMSSP_NEGOTIATE_KEY_EXCH);
  EXPECT_TRUE(c.session_key().empty());
  EXPECT_TRUE(c.keys().ClientSigningKey.empty());
}

TEST(NtlmClient, UserNameIsUpperCasedDomainIsNot) {
  auto a = ntowf_v2("Password", "User", "Domain").value();
  EXPECT_EQ(hex(ntowf_v2("Password", "uSeR", "Domain").value()), hex(a));
  EXPECT_NE(hex(ntowf_v2("Password", "User", "DOMAIN").value()), hex(a));
  // Non-ASCII: RtlUpcaseUnicodeString maps U+00E4 to U+00C4.
  EXPECT_EQ(hex(ntowf_v2("p", "j\xc3\xa4rvi", "").value()),
            hex(ntowf_v2("p", "J\xc3\x84RVI", "").value()));
}

TEST(NtlmClient, CallerErrorsAndSecrets) {
  NtlmClient c({"User", "hunter2-secret", "Domain", ""});
  auto r = authenticate_as_example(c, from_hex(kSpecChallenge));
  EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER));  // no negotiate_message() yet
  c.negotiate_message();
  r = c.authenticate_message(from_hex(kSpecChallenge), 0, from_hex("aa"),
                             from_hex(kRandomSessionKey));
  EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER));
  EXPECT_TRUE(authenticate_as_example(c, from_hex(kSpecChallenge)).ok());
  r = authenticate_as_example(c, from_hex(kSpecChallenge));
  EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER));  // single use
  EXPECT_EQ(r.error().message().find("hunter2"), std::string::npos);

  NtlmClient bad({"User", "bad\xff\xfeutf8", "Domain", ""});
  bad.negotiate_message();
  r = authenticate_as_example(bad, from_hex(kSpecChallenge));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().find("bad"), std::string::npos);
  EXPECT_NE(r.error().message().find("password"), std::string::npos);
}

TEST(NtlmClient, RejectsServerWithoutUnicode) {
  Bytes chal = spec_challenge_without(NTLMSSP_NEGOTIATE_UNICODE);
  NtlmClient c({"User", "Password", "Domain", ""});
  c.negotiate_message();
  auto r = authenticate_as_example(c, chal);
  EXPECT_TRUE(r.error().is(STATUS_NOT_SUPPORTED));
}

// ---- Malformed input ----

bool bad(const Result<ChallengeMessage>& r) {
  return !r.ok() && r.error().is(STATUS_INVALID_NETWORK_RESPONSE);
}

TEST(NtlmMalformed, EveryTruncationOfEveryMessageIsRejected) {
  Bytes chal = from_hex(kSpecChallenge), auth = from_hex(kSpecAuthenticate);
  NtlmClient c({"u", "p", "", ""});
  Bytes neg = c.negotiate_message();
  for (size_t n = 0; n < chal.size(); n++)
    EXPECT_TRUE(bad(decode_challenge_message(ByteView(chal).first(n)))) << n;
  for (size_t n = 0; n < auth.size(); n++)
    EXPECT_FALSE(decode_authenticate_message(ByteView(auth).first(n)).ok()) << n;
  for (size_t n = 0; n < 32; n++)
    EXPECT_FALSE(decode_negotiate_message(ByteView(neg).first(n)).ok());
}

TEST(NtlmMalformed, OffsetsAndAvPairs) {
  Bytes chal = from_hex(kSpecChallenge);
  auto mutate = [&](size_t at, uint32_t v, int width) {
    Bytes b = chal;
    if (width == 2)
      store_le16(b.data() + at, static_cast<uint16_t>(v));
    else
      store_le32(b.data() + at, v);
    return decode_challenge_message(b);
  };
  EXPECT_TRUE(bad(mutate(16, 0xffffffff, 4)));     // TargetNameOffset past end
  EXPECT_TRUE(bad(mutate(44, 0xfffffff0, 4)));     // TargetInfoOffset overflow
  EXPECT_TRUE(bad(mutate(40, 0x0025, 2)));         // TargetInfoLen one past end
  EXPECT_TRUE(bad(mutate(0x44 + 2, 0x00ff, 2)));   // first AvLen overruns
  EXPECT_TRUE(bad(mutate(0x44 + 32, 0x0006, 2)));  // EOL -> MsvAvFlags with AvLen 0
  EXPECT_TRUE(bad(mutate(8, 3, 4)));               // MessageType
  EXPECT_TRUE(bad(mutate(0, 0, 4)));               // Signature

  EXPECT_TRUE(decode_av_pairs(from_hex("00000000")).ok());
  EXPECT_FALSE(decode_av_pairs(from_hex("")).ok());
  EXPECT_FALSE(decode_av_pairs(from_hex("010002004100")).ok());               // no EOL
  EXPECT_FALSE(decode_av_pairs(from_hex("07000400000000000000 0000")).ok());  // short timestamp
  EXPECT_FALSE(decode_av_pairs(from_hex("060008000000000000000000 00000000")).ok());
  EXPECT_FALSE(decode_av_pairs(from_hex("01000300414243 00000000")).ok());  // odd UTF-16
  EXPECT_FALSE(decode_av_pairs(from_hex("000002000000")).ok());             // EOL with a value
  auto ok = decode_av_pairs(from_hex("ff7f0100ee 00000000 dead"));  // unknown id; tail ignored
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 1u);

  EXPECT_FALSE(decode_ntlmv2_response(from_hex("00")).ok());
  Bytes v2 = decode_authenticate_message(from_hex(kSpecAuthenticate))->NtChallengeResponse;
  v2[16] = std::byte{2};  // RespType
  EXPECT_FALSE(decode_ntlmv2_response(v2).ok());
}

TEST(NtlmMalformed, HostileChallengeIntoClient) {
  Bytes chal = from_hex(kSpecChallenge);
  for (size_t n = 0; n <= chal.size(); n++) {
    NtlmClient c({"User", "Password", "Domain", ""});
    c.negotiate_message();
    auto r = authenticate_as_example(c, ByteView(chal).first(n));
    EXPECT_EQ(r.ok(), n == chal.size()) << n;
  }
}

}  // namespace
}  // namespace smbkit::auth
