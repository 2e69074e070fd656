// Server-wide sessions: connections of one server (Wires sharing a
// ServerState) and the rules that cross them. A session names its previous
// one to end it (MS-SMB2 3.3.5.5.3); a session re-authenticates as anyone,
// and a failed re-authentication ends it; a connection binds to a session
// of another (multichannel, 3.3.5.5.2) and then reaches its trees and
// opens; a session outlives its first connection while it has another
// channel; and the refusals of a binding, each with its status.
#include <gtest/gtest.h>

#include <set>

#include "conn_wire.h"
#include "proto/ioctl.h"
#include "proto/logoff.h"
#include "server/sessions.h"
#include "support/temp_dir.h"

namespace smbkit::server {
namespace {

using namespace proto;
using namespace wire;

// A client that asks for multichannel (SMB2_GLOBAL_CAP_MULTI_CHANNEL).
client::ConnectionOptions dialect(uint16_t d, bool multichannel = true) {
  client::ConnectionOptions o;
  o.dialects = {d};
  o.multichannel = multichannel;
  return o;
}

// Two connections of one server, alice logged on the first and connected
// to "share".
struct Pair {
  testing::TempDir dir;
  Wire a{make_config(dir.path())};
  std::unique_ptr<Wire> b;
  uint32_t tree = 0;

  explicit Pair(uint16_t d = SMB2_DIALECT_0311, uint16_t d2 = 0, std::vector<uint16_t> b_signing = {}) {
    EXPECT_TRUE(a.negotiate(dialect(d)).ok());
    auto f = a.login(kUser, kPassword);
    EXPECT_TRUE(f.ok()) << f.error().message();
    auto t = a.connect("share");
    EXPECT_EQ(t.status, STATUS_SUCCESS);
    tree = t.tree_id;
    b = std::make_unique<Wire>(a.state);
    auto bo = dialect(d2 ? d2 : d);
    bo.signing_algorithms = std::move(b_signing);
    EXPECT_TRUE(b->negotiate(bo).ok());
  }
  // Binds b to a's session; the status the binding ended with.
  uint32_t bind(const std::string& user = kUser, const std::string& pw = kPassword) {
    auto f = b->login(user, pw, {.bind = &a.keys});
    if (f.ok()) return STATUS_SUCCESS;
    return f.error().status;
  }
};

TEST(PreviousSession, EndsTheSameUsersSessionOnAnotherConnection) {
  Pair p;
  const uint64_t old_id = p.a.session_id;
  ASSERT_EQ(p.a.create(p.tree, "f.txt"), STATUS_SUCCESS);
  auto f = p.b->login(kUser, kPassword, {.previous = old_id});
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_NE(p.b->session_id, old_id);
  // The old session's requests find it gone on its own connection (and
  // the answers cannot be signed: the client drops its keys too).
  p.a.client.remove_session(old_id);
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_USER_SESSION_DELETED);
  EXPECT_EQ(p.a.connect("share").status, STATUS_USER_SESSION_DELETED);
  EXPECT_EQ(p.b->connect("share").status, STATUS_SUCCESS);
}

// A client reconnecting after a restart names its old session id: a new
// run must not have handed that id to someone else's session meanwhile
// (the same user's other client would lose its session, locks and all).
TEST(PreviousSession, IdsOfTwoRunsDoNotMeet) {
  testing::TempDir dir;
  auto snap = make_snapshot(make_config(dir.path()), UserDb{});
  ASSERT_TRUE(snap.ok());
  ServerState run1(*snap, FileServiceOptions{}), run2(*snap, FileServiceOptions{});
  EXPECT_NE(run1.next_session_id(), run2.next_session_id());
}

TEST(PreviousSession, LeavesAnotherUsersSessionAlone) {
  Pair p;
  auto f = p.b->login("bob", "bob-Pw1", {.previous = p.a.session_id});
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_SUCCESS);
}

