#include "auth/ntlm_acceptor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "auth/crypto.h"
#include "auth/ntlm_initiator.h"
#include "auth/ntlm_vectors.h"
#include "base/utf16.h"

namespace smbkit::auth {
namespace {

std::string hex(ByteView b) { return to_hex(b); }
Bytes u16(std::string_view s) { return utf8_to_utf16le(s).value(); }

NtHash hash_of(std::string_view password) {
  Bytes h = ntowf_v1(password).value();
  NtHash out;
  std::copy_n(h.begin(), out.size(), out.begin());
  return out;
}

// An account database: "user\domain" (as sent) -> NT hash.
NtHashLookup accounts(std::map<std::string, std::string> users) {
  return [users](std::string_view user, std::string_view domain) -> std::optional<NtHash> {
    auto it = users.find(std::string(user) + "\\" + std::string(domain));
    if (it == users.end()) return std::nullopt;
    return hash_of(it->second);
  };
}

NtlmAcceptorOptions server_names() {
  NtlmAcceptorOptions o;
  o.nb_computer_name = "SMBKITD";
  o.nb_domain_name = "WORKGROUP";
  o.dns_computer_name = "smbkitd.example";
  o.dns_domain_name = "example";
  return o;
}

constexpr uint64_t kNow = 0x01d9a1b2c3d4e5f6ull;  // a FILETIME
const char* kSc = "0123456789abcdef";
const char* kCc = "a1a2a3a4a5a6a7a8";
const char* kEsk = "000102030405060708090a0b0c0d0e0f";

// One in-memory exchange between our initiator and our acceptor.
struct Exchange {
  NtlmClient client;
  NtlmAcceptor acceptor;
  Bytes negotiate, challenge, authenticate;

  Exchange(NtlmCredentials creds, NtHashLookup lookup, NtlmClientOptions copts = {})
      : client(std::move(creds), copts), acceptor(server_names(), std::move(lookup)) {
    negotiate = client.negotiate_message();
    challenge = acceptor.challenge_message(negotiate, kNow, from_hex(kSc)).value();
    authenticate = client.authenticate_message(challenge, 0, from_hex(kCc), from_hex(kEsk)).value();
  }
  Result<NtlmOutcome> accept() { return acceptor.authenticate(authenticate); }
};

NtHashLookup alice() { return accounts({{"alice\\WG", "s3cret"}}); }

void expect_logon_failure(const Result<NtlmOutcome>& r) {
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(STATUS_LOGON_FAILURE)) << r.error().message();
  EXPECT_EQ(r.error().message(), ntlm_logon_failure().message());
}

// Offset of the NtChallengeResponse payload (2.2.1.3
// NtChallengeResponseFields).
size_t nt_offset(ByteView auth) { return load_le32(auth.data() + 24); }

// ---- MS-NLMP 4.2.4: the acceptor verifies the published AUTHENTICATE ----

TEST(NtlmAcceptorSpec, NtowfV1_4_2_2_1_2) {
  EXPECT_EQ(hex(ntowf_v1("Password").value()), "a4f49c406510bdcab6824ee7c30fd852");
}

// The 4.2.4.3 AUTHENTICATE against the 4.2.4.3 CHALLENGE: NTProofStr
// (4.2.4.2.2) verifies, the key exchange (4.2.4.2.3) yields the random
// session key 55..55, and the 4.2.4.4 signing and sealing keys follow.
TEST(NtlmAcceptorSpec, VerifiesTheExampleAuthenticate_4_2_4) {
  auto r = ntlm_verify_authenticate({}, from_hex(kSpecChallenge), from_hex(kSpecAuthenticate),
                                    accounts({{"User\\Domain", "Password"}}));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->outcome, NtlmOutcome::authenticated);
  EXPECT_EQ(r->user, "User");
  EXPECT_EQ(r->domain, "Domain");
  EXPECT_EQ(r->workstation, "COMPUTER");
  EXPECT_EQ(hex(r->session_key), kRandomSessionKey);
  EXPECT_EQ(r->negotiated_flags, 0xe2888235u & 0xe28a8233u);
  EXPECT_FALSE(r->mic_verified);  // the example has no MIC
  EXPECT_EQ(hex(r->keys.ClientSigningKey), "4788dc861b4782f35d43fd98fe1a2d39");
  EXPECT_EQ(hex(r->keys.ClientSealingKey), "59f600973cc4960a25480a7c196e4c58");

  std::string why;
  auto bad = ntlm_verify_authenticate({}, from_hex(kSpecChallenge), from_hex(kSpecAuthenticate),
                                      accounts({{"User\\Domain", "Passw0rd"}}), &why);
  EXPECT_TRUE(bad.error().is(STATUS_LOGON_FAILURE));
  EXPECT_EQ(why, "NTProofStr does not verify");
}

