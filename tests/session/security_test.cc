// The role-free security core: keys picked by role, nonces, which
// messages feed the preauth hashes.
#include "session/security.h"

#include <gtest/gtest.h>

#include <set>

#include "base/bytes.h"
#include "proto/constants.h"
#include "proto/transform_header.h"

namespace smbkit::session {
namespace {

using namespace proto;

auth::SessionKeys keys() {
  auth::SessionKeys k;
  k.signing_key = from_hex("000102030405060708090a0b0c0d0e0f");
  k.client_to_server_key = from_hex("11111111111111111111111111111111");
  k.server_to_client_key = from_hex("22222222222222222222222222222222");
  return k;
}

TEST(SessionSecurity, RolePicksTheDirection) {
  auto c = SessionSecurity::from_keys(Role::client, 7, SMB2_DIALECT_0311, AES_128_GCM, AES_GMAC, keys());
  auto s = SessionSecurity::from_keys(Role::server, 7, SMB2_DIALECT_0311, AES_128_GCM, AES_GMAC, keys());
  EXPECT_EQ(to_hex(c.seal_key), "11111111111111111111111111111111");
  EXPECT_EQ(to_hex(c.unseal_key), "22222222222222222222222222222222");
  EXPECT_EQ(c.seal_key, s.unseal_key);
  EXPECT_EQ(c.unseal_key, s.seal_key);
  EXPECT_EQ(c.signing_key, s.signing_key);
  EXPECT_EQ(c.sign_alg, auth::SignAlg::aes_gmac);
  EXPECT_EQ(c.session_id, 7u);
}

TEST(SessionSecurity, NoCipherBefore30) {
  auto c = SessionSecurity::from_keys(Role::client, 1, SMB2_DIALECT_0210, AES_128_CCM, 0, keys());
  EXPECT_EQ(c.cipher, 0);
  EXPECT_FALSE(c.can_encrypt());
  EXPECT_EQ(c.sign_alg, auth::SignAlg::hmac_sha256);
}

// MS-SMB2 3.1.4.3: a nonce never repeats under a key.
TEST(NonceSource, NeverRepeats) {
  auto s = SessionSecurity::from_keys(Role::client, 1, SMB2_DIALECT_0311, AES_128_CCM, 0, keys());
  NonceSource n;
  n.set_prefix(0xa1b2c3d4);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; i++) {
    FrameTransform t = n.seal_transform(s);
    ASSERT_EQ(t.nonce_len, 11u);  // CCM
    EXPECT_TRUE(seen.insert(to_hex(ByteView(t.nonce.data(), t.nonce_len))).second);
    EXPECT_EQ(t.key, s.seal_key);
  }
}

TEST(Preauth, WhatFeedsWhichHash) {
  Header h;
  h.Command = SMB2_NEGOTIATE;
  EXPECT_EQ(preauth_feed(h), PreauthFeed::connection_restart);
  h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
  EXPECT_EQ(preauth_feed(h), PreauthFeed::connection);
  h.Command = SMB2_SESSION_SETUP;
  h.Status = STATUS_MORE_PROCESSING_REQUIRED;
  EXPECT_EQ(preauth_feed(h), PreauthFeed::session);
  h.Status = STATUS_SUCCESS;
  EXPECT_EQ(preauth_feed(h), PreauthFeed::none);  // the final response
  h.Flags = 0;
  EXPECT_EQ(preauth_feed(h), PreauthFeed::session);
  h.Command = SMB2_ECHO;
  EXPECT_EQ(preauth_feed(h), PreauthFeed::none);
}

TEST(SessionTable, UnknownSessionIsNotUnsealed) {
  SessionTable t;
  t.add(SessionSecurity::from_keys(Role::server, 5, SMB2_DIALECT_0311, AES_128_GCM, 0, keys()));
  Bytes frame(kTransformHeaderSize + 64);
  store_le32(frame.data(), kTransformProtocolId);
  store_le32(frame.data() + 36, 64);                        // OriginalMessageSize
  store_le16(frame.data() + 42, 1);                         // Flags: encrypted
  store_le64(frame.data() + kTransformSessionIdOffset, 6);  // SessionId: not in the table
  auto r = t.unseal_in_place(MutableByteView(frame));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("unknown session"), std::string::npos);
  store_le64(frame.data() + kTransformSessionIdOffset, 5);  // known, but the tag is garbage
  r = t.unseal_in_place(MutableByteView(frame));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error()));
}

}  // namespace
}  // namespace smbkit::session
