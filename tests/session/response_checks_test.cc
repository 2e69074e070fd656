// A response is checked against the request it answers (MS-SMB2 3.2.5.1),
// never against what it claims about itself: its SessionId, its SIGNED
// flag, whether it came sealed. Each case is a lie a relay told a real
// client (tests/integration/hostile_network_test.cc shows them against
// smbd); here the machine is driven byte for byte.
#include <gtest/gtest.h>

#include "auth/sealing.h"
#include "auth/signing.h"
#include "session/client_machine.h"
#include "session/client_machine_test_util.h"

namespace smbkit::session {
namespace {

using namespace proto;
using namespace test_util;

Bytes sign(Bytes msg, const SessionSecurity& s) {
  EXPECT_TRUE(auth::sign_message(s.sign_alg, s.signing_key, msg).ok());
  return msg;
}

Bytes seal(const Bytes& msg, const SessionSecurity& s) {
  std::byte nonce[12] = {std::byte{7}};
  ByteView pieces[1] = {msg};
  auto sealed = auth::encrypt_message(s.cipher, s.unseal_key, s.session_id, ByteView(nonce, 12), pieces);
  EXPECT_TRUE(sealed.ok());
  return *sealed;
}

// A session with signing keys that does not require signing, but can
// encrypt (a share with `smb encrypt = required` encrypts its requests).
SessionSecurity keyed_session(uint64_t id) {
  SessionSecurity s = sealing_session(id);
  s.encrypt_data = false;
  s.sign_alg = auth::SignAlg::aes_cmac;
  s.signing_key = from_hex("000102030405060708090a0b0c0d0e0f");
  return s;
}

void expect_violation(ClientMachine& m, const Bytes& frame, uint32_t status) {
  std::vector<Response> out;
  auto r = m.receive(frame, out);
  ASSERT_FALSE(r.ok()) << "accepted";
  EXPECT_EQ(r.error().status, status) << r.error().message();
  EXPECT_TRUE(is_security_violation(r.error())) << r.error().message();
  EXPECT_TRUE(out.empty());
}

TEST(ResponseChecks, AnUnsignedAnswerClaimingSessionZeroIsRefusedOnASigningSession) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  OutFrame f;
  auto req = make(SMB2_READ, 9);
  uint64_t mid = *m.send(req, f);
  // Before: the session was looked up by the response's own SessionId (0:
  // none), so nothing was checked.
  expect_violation(m, response(SMB2_READ, mid, 1, 0, /*session_id=*/0), STATUS_ACCESS_DENIED);
}

TEST(ResponseChecks, AnAnswerForAnotherSessionIsRefusedEvenIfThatSessionSignedIt) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  SessionSecurity other = signing_session(10);
  other.signing_key = from_hex("0f0e0d0c0b0a09080706050403020100");
  m.add_session(other);
  OutFrame f;
  auto req = make(SMB2_READ, 9);
  uint64_t mid = *m.send(req, f);
  expect_violation(m, sign(response(SMB2_READ, mid, 1, 0, 10), other), STATUS_ACCESS_DENIED);
}

TEST(ResponseChecks, AnUnsignedAnswerToASignedRequestIsRefused) {
  ClientMachine m = negotiated();
  SessionSecurity s = keyed_session(9);
  m.add_session(s);
  OutFrame f;
  // A 3.1.1 TREE_CONNECT is signed although the session does not require
  // signing: its answer's ShareFlags decide whether we encrypt.
  auto req = make(SMB2_TREE_CONNECT, 9);
  req.sign = true;
  uint64_t mid = *m.send(req, f);
  expect_violation(m, response(SMB2_TREE_CONNECT, mid, 1, 0, 9), STATUS_INVALID_SIGNATURE);

  // Signed, it passes.
  auto again = make(SMB2_TREE_CONNECT, 9);
  again.sign = true;
  uint64_t mid2 = *m.send(again, f);
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(sign(response(SMB2_TREE_CONNECT, mid2, 1, 0, 9), s), out).ok());
  ASSERT_EQ(out.size(), 1u);
  // An unsigned answer to an unsigned request on a session that does not
  // require signing is what such a session is.
  auto plain = make(SMB2_ECHO, 9);
  uint64_t mid3 = *m.send(plain, f);
  out.clear();
  EXPECT_TRUE(m.receive(response(SMB2_ECHO, mid3, 1, 0, 9), out).ok());
}