// ---- The CHALLENGE it builds (3.2.5.1.1) ----

TEST(NtlmAcceptor, ChallengeCarriesNamesTimestampAndOurChallenge) {
  NtlmClient c({"alice", "s3cret", "WG", ""});
  NtlmAcceptor a(server_names(), alice());
  Bytes neg = c.negotiate_message();
  auto chal = a.challenge_message(neg, kNow, from_hex(kSc));
  ASSERT_TRUE(chal.ok()) << chal.error().message();
  auto m = decode_challenge_message(*chal).value();
  EXPECT_EQ(hex(m.ServerChallenge), kSc);
  EXPECT_EQ(hex(m.TargetName), hex(u16("SMBKITD")));
  EXPECT_EQ(m.NegotiateFlags, NtlmClient::default_flags() | NTLMSSP_TARGET_TYPE_SERVER);
  ASSERT_TRUE(m.Version);
  const std::pair<uint16_t, std::string> names[] = {{MsvAvNbDomainName, "WORKGROUP"},
                                                    {MsvAvNbComputerName, "SMBKITD"},
                                                    {MsvAvDnsDomainName, "example"},
                                                    {MsvAvDnsComputerName, "smbkitd.example"}};
  for (const auto& [id, name] : names) {
    const AvPair* p = find_av_pair(m.target_info, id);
    ASSERT_NE(p, nullptr) << id;
    EXPECT_EQ(hex(p->Value), hex(u16(name)));
  }
  const AvPair* ts = find_av_pair(m.target_info, MsvAvTimestamp);
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(load_le64(ts->Value.data()), kNow);
  EXPECT_EQ(find_av_pair(m.target_info, MsvAvDnsTreeName), nullptr);

  // Same inputs, same bytes: nothing but the arguments goes in.
  NtlmAcceptor again(server_names(), alice());
  EXPECT_EQ(hex(again.challenge_message(neg, kNow, from_hex(kSc)).value()), hex(*chal));
}

TEST(NtlmAcceptor, CallerAndClientErrors) {
  NtlmClient c({"alice", "s3cret", "WG", ""});
  Bytes neg = c.negotiate_message();
  NtlmAcceptor a(server_names(), alice());
  EXPECT_TRUE(a.authenticate(neg).error().is(STATUS_INVALID_PARAMETER));  // no CHALLENGE yet
  EXPECT_TRUE(a.challenge_message(neg, kNow, from_hex("01")).error().is(STATUS_INVALID_PARAMETER));
  // The fixed part is 32 bytes; the Version after it is optional.
  for (size_t n = 0; n < 32; n++) {
    NtlmAcceptor t(server_names(), alice());
    auto r = t.challenge_message(ByteView(neg).first(n), kNow, from_hex(kSc));
    EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER)) << n;
  }
  Bytes oem = neg;
  store_le32(oem.data() + 12, NtlmClient::default_flags() & ~NTLMSSP_NEGOTIATE_UNICODE);
  EXPECT_TRUE(a.challenge_message(oem, kNow, from_hex(kSc)).error().is(STATUS_NOT_SUPPORTED));
  Bytes huge = neg;
  huge.resize(kNtlmMaxMessageSize + 1);
  EXPECT_TRUE(a.challenge_message(huge, kNow, from_hex(kSc)).error().is(STATUS_INVALID_PARAMETER));
  NtlmAcceptor unnamed(NtlmAcceptorOptions{}, alice());
  EXPECT_FALSE(unnamed.challenge_message(neg, kNow, from_hex(kSc)).ok());
}

// ---- Our initiator against our acceptor ----

TEST(NtlmAcceptor, RightPasswordGivesTheSameKeysOnBothSides) {
  Exchange x({"alice", "s3cret", "WG", "HOST"}, alice());
  auto r = x.accept();
  ASSERT_TRUE(r.ok()) << r.error().message() << " / " << x.acceptor.failure_reason();
  EXPECT_EQ(*r, NtlmOutcome::authenticated);
  EXPECT_TRUE(x.client.mic_sent());
  EXPECT_TRUE(x.acceptor.result().mic_verified);
  EXPECT_EQ(x.acceptor.result().user, "alice");
  EXPECT_EQ(x.acceptor.result().domain, "WG");
  EXPECT_EQ(x.acceptor.result().workstation, "HOST");
  EXPECT_EQ(hex(x.acceptor.session_key()), kEsk);
  EXPECT_EQ(hex(x.acceptor.session_key()), hex(x.client.session_key()));
  EXPECT_EQ(x.acceptor.negotiated_flags(), x.client.negotiated_flags());
  const NtlmSessionKeys &a = x.acceptor.keys(), &c = x.client.keys();
  EXPECT_FALSE(a.ClientSigningKey.empty());
  EXPECT_EQ(hex(a.ClientSigningKey), hex(c.ClientSigningKey));
  EXPECT_EQ(hex(a.ClientSealingKey), hex(c.ClientSealingKey));
  EXPECT_EQ(hex(a.ServerSigningKey), hex(c.ServerSigningKey));
  EXPECT_EQ(hex(a.ServerSealingKey), hex(c.ServerSealingKey));
  // Single use.
  EXPECT_TRUE(x.acceptor.authenticate(x.authenticate).error().is(STATUS_INVALID_PARAMETER));
}

