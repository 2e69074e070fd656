#include "auth/spnego_acceptor.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "auth/spnego_initiator.h"

namespace smbkit::auth {
namespace {

std::string hex(ByteView b) { return to_hex(b); }

constexpr uint64_t kNow = 0x01d9a1b2c3d4e5f6ull;

void fixed_random(MutableByteView v) {
  for (size_t i = 0; i < v.size(); i++) v[i] = std::byte(0x21 * (i % 7 + 1));
}

NtHashLookup alice() {
  return [](std::string_view user, std::string_view domain) -> std::optional<NtHash> {
    if (user != "alice" || domain != "WG") return std::nullopt;
    Bytes h = ntowf_v1("s3cret").value();
    NtHash out;
    std::copy_n(h.begin(), out.size(), out.begin());
    return out;
  };
}

SpnegoNtlmAcceptor make_acceptor() {
  SpnegoNtlmAcceptorOptions o;
  o.ntlm.nb_computer_name = "SMBKITD";
  o.ntlm.nb_domain_name = "WORKGROUP";
  o.random = fixed_random;
  return SpnegoNtlmAcceptor(std::move(o), alice());
}

SpnegoNtlmClient make_client(NtlmCredentials creds, bool send_mic = true) {
  SpnegoNtlmOptions o;
  o.random = fixed_random;
  o.send_mech_list_mic = send_mic;
  return SpnegoNtlmClient(std::move(creds), o);
}

// Runs the exchange to the end or the first error; returns the acceptor's
// last result. `tamper` may change each client token before delivery.
Result<SpnegoAcceptStep> run(SpnegoNtlmClient& c, SpnegoNtlmAcceptor& a, int* rounds,
                             const std::function<void(int, Bytes&)>& tamper = {}) {
  Bytes tok = c.initial_token();
  for (int round = 1; round <= 4; round++) {
    if (tamper) tamper(round, tok);
    auto step = a.next_token(tok, kNow);
    *rounds = round;
    if (!step) return step;
    auto next = c.next_token(step->token, 0);
    if (!next) return next.take_error();
    if (step->complete) {
      EXPECT_TRUE(next->empty());
      return step;
    }
    tok = std::move(next).value();
  }
  return nt_error(STATUS_INVALID_PARAMETER, "exchange did not finish");
}

TEST(SpnegoNtlmAcceptor, NegotiateTokenIsANegTokenInit2OfferingNtlm) {
  Bytes t = SpnegoNtlmAcceptor::negotiate_token();
  auto d = decode_neg_token_init(t);
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_EQ(d->mechTypes.size(), 1u);
  EXPECT_EQ(d->mechTypes[0], oid_ntlmssp());
  ASSERT_TRUE(d->negHints);
  EXPECT_EQ(d->negHints->hintName, std::string(kNegHintsNotDefined));
  // Byte for byte what Samba 4.17 sends (spnego_test.cc kSambaNegotiateBlob).
  EXPECT_EQ(hex(t),
            "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa32a30"
            "28a0261b246e6f745f"
            "646566696e65645f696e5f5246433431373840706c656173655f69676e6f7265");
  EXPECT_TRUE(make_client({"u", "p", "", ""}).check_server_hint(t).ok());
  auto rej = decode_neg_token_resp(SpnegoNtlmAcceptor::reject_token());
  ASSERT_TRUE(rej.ok());
  EXPECT_EQ(rej->negState, NegState::reject);
}

TEST(SpnegoNtlmAcceptor, RoundTripWithMechListMic) {
  auto c = make_client({"alice", "s3cret", "WG", ""});
  auto a = make_acceptor();
  int rounds = 0;
  auto r = run(c, a, &rounds);
  ASSERT_TRUE(r.ok()) << r.error().message() << " / " << a.ntlm().failure_reason();
  EXPECT_EQ(rounds, 2);
  EXPECT_TRUE(a.complete());
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(a.outcome(), NtlmOutcome::authenticated);
  EXPECT_TRUE(c.mech_list_mic_sent());
  EXPECT_TRUE(a.mech_list_mic_verified());
  EXPECT_TRUE(c.server_mech_list_mic_verified());
  EXPECT_EQ(hex(a.session_key()), hex(c.session_key()));
  EXPECT_EQ(a.session_key().size(), 16u);
  EXPECT_FALSE(a.next_token({}, kNow).ok());  // nothing more expected
}

// A client that sends no mechListMIC of its own accord is asked for it
// (accept-incomplete with ours), as Samba asks ours.
TEST(SpnegoNtlmAcceptor, AsksForTheMechListMicWhenNotSent) {
  auto c = make_client({"alice", "s3cret", "WG", ""}, false);
  auto a = make_acceptor();
  int rounds = 0;
  auto r = run(c, a, &rounds);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(rounds, 3);
  EXPECT_TRUE(a.mech_list_mic_verified());
  EXPECT_TRUE(c.server_mech_list_mic_verified());
  EXPECT_EQ(hex(a.session_key()), hex(c.session_key()));
}

Bytes with_mech_list_mic_flipped(const Bytes& tok) {
  auto resp = decode_neg_token_resp(tok).value();
  EXPECT_TRUE(resp.mechListMIC.has_value());
  if (resp.mechListMIC) (*resp.mechListMIC)[5] ^= std::byte{0x01};
  return encode_neg_token_resp(resp);
}

TEST(SpnegoNtlmAcceptor, TamperedMechListMicIsRefused) {
  auto c = make_client({"alice", "s3cret", "WG", ""});
  auto a = make_acceptor();
  int rounds = 0;
  auto r = run(c, a, &rounds, [](int round, Bytes& tok) {
    if (round == 2) tok = with_mech_list_mic_flipped(tok);
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(rounds, 2);
  EXPECT_TRUE(r.error().is(STATUS_LOGON_FAILURE)) << r.error().message();
  EXPECT_FALSE(a.complete());
  EXPECT_FALSE(a.next_token({}, kNow).ok());  // failed for good
}

TEST(SpnegoNtlmAcceptor, TamperedMechListMicInTheThirdRoundIsRefused) {
  auto c = make_client({"alice", "s3cret", "WG", ""}, false);
  auto a = make_acceptor();
  int rounds = 0;
  auto r = run(c, a, &rounds, [](int round, Bytes& tok) {
    if (round == 3) tok = with_mech_list_mic_flipped(tok);
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(rounds, 3);
  EXPECT_TRUE(r.error().is(STATUS_LOGON_FAILURE));
}

TEST(SpnegoNtlmAcceptor, WrongPasswordAndUnknownUser) {
  auto c = make_client({"alice", "guess", "WG", ""});
  auto a = make_acceptor();
  int rounds = 0;
  auto r = run(c, a, &rounds);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(STATUS_LOGON_FAILURE));

  // Unknown user: the guest outcome, no keys, no mechListMIC; the server's
  // policy decides (refusing, it sends ntlm_logon_failure()).
  auto g = make_client({"mallory", "x", "WG", ""});
  auto ga = make_acceptor();
  auto gr = run(g, ga, &rounds);
  ASSERT_TRUE(gr.ok()) << gr.error().message();
  EXPECT_EQ(ga.outcome(), NtlmOutcome::guest);
  EXPECT_TRUE(ga.session_key().empty());
  EXPECT_FALSE(ga.mech_list_mic_verified());
  EXPECT_EQ(ntlm_logon_failure().message(), r.error().message());
}

TEST(SpnegoNtlmAcceptor, Anonymous) {
  auto c = make_client({"", "", "", ""});
  auto a = make_acceptor();
  int rounds = 0;
  auto r = run(c, a, &rounds);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(a.outcome(), NtlmOutcome::anonymous);
  EXPECT_TRUE(a.session_key().empty());
}

// NTLMSSP offered second: request-mic, no token; the NEGOTIATE follows in a
// NegTokenResp, and the mechListMIC is then required (RFC 4178 5).
TEST(SpnegoNtlmAcceptor, NtlmNotFirstNeedsTheMechListMic) {
  const Oid mechs[] = {oid_krb5(), oid_ntlmssp()};
  Bytes der = encode_mech_type_list(mechs);
  auto a = make_acceptor();
  auto s1 = a.next_token(encode_neg_token_init(mechs, from_hex("6e0102")), kNow);
  ASSERT_TRUE(s1.ok()) << s1.error().message();
  auto r1 = decode_neg_token_resp(s1->token).value();
  EXPECT_EQ(r1.negState, NegState::request_mic);
  EXPECT_EQ(r1.supportedMech, oid_ntlmssp());
  EXPECT_FALSE(r1.responseToken);

  NtlmClient n({"alice", "s3cret", "WG", ""});
  auto s2 = a.next_token(encode_neg_token_resp(n.negotiate_message(), {}), kNow);
  ASSERT_TRUE(s2.ok()) << s2.error().message();
  auto chal = decode_neg_token_resp(s2->token).value().responseToken.value();
  Bytes auth = n.authenticate_message(chal, 0, from_hex("0102030405060708"),
                                      from_hex("00112233445566778899aabbccddeeff"))
                   .value();
  // No mechListMIC with the AUTHENTICATE: the acceptor asks for it.
  auto s3 = a.next_token(encode_neg_token_resp(auth, {}), kNow);
  ASSERT_TRUE(s3.ok()) << s3.error().message();
  EXPECT_FALSE(s3->complete);
  Bytes mic = ntlm_mech_list_mic(n.keys(), n.negotiated_flags(), der, NtlmRole::initiator).value();
  auto s4 = a.next_token(encode_neg_token_resp({}, mic), kNow);
  ASSERT_TRUE(s4.ok()) << s4.error().message();
  EXPECT_TRUE(s4->complete);
  EXPECT_TRUE(a.mech_list_mic_verified());
}

TEST(SpnegoNtlmAcceptor, RefusesWhatItCannotUse) {
  const Oid krb[] = {oid_krb5()};
  auto a = make_acceptor();
  EXPECT_TRUE(a.next_token(encode_neg_token_init(krb, {}), kNow).error().is(STATUS_NOT_SUPPORTED));

  auto c = make_client({"alice", "s3cret", "WG", ""});
  Bytes init = c.initial_token();
  for (size_t n = 0; n < init.size(); n++) {
    auto t = make_acceptor();
    EXPECT_TRUE(t.next_token(ByteView(init).first(n), kNow).error().is(STATUS_INVALID_PARAMETER))
        << n;
  }
  auto big = make_acceptor();
  Bytes huge(kSpnegoMaxTokenSize + 1);
  EXPECT_TRUE(big.next_token(huge, kNow).error().is(STATUS_INVALID_PARAMETER));
  // A NegTokenResp where the NegTokenInit belongs.
  auto out_of_order = make_acceptor();
  EXPECT_FALSE(out_of_order.next_token(encode_neg_token_resp(from_hex("00"), {}), kNow).ok());
}

}  // namespace
}  // namespace smbkit::auth