TEST(ResponseChecks, APlainAnswerToASealedRequestIsRefused) {
  ClientMachine m = negotiated();
  SessionSecurity s = keyed_session(9);
  m.add_session(s);
  OutFrame f;
  // The tree encrypts (SMB2_SHAREFLAG_ENCRYPT_DATA), the session does not.
  auto req = make(SMB2_READ, 9);
  req.encrypt = true;
  uint64_t mid = *m.send(req, f);
  EXPECT_EQ(load_le32(f.head.data() + 4), kTransformProtocolId);
  expect_violation(m, response(SMB2_READ, mid, 1, 0, 9), STATUS_ACCESS_DENIED);
  // Signing it does not help: it had to come sealed.
  auto again = make(SMB2_READ, 9);
  again.encrypt = true;
  uint64_t mid2 = *m.send(again, f);
  expect_violation(m, sign(response(SMB2_READ, mid2, 1, 0, 9), s), STATUS_ACCESS_DENIED);
  // Sealed, it passes.
  auto third = make(SMB2_READ, 9);
  third.encrypt = true;
  uint64_t mid3 = *m.send(third, f);
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(seal(response(SMB2_READ, mid3, 1, 0, 9), s), out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].encrypted);
}

TEST(ResponseChecks, APlainInterimAnswerToASealedRequestIsRefused) {
  ClientMachine m = negotiated();
  m.add_session(sealing_session(5));
  OutFrame f;
  auto req = make(SMB2_READ, 5);
  uint64_t mid = *m.send(req, f);
  // A relay cannot keep a sealed request waiting with interim answers of
  // its own.
  expect_violation(m, response(SMB2_READ, mid, 1, STATUS_PENDING, 5, SMB2_FLAGS_ASYNC_COMMAND, 77),
                   STATUS_ACCESS_DENIED);
}

TEST(ResponseChecks, AnAnswerSealedByAnotherSessionIsRefused) {
  ClientMachine m = negotiated();
  m.add_session(sealing_session(5));
  SessionSecurity other = sealing_session(6);
  m.add_session(other);
  OutFrame f;
  auto req = make(SMB2_READ, 5);
  uint64_t mid = *m.send(req, f);
  // The message claims session 5 but the transform is session 6's.
  Bytes msg = response(SMB2_READ, mid, 1, 0, 5);
  expect_violation(m, seal(msg, other), STATUS_ACCESS_DENIED);
}

TEST(ResponseChecks, AnUnsignedSessionDeletedIsALostSessionNotAVerdict) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  OutFrame f;
  auto req = make(SMB2_READ, 9);
  uint64_t mid = *m.send(req, f);
  std::vector<Response> out;
  auto r = m.receive(response(SMB2_READ, mid, 1, STATUS_USER_SESSION_DELETED, 9), out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_USER_SESSION_DELETED);
  EXPECT_FALSE(is_security_violation(r.error()));
}

// smbd and smbkitd keep SMB2_FLAGS_SIGNED on the answer without a
// signature they cannot make: still the lost session, not a bad signature.
TEST(ResponseChecks, AFlaggedUnsignedSessionDeletedIsALostSessionToo) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  OutFrame f;
  auto req = make(SMB2_READ, 9);
  uint64_t mid = *m.send(req, f);
  std::vector<Response> out;
  auto r = m.receive(response(SMB2_READ, mid, 1, STATUS_USER_SESSION_DELETED, 9, SMB2_FLAGS_SIGNED), out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_USER_SESSION_DELETED);
  EXPECT_FALSE(is_security_violation(r.error()));
}

TEST(ResponseChecks, ASessionSetupNamesTheSessionItCreates) {
  ClientMachine m = negotiated();
  OutFrame f;
  auto req = make(SMB2_SESSION_SETUP, 0);
  uint64_t mid = *m.send(req, f);
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(response(SMB2_SESSION_SETUP, mid, 1, STATUS_MORE_PROCESSING_REQUIRED, 0x55), out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].hdr.SessionId, 0x55u);
}

TEST(ResponseChecks, ADecryptionFailureIsAViolation) {
  ClientMachine m = negotiated();
  SessionSecurity s = sealing_session(5);
  m.add_session(s);
  OutFrame f;
  auto req = make(SMB2_READ, 5);
  uint64_t mid = *m.send(req, f);
  Bytes sealed = seal(response(SMB2_READ, mid, 1, 0, 5), s);
  sealed.back() ^= std::byte{1};
  std::vector<Response> out;
  auto r = m.receive(sealed, out);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error())) << r.error().message();
}

}  // namespace
}  // namespace smbkit::session