TEST(NtlmAcceptor, UserNameCaseDoesNotMatterToTheProof) {
  // NTOWFv2 upper-cases the user, so a lookup that folds case authenticates.
  NtHashLookup folded = [](std::string_view, std::string_view) -> std::optional<NtHash> {
    return hash_of("s3cret");
  };
  Exchange x({"ALICE", "s3cret", "WG", ""}, folded);
  EXPECT_EQ(x.accept().value(), NtlmOutcome::authenticated);
}

TEST(NtlmAcceptor, WrongPasswordIsLogonFailure) {
  Exchange x({"alice", "guess", "WG", ""}, alice());
  auto r = x.accept();
  expect_logon_failure(r);
  EXPECT_EQ(x.acceptor.failure_reason(), "NTProofStr does not verify");
  EXPECT_TRUE(x.acceptor.session_key().empty());
}

// An unknown user is the guest outcome; a server that does not map it to
// guest answers ntlm_logon_failure(), exactly what a wrong password gets.
TEST(NtlmAcceptor, UnknownUserIsGuestAndRefusedLikeAWrongPassword) {
  Exchange unknown({"mallory", "s3cret", "WG", ""}, alice());
  auto r = unknown.accept();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, NtlmOutcome::guest);
  EXPECT_EQ(unknown.acceptor.result().user, "mallory");
  EXPECT_TRUE(unknown.acceptor.session_key().empty());
  EXPECT_TRUE(unknown.acceptor.keys().ClientSigningKey.empty());

  Exchange wrong({"alice", "guess", "WG", ""}, alice());
  auto w = wrong.accept();
  Error refused = ntlm_logon_failure();
  EXPECT_EQ(refused.status, w.error().status);
  EXPECT_EQ(refused.message(), w.error().message());
}

TEST(NtlmAcceptor, TamperedMicIsRefused) {
  Exchange x({"alice", "s3cret", "WG", ""}, alice());
  x.authenticate[kMicOffset + 3] ^= std::byte{0x01};
  expect_logon_failure(x.accept());
  EXPECT_EQ(x.acceptor.failure_reason(), "MIC does not verify");
}

TEST(NtlmAcceptor, TamperedNtProofStrIsRefused) {
  Exchange x({"alice", "s3cret", "WG", ""}, alice());
  x.authenticate[nt_offset(x.authenticate)] ^= std::byte{0x80};
  expect_logon_failure(x.accept());
  EXPECT_EQ(x.acceptor.failure_reason(), "NTProofStr does not verify");
}

// The MIC-present bit of MsvAvFlags cleared while the MIC stays: the flag
// lives inside the blob NTProofStr covers, so this cannot pass.
TEST(NtlmAcceptor, DroppedMicFlagWithMicPresentIsRefused) {
  Exchange x({"alice", "s3cret", "WG", ""}, alice());
  Bytes flags_pair = from_hex("0600040002000000");  // MsvAvFlags = MIC present
  auto nt_at = x.authenticate.begin() + static_cast<std::ptrdiff_t>(nt_offset(x.authenticate));
  auto it = std::search(nt_at, x.authenticate.end(), flags_pair.begin(), flags_pair.end());
  ASSERT_NE(it, x.authenticate.end());
  it[4] = std::byte{0};
  expect_logon_failure(x.accept());
}

// The MIC announced in MsvAvFlags but taken out of the message (re-encoded
// without it, NTProofStr still valid): a downgrade, refused.
TEST(NtlmAcceptor, AnnouncedMicMissingIsRefused) {
  Exchange x({"alice", "s3cret", "WG", ""}, alice());
  auto m = decode_authenticate_message(x.authenticate).value();
  m.MIC.reset();
  m.Version.reset();
  m.NegotiateFlags &= ~NTLMSSP_NEGOTIATE_VERSION;
  x.authenticate = encode_authenticate_message(m);
  expect_logon_failure(x.accept());
  EXPECT_EQ(x.acceptor.failure_reason(), "MIC announced but absent");
}

