// What a server may settle (client/negotiate_policy.h): every choice one we
// offered, and the session the user asked for or none.
#include "client/negotiate_policy.h"

#include <gtest/gtest.h>

#include "proto/constants.h"
#include "proto/session_setup.h"

namespace smbkit::client {
namespace {

using namespace proto;

NegotiateOffer offer_all() {
  NegotiateOffer o;
  o.dialects = {SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300, SMB2_DIALECT_0302, SMB2_DIALECT_0311};
  o.ciphers = {AES_128_GCM};
  o.signing_algorithms = {AES_CMAC, HMAC_SHA256};
  return o;
}

NegotiateResponse answer_311(uint16_t cipher, uint16_t signing) {
  NegotiateResponse nr;
  nr.DialectRevision = SMB2_DIALECT_0311;
  PreauthIntegrityCapabilities pi;
  pi.HashAlgorithms = {SHA_512};
  pi.Salt = Bytes(32, std::byte{1});
  EncryptionCapabilities ec;
  ec.Ciphers = {cipher};
  SigningCapabilities sc;
  sc.SigningAlgorithms = {signing};
  nr.NegotiateContexts = {*make_negotiate_context(pi), *make_negotiate_context(ec), *make_negotiate_context(sc)};
  return nr;
}

TEST(SettleNegotiate, TakesWhatWeOffered) {
  auto s = settle_negotiate(offer_all(), answer_311(AES_128_GCM, HMAC_SHA256));
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->cipher, AES_128_GCM);
  EXPECT_EQ(s->signing_algorithm, HMAC_SHA256);
}

TEST(SettleNegotiate, RefusesADialectWeDidNotOffer) {
  NegotiateOffer o = offer_all();
  o.dialects = {SMB2_DIALECT_0300, SMB2_DIALECT_0311};
  NegotiateResponse nr;
  nr.DialectRevision = SMB2_DIALECT_0210;
  EXPECT_FALSE(settle_negotiate(o, nr).ok());
}

// A server (or a relay in front of one) that picks a cipher or a signing
// algorithm the user excluded is refused, not followed.
TEST(SettleNegotiate, RefusesACipherOrSigningAlgorithmWeDidNotOffer) {
  auto c = settle_negotiate(offer_all(), answer_311(AES_256_CCM, AES_CMAC));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("cipher"), std::string::npos);
  auto g = settle_negotiate(offer_all(), answer_311(AES_128_GCM, AES_GMAC));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message().find("signing"), std::string::npos);
  // No common cipher (0) is not a choice: the session cannot encrypt.
  auto none = settle_negotiate(offer_all(), answer_311(0, AES_CMAC));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->cipher, 0);
}

SessionAsk named() {
  SessionAsk a;
  a.anonymous = false;
  return a;
}

TEST(SettleSession, ANamedUserMadeGuestOrNullFails) {
  auto g = settle_session(named(), SMB2_SESSION_FLAG_IS_GUEST, true, false, true);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().status, STATUS_LOGON_FAILURE);
  auto n = settle_session(named(), SMB2_SESSION_FLAG_IS_NULL, true, false, true);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().status, STATUS_LOGON_FAILURE);
  SessionAsk allow = named();
  allow.allow_guest = true;
  auto ok = settle_session(allow, SMB2_SESSION_FLAG_IS_GUEST, true, false, true);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->guest);
  EXPECT_FALSE(ok->has_key);
}

TEST(SettleSession, AnAnonymousAskMayBeGuest) {
  SessionAsk a;
  a.anonymous = true;
  auto k = settle_session(a, SMB2_SESSION_FLAG_IS_GUEST, false, false, false);
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(k->guest);
}

TEST(SettleSession, SigningOrSealingAskedForIsNeverDropped) {
  SessionAsk a = named();
  a.allow_guest = true;
  a.require_signing = true;
  EXPECT_FALSE(settle_session(a, SMB2_SESSION_FLAG_IS_GUEST, true, false, true).ok());
  a.require_signing = false;
  a.require_encryption = true;
  EXPECT_FALSE(settle_session(a, 0, true, false, /*dialect_can_encrypt=*/false).ok());
  auto k = settle_session(a, 0, true, false, true);
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(k->encrypt);
  // The server asking for encryption is honoured, or the session fails.
  auto s = settle_session(named(), SMB2_SESSION_FLAG_ENCRYPT_DATA, true, false, true);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->encrypt);
  EXPECT_FALSE(settle_session(named(), SMB2_SESSION_FLAG_ENCRYPT_DATA, true, false, false).ok());
}

}  // namespace
}  // namespace smbkit::client