TEST(Reauth, AsAnotherUserGoesOnAsThatUser) {
  Pair p;
  auto f = p.a.login("bob", "bob-Pw1", {.reauth = true});
  ASSERT_TRUE(f.ok()) << f.error().message();
  // Same session, same tree; now bob's: alice's share is closed to it.
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_SUCCESS);
  EXPECT_EQ(p.a.connect("alice_only").status, STATUS_ACCESS_DENIED);
  ASSERT_TRUE(p.a.login(kUser, kPassword, {.reauth = true}).ok());
  EXPECT_EQ(p.a.connect("alice_only").status, STATUS_SUCCESS);
}

TEST(Reauth, AsAnonymousIsANullSession) {
  Pair p;
  auto f = p.a.login("", "", {.reauth = true});
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(*f & SMB2_SESSION_FLAG_IS_NULL);
  EXPECT_EQ(p.a.connect("share").status, STATUS_ACCESS_DENIED);  // not guest ok
  EXPECT_EQ(p.a.connect("public").status, STATUS_SUCCESS);
}

TEST(Reauth, UnsignedOnASigningSessionIsDeniedAndChangesNothing) {
  Pair p;
  auto f = p.a.login("bob", "bob-Pw1", {.reauth = true, .unsigned_reauth = true});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(p.a.connect("alice_only").status, STATUS_SUCCESS);
}

TEST(Reauth, AFailureEndsTheSession) {
  Pair p;
  auto f = p.a.login(kUser, "wrong", {.reauth = true});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().status, STATUS_LOGON_FAILURE);
  p.a.client.remove_session(p.a.session_id);
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_USER_SESSION_DELETED);
  EXPECT_EQ(p.a.state->sessions().size(), 0u);
}

TEST(Binding, AChannelReachesTheSessionsTreesAndOutlivesTheFirst) {
  Pair p;
  ASSERT_EQ(p.bind(), STATUS_SUCCESS);
  EXPECT_EQ(p.b->session_id, p.a.session_id);
  // The tree connected on the first connection serves the second.
  EXPECT_EQ(p.b->create(p.tree, "f.txt"), STATUS_SUCCESS);
  // Losing the first connection leaves the session to the second.
  p.a.conn->shutdown();
  EXPECT_EQ(p.b->create(p.tree, "g.txt"), STATUS_SUCCESS);
  EXPECT_EQ(p.a.state->sessions().size(), 1u);
  // ...and losing the last ends it.
  p.b->conn->shutdown();
  EXPECT_EQ(p.a.state->sessions().size(), 0u);
}

// MS-SMB2 3.3.5.2.4: whether a request must be signed is the session's
// (Session.SigningRequired), on every channel: a session that does not
// sign takes an unsigned request on a bound channel as it does on its
// first (smbtorture's smb2.replay.replay3 sends one), and a signing
// session refuses it there as well.
TEST(Binding, AChannelSignsWhenItsSessionDoes) {
  for (bool signing : {false, true}) {
    SCOPED_TRACE(signing ? "a signing session" : "a session that does not sign");
    testing::TempDir dir;
    Wire a{make_config(dir.path())};
    ASSERT_TRUE(a.negotiate(dialect(SMB2_DIALECT_0302)).ok());  // 3.1.1 signs TREE_CONNECT
    wire::Setup how;
    how.sign = signing;
    ASSERT_TRUE(a.login(kUser, kPassword, how).ok());
    auto t = a.connect("share");
    ASSERT_EQ(t.status, STATUS_SUCCESS);
    Wire b(a.state);
    ASSERT_TRUE(b.negotiate(dialect(SMB2_DIALECT_0302)).ok());
    wire::Setup bind;
    bind.sign = false;
    bind.bind = &a.keys;
    ASSERT_TRUE(b.login(kUser, kPassword, bind).ok());
    EXPECT_EQ(b.create(t.tree_id, "f.txt"), signing ? STATUS_ACCESS_DENIED : STATUS_SUCCESS);
    EXPECT_EQ(a.create(t.tree_id, "g.txt"), STATUS_SUCCESS);
  }
}