// The MIC covers the NEGOTIATE too: one the acceptor saw differently (here
// without VERSION) from what the client sent fails.
TEST(NtlmAcceptor, NegotiateAlteredInTransitFailsTheMic) {
  NtlmClient c({"alice", "s3cret", "WG", ""});
  NtlmAcceptor a(server_names(), alice());
  Bytes neg = c.negotiate_message();
  Bytes seen = neg;
  store_le32(seen.data() + 12, NtlmClient::default_flags() & ~NTLMSSP_NEGOTIATE_VERSION);
  Bytes chal = a.challenge_message(seen, kNow, from_hex(kSc)).value();
  Bytes auth = c.authenticate_message(chal, 0, from_hex(kCc), from_hex(kEsk)).value();
  expect_logon_failure(a.authenticate(auth));
  EXPECT_EQ(a.failure_reason(), "MIC does not verify");
}

// Without KEY_EXCH (and no MIC, as an old client), both sides use the
// SessionBaseKey.
TEST(NtlmAcceptor, NoKeyExchangeBothSidesUseTheSessionBaseKey) {
  NtlmClientOptions old;
  old.send_mic = false;
  NtlmClient c({"alice", "s3cret", "WG", ""}, old);
  NtlmAcceptor a(server_names(), alice());
  Bytes neg = c.negotiate_message();
  Bytes seen = neg;  // the acceptor grants no KEY_EXCH
  store_le32(seen.data() + 12, NtlmClient::default_flags() & ~NTLMSSP_NEGOTIATE_KEY_EXCH);
  Bytes chal = a.challenge_message(seen, kNow, from_hex(kSc)).value();
  Bytes auth = c.authenticate_message(chal, 0, from_hex(kCc), from_hex(kEsk)).value();
  ASSERT_EQ(a.authenticate(auth).value(), NtlmOutcome::authenticated);
  EXPECT_FALSE(a.result().mic_verified);
  EXPECT_NE(hex(a.session_key()), kEsk);
  EXPECT_EQ(hex(a.session_key()), hex(c.session_key()));
}

TEST(NtlmAcceptor, AnonymousIsItsOwnOutcome) {
  Exchange x({"", "", "", ""}, alice());
  auto r = x.accept();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, NtlmOutcome::anonymous);
  EXPECT_TRUE(x.acceptor.session_key().empty());
  EXPECT_TRUE(x.acceptor.result().user.empty());
}

// 3.3.1 responses: a 24-byte NTLMv1 response, or only an LM response.
TEST(NtlmAcceptor, NtlmV1AndLmResponsesAreRefused) {
  for (size_t nt_size : {size_t{24}, size_t{0}}) {
    Exchange x({"alice", "s3cret", "WG", ""}, alice());
    auto m = decode_authenticate_message(x.authenticate).value();
    m.NtChallengeResponse.resize(nt_size);
    m.LmChallengeResponse = Bytes(24, std::byte{0x11});
    m.MIC.reset();
    x.authenticate = encode_authenticate_message(m);
    expect_logon_failure(x.accept());
    EXPECT_EQ(x.acceptor.failure_reason(), "NTLMv1 or LM response refused") << nt_size;
  }
}

// An NTLMv2 response whose NTLMv2_CLIENT_CHALLENGE does not parse (a
// truncated blob, as the NetApp client of Samba bug 14932 sends) is a
// malformed request, STATUS_INVALID_PARAMETER as smbd answers, not a
// wrong password.
TEST(NtlmAcceptor, MalformedNtlmV2ResponseIsInvalidParameter) {
  Exchange x({"alice", "s3cret", "WG", ""}, alice());
  auto m = decode_authenticate_message(x.authenticate).value();
  m.NtChallengeResponse.resize(16 + 27);  // NTProofStr, then a blob short of its 28-byte header
  m.MIC.reset();
  x.authenticate = encode_authenticate_message(m);
  auto r = x.accept();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER)) << r.error().message();
  EXPECT_EQ(x.acceptor.failure_reason(), "malformed NTLMv2_RESPONSE");
}

TEST(NtlmAcceptor, EveryTruncatedAuthenticateFails) {
  Exchange x({"alice", "s3cret", "WG", ""}, alice());
  for (size_t n = 0; n < x.authenticate.size(); n++) {
    NtlmAcceptor a(server_names(), alice());
    ASSERT_TRUE(a.challenge_message(x.negotiate, kNow, from_hex(kSc)).ok());
    auto r = a.authenticate(ByteView(x.authenticate).first(n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER) || r.error().is(STATUS_LOGON_FAILURE)) << n;
  }
}

}  // namespace
}  // namespace smbkit::auth