TEST(Binding, LogoffOnOneChannelEndsTheSessionOnAll) {
  Pair p;
  ASSERT_EQ(p.bind(), STATUS_SUCCESS);
  EXPECT_EQ(p.b->status_of(SMB2_LOGOFF, 0, [](ByteWriter& w) { return encode_logoff_request(LogoffRequest{}, w); }),
            STATUS_SUCCESS);
  p.a.client.remove_session(p.a.session_id);
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_USER_SESSION_DELETED);
}

TEST(Binding, ByAnotherUserIsRefused) {
  Pair p;
  EXPECT_EQ(p.bind("bob", "bob-Pw1"), STATUS_ACCESS_DENIED);
  EXPECT_EQ(p.b->create(p.tree, "f.txt"), STATUS_USER_SESSION_DELETED);
  // The session goes on, and its user may still bind.
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_SUCCESS);
  EXPECT_EQ(p.bind(), STATUS_SUCCESS);
}

TEST(Binding, WithAWrongPasswordIsALogonFailure) {
  Pair p;
  EXPECT_EQ(p.bind(kUser, "wrong"), STATUS_LOGON_FAILURE);
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_SUCCESS);
}

TEST(Binding, OnA2xConnectionIsNotAccepted) {
  Pair p(SMB2_DIALECT_0300, SMB2_DIALECT_0210);
  EXPECT_EQ(p.bind(), STATUS_REQUEST_NOT_ACCEPTED);
}

TEST(Binding, ToASessionOfAnotherDialectIsInvalid) {
  Pair p(SMB2_DIALECT_0302, SMB2_DIALECT_0311, {AES_CMAC});
  EXPECT_EQ(p.bind(), STATUS_INVALID_PARAMETER);
}

// A 3.1.1 connection signing with AES-GMAC cannot sign for a session that
// signs with AES-CMAC (Windows' and smbd's answer).
TEST(Binding, WithAnotherSigningAlgorithmIsNotSupported) {
  Pair p(SMB2_DIALECT_0302, SMB2_DIALECT_0311);
  EXPECT_EQ(p.b->srv.signing_algorithm, AES_GMAC);
  EXPECT_EQ(p.bind(), STATUS_NOT_SUPPORTED);
}

TEST(Binding, ToAnUnknownSessionFindsItDeleted) {
  Pair p;
  session::SessionSecurity bogus = p.a.keys;
  bogus.session_id = p.a.session_id + 1000;
  auto f = p.b->login(kUser, kPassword, {.bind = &bogus});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().status, STATUS_USER_SESSION_DELETED);
}

TEST(Binding, WithAWrongSignatureIsDenied) {
  Pair p;
  session::SessionSecurity forged = p.a.keys;
  forged.signing_key = SecretBytes(Bytes(forged.signing_key.size(), std::byte{7}));
  auto f = p.b->login(kUser, kPassword, {.bind = &forged});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(p.a.create(p.tree, "f.txt"), STATUS_SUCCESS);
}

TEST(Binding, IsOffWithoutMultichannel) {
  testing::TempDir dir;
  Config cfg = make_config(dir.path());
  cfg.global.multi_channel = false;
  Wire a(std::move(cfg));
  ASSERT_TRUE(a.negotiate(dialect(SMB2_DIALECT_0311)).ok());
  ASSERT_TRUE(a.login(kUser, kPassword).ok());
  Wire b(a.state);
  ASSERT_TRUE(b.negotiate(dialect(SMB2_DIALECT_0311)).ok());
  EXPECT_FALSE(b.srv.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL);
  auto f = b.login(kUser, kPassword, {.bind = &a.keys});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().status, STATUS_REQUEST_NOT_ACCEPTED);
}

// MS-SMB2 3.3.5.4: the server grants multichannel only to a client that
// asks for it, and binds no channel to a connection that did not.
TEST(Binding, NeedsTheClientToAskForMultichannel) {
  testing::TempDir dir;
  Wire a(make_config(dir.path()));
  ASSERT_TRUE(a.negotiate(dialect(SMB2_DIALECT_0311)).ok());
  EXPECT_TRUE(a.srv.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL);
  ASSERT_TRUE(a.login(kUser, kPassword).ok());
  Wire b(a.state);
  ASSERT_TRUE(b.negotiate(dialect(SMB2_DIALECT_0311, false)).ok());
  EXPECT_FALSE(b.srv.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL);
  auto f = b.login(kUser, kPassword, {.bind = &a.keys});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().status, STATUS_REQUEST_NOT_ACCEPTED);
}

// The channels of a session seal with one key: no two connections of a
// server may seal with nonces that meet, in the 24 bits of prefix an
// AES-CCM nonce has room for.
TEST(ServerSessionChannels, ConnectionsSealWithDistinctNoncePrefixes) {
  testing::TempDir dir;
  auto snap = make_snapshot(make_config(dir.path()), UserDb{});
  ASSERT_TRUE(snap.ok());
  ServerState st(*snap, FileServiceOptions{});
  std::set<uint32_t> seen;
  for (int i = 0; i < 10000; i++) seen.insert(st.nonce_prefix_for(st.next_conn_id()) & 0xffffff);
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(ServerSessionChannels, AreBounded) {
  testing::TempDir dir;
  auto snap = make_snapshot(make_config(dir.path()), UserDb{});
  ASSERT_TRUE(snap.ok());
  ServerState st(*snap, FileServiceOptions{});
  SessionParams sp;
  sp.id = 1;
  auto s = ServerSession::make(std::move(sp), st.files());
  for (uint64_t c = 1; c <= ServerSession::kMaxChannels; c++) ASSERT_EQ(s->add_channel(c, {}), ServerSession::Bind::ok);
  EXPECT_EQ(s->add_channel(100, {}), ServerSession::Bind::full);
  EXPECT_EQ(s->add_channel(1, {}), ServerSession::Bind::already);
  for (uint64_t c = 1; c < ServerSession::kMaxChannels; c++) EXPECT_FALSE(s->remove_channel(c));
  EXPECT_TRUE(s->remove_channel(ServerSession::kMaxChannels));
}

TEST(NetworkInterfaces, ListTheServersAddresses) {
  Pair p;
  NetworkInterfaceInfo lo;
  lo.IfIndex = 1;
  lo.LinkSpeed = 1000000000;
  lo.Address = {std::byte{127}, std::byte{0}, std::byte{0}, std::byte{1}};
  p.a.state->set_interfaces({lo});
  IoctlRequest q;
  q.CtlCode = FSCTL_QUERY_NETWORK_INTERFACE_INFO;
  q.FileId = kNoFileId;
  q.Flags = SMB2_0_IOCTL_IS_FSCTL;
  q.MaxOutputResponse = 0x10000;
  auto req = client::make_request(SMB2_IOCTL, p.a.session_id, p.tree,
                                  [&](ByteWriter& w) { return encode_ioctl_request(q, w); });
  ASSERT_TRUE(req.ok());
  auto rs = p.a.round(*req);
  ASSERT_TRUE(rs.ok() && rs->size() == 1);
  ASSERT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
  auto ir = decode_ioctl_response((*rs)[0].msg());
  ASSERT_TRUE(ir.ok());
  auto list = decode_network_interface_info(ir->Output);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0], lo);
  // On a file it is not.
  q.FileId = FileId{1, 2};
  EXPECT_EQ(p.a.status_of(SMB2_IOCTL, p.tree, [&](ByteWriter& w) { return encode_ioctl_request(q, w); }),
            STATUS_INVALID_PARAMETER);
}

}  // namespace
}  // namespace smbkit::server
