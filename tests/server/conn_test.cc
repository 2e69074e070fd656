// The server's connection in memory: the client's own NEGOTIATE,
// SESSION_SETUP and request builders and its connection machine against
// server::Conn, frames passed as bytes and file commands run inline. Each
// test checks one rule of the connection: what runs before NEGOTIATE and
// authentication, guests and valid users, shares that require sealing,
// LOGOFF and TREE_DISCONNECT, VALIDATE_NEGOTIATE, and the bounds on what an
// unauthenticated client can make the server keep.
#include "server/conn.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "auth/spnego_initiator.h"
#include "client/connection.h"
#include "client/negotiate_policy.h"
#include "conn_wire.h"
#include "proto/change_notify.h"
#include "proto/close.h"
#include "proto/create.h"
#include "proto/echo.h"
#include "proto/fscc_file_info.h"
#include "proto/ioctl.h"
#include "proto/lock.h"
#include "proto/logoff.h"
#include "proto/negotiate.h"
#include "proto/query_info.h"
#include "proto/session_setup.h"
#include "proto/tree_connect.h"
#include "proto/tree_disconnect.h"
#include "session/client_machine.h"
#include "support/temp_dir.h"

namespace smbkit::server {
namespace {

using namespace proto;
using session::OutFrame;
using namespace wire;

struct Case {
  uint16_t dialect;
  uint16_t cipher;
};

class EveryDialect : public ::testing::TestWithParam<Case> {};

TEST_P(EveryDialect, AuthenticatesConnectsAndAnswersSignedAndSealed) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  client::ConnectionOptions opts;
  opts.dialects = {GetParam().dialect};
  if (GetParam().cipher) opts.ciphers = {GetParam().cipher};
  ASSERT_TRUE(w.negotiate(opts).ok());
  EXPECT_EQ(w.srv.dialect, GetParam().dialect);
  if (GetParam().dialect == SMB2_DIALECT_0311) {
    EXPECT_EQ(w.srv.cipher, GetParam().cipher);
  }
  auto flags = w.login(kUser, kPassword);
  ASSERT_TRUE(flags.ok()) << flags.error().message();
  EXPECT_EQ(*flags, 0);
  auto t = w.connect("share");
  ASSERT_EQ(t.status, STATUS_SUCCESS);
  EXPECT_EQ(t.rsp.ShareType, SMB2_SHARE_TYPE_DISK);
  // Signed, and (3.x) sealed, requests are answered.
  EXPECT_EQ(w.status_of(SMB2_ECHO, 0, [](ByteWriter& b) { return encode_echo_request(EchoRequest{}, b); }),
            STATUS_SUCCESS);
  if (GetParam().dialect >= SMB2_DIALECT_0300) {
    auto req = client::make_request(SMB2_ECHO, w.session_id, 0,
                                    [](ByteWriter& b) { return encode_echo_request(EchoRequest{}, b); });
    req->encrypt = true;
    auto rs = w.round(*req);
    ASSERT_TRUE(rs.ok()) << rs.error().message();
    ASSERT_EQ(rs->size(), 1u);
    EXPECT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
    EXPECT_TRUE((*rs)[0].encrypted);
  }
}

INSTANTIATE_TEST_SUITE_P(All, EveryDialect,
                         ::testing::Values(Case{SMB2_DIALECT_0202, 0}, Case{SMB2_DIALECT_0210, 0},
                                           Case{SMB2_DIALECT_0300, 0}, Case{SMB2_DIALECT_0302, 0},
                                           Case{SMB2_DIALECT_0311, AES_128_CCM}, Case{SMB2_DIALECT_0311, AES_128_GCM},
                                           Case{SMB2_DIALECT_0311, AES_256_CCM}, Case{SMB2_DIALECT_0311, AES_256_GCM}),
                         [](const auto& i) {
                           char b[32];
                           std::snprintf(b, sizeof b, "d%04x_c%u", i.param.dialect, i.param.cipher);
                           return std::string(b);
                         });

TEST(ConnRules, NothingButNegotiateBeforeNegotiate) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  auto req = client::make_request(SMB2_ECHO, 0, 0, [](ByteWriter& b) { return encode_echo_request(EchoRequest{}, b); });
  OutFrame f;
  ASSERT_TRUE(w.client.send(*req, f).ok());
  EXPECT_FALSE(w.deliver(f).ok());
}

// An SMB1 NEGOTIATE naming `dialects` (MS-CIFS 2.2.4.52.1), as the first frame.
Bytes smb1_negotiate(std::initializer_list<const char*> dialects) {
  Bytes m(kSmb1HeaderSize, std::byte{0});
  store_le32(m.data(), kSmb1ProtocolId);
  m[4] = std::byte{kSmb1ComNegotiate};
  Bytes names;
  for (const char* d : dialects) {
    names.push_back(std::byte{0x02});
    for (const char* c = d; *c; c++) names.push_back(std::byte(*c));
    names.push_back(std::byte{0});
  }
  m.push_back(std::byte{0});  // WordCount
  m.push_back(std::byte(names.size() & 0xff));
  m.push_back(std::byte(names.size() >> 8));
  m.insert(m.end(), names.begin(), names.end());
  return m;
}

// The one SMB2 NEGOTIATE response the server sent.
NegotiateResponse sent_negotiate(InlineIo& io, Header* h) {
  EXPECT_EQ(io.sent.size(), 1u);
  Bytes b(io.sent.at(0).head.begin() + session::kDirectTcpHeader, io.sent.at(0).head.end());
  *h = decode_header(b).value();
  return decode_negotiate_response(b).value();
}

TEST(ConnRules, MultiProtocolNegotiateAnswersTheSmb2Wildcard) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.conn->on_frame(smb1_negotiate({"NT LM 0.12", "SMB 2.002", "SMB 2.???"})).ok());
  Header h;
  NegotiateResponse r = sent_negotiate(w.io, &h);
  EXPECT_EQ(h.MessageId, 0u);
  EXPECT_EQ(h.Command, SMB2_NEGOTIATE);
  EXPECT_EQ(r.DialectRevision, SMB2_DIALECT_WILDCARD);
}

TEST(ConnRules, MultiProtocolNegotiateSettlesSmb2002Alone) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.conn->on_frame(smb1_negotiate({"NT LM 0.12", "SMB 2.002"})).ok());
  Header h;
  EXPECT_EQ(sent_negotiate(w.io, &h).DialectRevision, SMB2_DIALECT_0202);
}

TEST(ConnRules, AnSmb1OnlyClientIsNotAnswered) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  EXPECT_FALSE(w.conn->on_frame(smb1_negotiate({"NT LM 0.12"})).ok());
  EXPECT_TRUE(w.io.sent.empty());
  Bytes truncated = smb1_negotiate({"SMB 2.???"});
  truncated.pop_back();  // the name's NUL
  Wire w2(make_config(d.path()));
  EXPECT_FALSE(w2.conn->on_frame(truncated).ok());
}

TEST(ConnRules, NoDialectInCommonIsNotSupported) {
  testing::TempDir d;
  Config cfg = make_config(d.path());
  cfg.global.min_protocol = SMB2_DIALECT_0300;
  Wire w(cfg);
  client::ConnectionOptions opts;
  opts.dialects = {SMB2_DIALECT_0202, SMB2_DIALECT_0210};
  auto r = w.negotiate(opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_NOT_SUPPORTED);
}

TEST(ConnRules, FileCommandsNeedASession) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  EXPECT_EQ(w.create(1, "x"), STATUS_USER_SESSION_DELETED);
  EXPECT_EQ(w.connect("share").status, STATUS_USER_SESSION_DELETED);
}

TEST(ConnRules, WrongPasswordIsLogonFailure) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  auto r = w.login(kUser, "not-the-password");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_LOGON_FAILURE);
}

TEST(ConnRules, UnknownUserIsRefusedUnlessMappedToGuest) {
  testing::TempDir d;
  {
    Wire w(make_config(d.path()));
    ASSERT_TRUE(w.negotiate().ok());
    auto r = w.login("mallory", "whatever");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().status, STATUS_LOGON_FAILURE);
  }
  Config cfg = make_config(d.path());
  cfg.global.map_to_guest = MapToGuest::bad_user;
  Wire w(cfg);
  ASSERT_TRUE(w.negotiate().ok());
  auto r = w.login("mallory", "whatever");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(*r & SMB2_SESSION_FLAG_IS_GUEST);
  // A guest reaches guest-ok shares and IPC$ only.
  EXPECT_EQ(w.connect("share").status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(w.connect("public").status, STATUS_SUCCESS);
  EXPECT_EQ(w.connect("IPC$").status, STATUS_SUCCESS);
}

TEST(ConnRules, ValidUsersAndUnknownShares) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login("bob", "bob-Pw1").ok());
  EXPECT_EQ(w.connect("alice_only").status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(w.connect("share").status, STATUS_SUCCESS);
  EXPECT_EQ(w.connect("nosuch").status, STATUS_BAD_NETWORK_NAME);

  Wire a(make_config(d.path()));
  ASSERT_TRUE(a.negotiate().ok());
  ASSERT_TRUE(a.login(kUser, kPassword).ok());
  EXPECT_EQ(a.connect("alice_only").status, STATUS_SUCCESS);  // names compared without case
}

TEST(ConnRules, ASealedShareTakesSealedRequestsOnly) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  auto t = w.connect("secure");
  ASSERT_EQ(t.status, STATUS_SUCCESS);
  EXPECT_TRUE(t.rsp.ShareFlags & SMB2_SHAREFLAG_ENCRYPT_DATA);
  EXPECT_EQ(w.create(t.tree_id, "plain.txt", false), STATUS_ACCESS_DENIED);
  EXPECT_FALSE(std::filesystem::exists(d.path() + "/secure/plain.txt"));
  EXPECT_EQ(w.create(t.tree_id, "sealed.txt", true), STATUS_SUCCESS);
}

TEST(ConnRules, ASealedShareRefusesAClientThatCannotSeal) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  client::ConnectionOptions opts;
  opts.dialects = {SMB2_DIALECT_0210};
  ASSERT_TRUE(w.negotiate(opts).ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  EXPECT_EQ(w.connect("secure").status, STATUS_ACCESS_DENIED);
}

// A tree sees the directory at the share's path when it connects, as with
// smbd: here the directory is replaced after the server started (a file
// system mounted on the path acts the same).
TEST(ConnRules, ATreeOpensTheShareDirectoryAtConnect) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  std::filesystem::rename(d.path() + "/share", d.path() + "/old-share");
  std::filesystem::create_directory(d.path() + "/share");
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  auto t = w.connect("share");
  ASSERT_EQ(t.status, STATUS_SUCCESS);
  EXPECT_EQ(w.create(t.tree_id, "where.txt"), STATUS_SUCCESS);
  EXPECT_TRUE(std::filesystem::exists(d.path() + "/share/where.txt"));
  EXPECT_FALSE(std::filesystem::exists(d.path() + "/old-share/where.txt"));
  // A share whose directory is gone is not there.
  std::filesystem::remove_all(d.path() + "/share");
  EXPECT_EQ(w.connect("share").status, STATUS_BAD_NETWORK_NAME);
}

TEST(ConnRules, LogoffAndTreeDisconnectForget) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  auto t = w.connect("share");
  ASSERT_EQ(t.status, STATUS_SUCCESS);
  EXPECT_EQ(w.create(t.tree_id, "a.txt"), STATUS_SUCCESS);
  EXPECT_EQ(w.status_of(SMB2_TREE_DISCONNECT, t.tree_id,
                        [](ByteWriter& b) { return encode_tree_disconnect_request(TreeDisconnectRequest{}, b); }),
            STATUS_SUCCESS);
  EXPECT_EQ(w.create(t.tree_id, "a.txt"), STATUS_NETWORK_NAME_DELETED);
  EXPECT_EQ(w.status_of(SMB2_LOGOFF, 0, [](ByteWriter& b) { return encode_logoff_request(LogoffRequest{}, b); }),
            STATUS_SUCCESS);
  // The session is gone: its requests cannot even be signed for it.
  w.client.remove_session(w.session_id);
  EXPECT_EQ(w.connect("share").status, STATUS_USER_SESSION_DELETED);
}

TEST(ConnRules, ValidateNegotiateMatchesOrEndsTheConnection) {
  testing::TempDir d;
  for (bool tamper : {false, true}) {
    Wire w(make_config(d.path()));
    client::ConnectionOptions opts;
    opts.dialects = {SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300};
    ASSERT_TRUE(w.negotiate(opts).ok());
    ASSERT_TRUE(w.login(kUser, kPassword).ok());
    auto t = w.connect("share");
    ASSERT_EQ(t.status, STATUS_SUCCESS);
    ValidateNegotiateInfoRequest v;
    v.Capabilities = w.offer.capabilities;
    v.Guid = w.offer.client_guid;
    v.SecurityMode = w.offer.security_mode;
    v.Dialects = w.offer.dialects;
    if (tamper) v.Dialects = {SMB2_DIALECT_0202};  // as if a man in the middle had cut the list
    IoctlRequest io;
    io.CtlCode = FSCTL_VALIDATE_NEGOTIATE_INFO;
    io.FileId = {~0ull, ~0ull};
    io.Input = encode_validate_negotiate_info_request(v).value();
    io.MaxOutputResponse = 64;
    io.Flags = SMB2_0_IOCTL_IS_FSCTL;
    auto req = client::make_request(SMB2_IOCTL, w.session_id, t.tree_id,
                                    [&](ByteWriter& b) { return encode_ioctl_request(io, b); });
    req->sign = true;
    OutFrame f;
    ASSERT_TRUE(w.client.send(*req, f).ok());
    auto rs = w.deliver(f);
    if (!tamper) {
      ASSERT_TRUE(rs.ok()) << rs.error().message();
      ASSERT_EQ(rs->size(), 1u);
      ASSERT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
      auto ir = decode_ioctl_response((*rs)[0].msg()).value();
      auto vr = decode_validate_negotiate_info_response(ir.Output).value();
      EXPECT_EQ(vr.Dialect, SMB2_DIALECT_0300);
      EXPECT_EQ(vr.Guid, w.srv.server_guid);
    } else {
      EXPECT_FALSE(rs.ok());  // the connection ends
    }
  }
}

TEST(ConnRules, SessionsInSetupAreBounded) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  std::vector<uint32_t> statuses;
  for (int i = 0; i < 20; i++) {
    auth::NtlmCredentials nc;
    nc.user = kUser;
    nc.password = kPassword;
    auth::SpnegoNtlmClient initiator(nc);
    auto req = client::session_setup_request(0, true, initiator.initial_token(), 0);
    auto rs = w.round(*req);
    ASSERT_TRUE(rs.ok());
    statuses.push_back((*rs)[0].hdr.Status);
  }
  EXPECT_EQ(statuses.front(), STATUS_MORE_PROCESSING_REQUIRED);
  EXPECT_EQ(statuses.back(), STATUS_INSUFFICIENT_RESOURCES);
}

// Requests that wait (MS-SMB2 3.3.4.2, 3.3.5.16): LOCKs run through a
// test PendingCall that finishes when the test says so.
struct TestCall : PendingCall {
  std::function<void(FileReply)> done;
  bool started = false, cancelled = false;
  void start(std::function<void(FileReply)> d) override {
    started = true;
    done = std::move(d);
    if (cancelled) finish(STATUS_CANCELLED);
  }
  void cancel() override {
    cancelled = true;
    if (done) finish(STATUS_CANCELLED);
  }
  void finish(uint32_t status) {
    auto d = std::move(done);
    done = nullptr;
    if (!d) return;
    FileReply r;
    r.status = status;
    if (status == STATUS_SUCCESS) {
      ByteWriter w(r.body);
      EXPECT_TRUE(encode_lock_response(LockResponse{}, w).ok());
    }
    d(std::move(r));
  }
};

struct Waits {
  testing::TempDir d;
  Wire w{make_config(d.path())};
  std::vector<std::shared_ptr<TestCall>> calls;
  uint32_t tree = 0;

  Waits() {
    FileService* files = &w.state->files();
    w.conn->set_executor([this, files](ConnOpens& o, const CallCtx& ctx, uint16_t cmd, ByteView msg) {
      if (cmd != SMB2_LOCK) return files->execute(o, ctx, cmd, msg);
      auto c = std::make_shared<TestCall>();
      calls.push_back(c);
      FileReply r;
      r.pending = c;
      return r;
    });
    EXPECT_TRUE(w.negotiate().ok());
    EXPECT_TRUE(w.login(kUser, kPassword).ok());
    tree = w.connect("share").tree_id;
  }
  Result<session::Request> lock_request(uint32_t on_tree = 0) {
    LockRequest l;
    l.FileId = {1, 2};
    l.Locks.push_back(LockElement{0, 10, SMB2_LOCKFLAG_EXCLUSIVE_LOCK});
    return client::make_request(SMB2_LOCK, w.session_id, on_tree ? on_tree : tree,
                                [&](ByteWriter& b) { return encode_lock_request(l, b); });
  }
  // Sends a LOCK; returns its MessageId and what came back.
  uint64_t send_lock(std::vector<session::Response>& got) {
    auto req = lock_request();
    EXPECT_TRUE(req.ok());
    OutFrame f;
    auto mid = w.client.send(*req, f);
    EXPECT_TRUE(mid.ok());
    auto rs = w.deliver(f);
    EXPECT_TRUE(rs.ok()) << rs.error().message();
    if (rs) got = std::move(*rs);
    return mid.ok() ? *mid : 0;
  }
  // What the connection queued since the last look, as the client takes it.
  std::vector<session::Response> take() {
    std::vector<session::Response> out;
    for (OutFrame& o : w.io.sent) {
      Bytes b = o.head;
      b.insert(b.end(), o.payload.begin(), o.payload.end());
      EXPECT_TRUE(w.client.receive(Bytes(b.begin() + session::kDirectTcpHeader, b.end()), out).ok());
    }
    w.io.sent.clear();
    return out;
  }
  std::vector<session::Response> cancel(uint64_t mid) {
    OutFrame f;
    EXPECT_TRUE(w.client.send_cancel(mid, f).ok());
    auto rs = w.deliver(f);
    EXPECT_TRUE(rs.ok());
    return rs ? *rs : std::vector<session::Response>{};
  }
};

TEST(ConnWaits, AWaitingRequestIsAnsweredInterimThenAsync) {
  Waits t;
  std::vector<session::Response> got;
  const uint64_t mid = t.send_lock(got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].interim);
  EXPECT_EQ(got[0].hdr.Status, STATUS_PENDING);
  EXPECT_TRUE(got[0].hdr.is_async());
  EXPECT_NE(got[0].hdr.AsyncId, 0u);
  EXPECT_GE(got[0].hdr.CreditRequestResponse, 1);  // the interim response grants the credits
  const uint64_t async_id = got[0].hdr.AsyncId;
  EXPECT_EQ(t.w.conn->in_flight(), 1u);
  EXPECT_EQ(t.w.conn->waiting(), 1u);
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_TRUE(t.calls[0]->started);

  t.calls[0]->finish(STATUS_SUCCESS);
  auto fin = t.take();
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_FALSE(fin[0].interim);
  EXPECT_EQ(fin[0].hdr.MessageId, mid);
  EXPECT_EQ(fin[0].hdr.Status, STATUS_SUCCESS);
  EXPECT_TRUE(fin[0].hdr.is_async());
  EXPECT_EQ(fin[0].hdr.AsyncId, async_id);
  EXPECT_EQ(fin[0].hdr.CreditRequestResponse, 0);  // granted already
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
  EXPECT_EQ(t.w.conn->waiting(), 0u);
}

TEST(ConnWaits, ASealedRequestIsAnsweredSealedBothTimes) {
  Waits t;
  auto sealed = t.w.connect("secure", true);
  ASSERT_EQ(sealed.status, STATUS_SUCCESS);
  auto req = t.lock_request(sealed.tree_id);
  ASSERT_TRUE(req.ok());
  req->encrypt = true;
  auto got = t.w.round(*req);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_TRUE((*got)[0].interim);
  EXPECT_TRUE((*got)[0].encrypted);
  t.calls[0]->finish(STATUS_SUCCESS);
  auto fin = t.take();
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].hdr.Status, STATUS_SUCCESS);
  EXPECT_TRUE(fin[0].encrypted);
}

TEST(ConnWaits, CancelByAsyncIdAnswersCancelled) {
  Waits t;
  std::vector<session::Response> got;
  const uint64_t mid = t.send_lock(got);
  ASSERT_EQ(got.size(), 1u);
  auto rs = t.cancel(mid);  // the client knows the AsyncId: an async CANCEL
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].hdr.MessageId, mid);
  EXPECT_EQ(rs[0].hdr.Status, STATUS_CANCELLED);
  EXPECT_TRUE(t.calls[0]->cancelled);
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
}

TEST(ConnWaits, ACancelBeforeTheRequestGoesAsyncIsKept) {
  Waits t;
  t.w.io.defer = true;  // the LOCK stays on its worker
  auto req = t.lock_request();
  OutFrame f;
  auto mid = t.w.client.send(*req, f);
  ASSERT_TRUE(mid.ok());
  ASSERT_TRUE(t.w.deliver(f).ok());
  auto none = t.cancel(*mid);  // sync CANCEL: by MessageId
  EXPECT_TRUE(none.empty());
  t.w.io.defer = false;
  t.w.io.run_deferred();
  auto rs = t.take();
  ASSERT_FALSE(rs.empty());
  EXPECT_EQ(rs.back().hdr.MessageId, *mid);
  EXPECT_EQ(rs.back().hdr.Status, STATUS_CANCELLED);
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_TRUE(t.calls[0]->cancelled);
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
}

// Two CHANGE_NOTIFYs on one open run in the order they came, even when
// workers would finish them the other way round: the first takes the
// changes buffered before it, the second waits for the next (smbtorture
// smb2.notify.double hung when the second ran first).
TEST(ConnWaits, ChangeNotifiesRunInTheOrderTheyCame) {
  testing::TempDir d;
  Wire w{make_config(d.path())};
  std::vector<uint64_t> ran;
  w.conn->set_executor([&](ConnOpens&, const CallCtx& ctx, uint16_t cmd, ByteView) {
    EXPECT_EQ(cmd, SMB2_CHANGE_NOTIFY);
    ran.push_back(ctx.message_id);
    FileReply r;
    r.status = STATUS_SUCCESS;
    ByteWriter b(r.body);
    EXPECT_TRUE(encode_change_notify_response(ChangeNotifyResponse{}, b).ok());
    return r;
  });
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  const uint32_t tree = w.connect("share").tree_id;
  w.io.defer = true;
  std::vector<uint64_t> mids;
  for (int i = 0; i < 2; i++) {
    ChangeNotifyRequest n;
    n.FileId = {1, 2};
    n.OutputBufferLength = 1000;
    n.CompletionFilter = FILE_NOTIFY_CHANGE_DIR_NAME;
    auto req = client::make_request(SMB2_CHANGE_NOTIFY, w.session_id, tree,
                                    [&](ByteWriter& b) { return encode_change_notify_request(n, b); });
    ASSERT_TRUE(req.ok());
    OutFrame f;
    auto mid = w.client.send(*req, f);
    ASSERT_TRUE(mid.ok());
    mids.push_back(*mid);
    ASSERT_TRUE(w.deliver(f).ok());
  }
  for (int i = 0; i < 2 && !w.io.deferred.empty(); i++) w.io.run_deferred(true);
  EXPECT_EQ(ran, mids);
  EXPECT_EQ(w.conn->in_flight(), 0u);
}

TEST(ConnWaits, ACancelForNothingIsNotAnswered) {
  Waits t;
  Bytes msg;
  ByteWriter b(msg);
  Header h;
  h.Command = SMB2_CANCEL;
  h.MessageId = 77;
  h.SessionId = t.w.session_id;
  encode_header(h, b);
  b.u16(4);
  b.u16(0);
  t.w.io.sent.clear();
  ASSERT_TRUE(t.w.conn->on_frame(msg).ok());
  EXPECT_TRUE(t.w.io.sent.empty());
}

TEST(ConnWaits, TreeDisconnectAndLogoffCancelWhatWaitsOnThem) {
  Waits t;
  std::vector<session::Response> got;
  const uint64_t first = t.send_lock(got);
  auto tdis = client::make_request(SMB2_TREE_DISCONNECT, t.w.session_id, t.tree, [](ByteWriter& b) {
    return encode_tree_disconnect_request(TreeDisconnectRequest{}, b);
  });
  auto rs = t.w.round(*tdis);
  ASSERT_TRUE(rs.ok());
  ASSERT_EQ(rs->size(), 2u);
  EXPECT_EQ((*rs)[0].hdr.MessageId, first);
  EXPECT_EQ((*rs)[0].hdr.Status, STATUS_CANCELLED);
  EXPECT_EQ((*rs)[1].hdr.Status, STATUS_SUCCESS);

  t.tree = t.w.connect("share").tree_id;
  const uint64_t second = t.send_lock(got);
  auto logoff = client::make_request(SMB2_LOGOFF, t.w.session_id, 0,
                                     [](ByteWriter& b) { return encode_logoff_request(LogoffRequest{}, b); });
  rs = t.w.round(*logoff);
  ASSERT_TRUE(rs.ok());
  ASSERT_EQ(rs->size(), 2u);
  EXPECT_EQ((*rs)[0].hdr.MessageId, second);
  EXPECT_EQ((*rs)[0].hdr.Status, STATUS_CANCELLED);
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
}

TEST(ConnWaits, ServerStopAndConnectionLossCancel) {
  Waits t;
  std::vector<session::Response> got;
  t.send_lock(got);
  t.w.conn->cancel_waiting();
  auto rs = t.take();
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].hdr.Status, STATUS_CANCELLED);
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
  t.send_lock(got);
  t.w.conn->shutdown();
  EXPECT_TRUE(t.calls[1]->cancelled);
  EXPECT_TRUE(t.take().empty());  // nobody to answer
}

TEST(ConnWaits, WaitingRequestsAreBounded) {
  Waits t;
  std::vector<session::Response> got;
  for (size_t i = 0; i < Conn::kMaxWaiting; i++) {
    t.send_lock(got);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_TRUE(got[0].interim) << i;
  }
  t.send_lock(got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].hdr.Status, STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_TRUE(t.calls.back()->cancelled);
  EXPECT_EQ(t.w.conn->waiting(), Conn::kMaxWaiting);
  t.calls[0]->finish(STATUS_SUCCESS);
  t.take();
  t.send_lock(got);  // room again
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].interim);
}

// A chain: CREATE then a related LOCK that waits.
std::vector<session::Request> create_then_lock(Waits& t, bool lock_last) {
  std::vector<session::Request> reqs;
  CreateRequest c;
  c.DesiredAccess = FILE_READ_DATA | FILE_WRITE_DATA;
  c.ShareAccess = FILE_SHARE_READ | FILE_SHARE_WRITE;
  c.CreateDisposition = FILE_OPEN_IF;
  c.Name = "chain.txt";
  reqs.push_back(*client::make_request(SMB2_CREATE, t.w.session_id, t.tree,
                                       [&](ByteWriter& b) { return encode_create_request(c, b); }));
  LockRequest l;
  l.FileId = {~0ull, ~0ull};
  l.Locks.push_back(LockElement{0, 10, SMB2_LOCKFLAG_EXCLUSIVE_LOCK});
  auto lock = *client::make_request(SMB2_LOCK, t.w.session_id, t.tree,
                                    [&](ByteWriter& b) { return encode_lock_request(l, b); });
  lock.hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  reqs.push_back(std::move(lock));
  if (!lock_last) {
    auto echo = *client::make_request(SMB2_ECHO, t.w.session_id, t.tree,
                                      [](ByteWriter& b) { return encode_echo_request(EchoRequest{}, b); });
    reqs.push_back(std::move(echo));
  }
  return reqs;
}

TEST(ConnWaits, TheLastOfAChainWaitsAfterTheAnswersBeforeIt) {
  Waits t;
  auto reqs = create_then_lock(t, true);
  OutFrame f;
  ASSERT_TRUE(t.w.client.send_compound(reqs, f).ok());
  auto rs = t.w.deliver(f);
  ASSERT_TRUE(rs.ok()) << rs.error().message();
  EXPECT_EQ(t.w.frames, 1u);
  ASSERT_EQ(rs->size(), 2u);  // one frame: CREATE's answer and LOCK's interim
  EXPECT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
  EXPECT_TRUE((*rs)[1].interim);
  t.calls[0]->finish(STATUS_SUCCESS);
  auto fin = t.take();
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].hdr.Status, STATUS_SUCCESS);
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
}

// A CREATE that waited (for a break's acknowledgment) and then opened the
// file still names the chain's file: the related LOCK after it locks it.
// The file layer's retry runs apart from the chain (as CreateWait does),
// so the connection takes the FileId from the CREATE's answer.
TEST(ConnWaits, ACreateThatWaitedStillNamesTheChainsFile) {
  Waits t;
  struct ReplyCall : PendingCall {
    FileReply reply;
    std::function<void(FileReply)> done;
    void start(std::function<void(FileReply)> d) override { done = std::move(d); }
    void cancel() override {}
  };
  std::shared_ptr<ReplyCall> call;
  FileService* files = &t.w.state->files();
  t.w.conn->set_executor([&](ConnOpens& o, const CallCtx& ctx, uint16_t cmd, ByteView msg) {
    if (cmd != SMB2_CREATE || call) return files->execute(o, ctx, cmd, msg);
    CallCtx apart = ctx;
    apart.chain_file_id = nullptr;
    call = std::make_shared<ReplyCall>();
    call->reply = files->execute(o, apart, cmd, msg);
    FileReply r;
    r.pending = call;
    return r;
  });
  auto reqs = create_then_lock(t, true);
  OutFrame f;
  ASSERT_TRUE(t.w.client.send_compound(reqs, f).ok());
  auto rs = t.w.deliver(f);
  ASSERT_TRUE(rs.ok()) << rs.error().message();
  ASSERT_EQ(rs->size(), 1u);
  EXPECT_TRUE((*rs)[0].interim);  // the CREATE waits
  ASSERT_TRUE(call && call->done);
  ASSERT_EQ(call->reply.status, STATUS_SUCCESS);
  call->done(std::move(call->reply));
  auto fin = t.take();
  ASSERT_EQ(fin.size(), 2u);
  EXPECT_EQ(fin[0].hdr.Status, STATUS_SUCCESS);
  EXPECT_EQ(fin[1].hdr.Status, STATUS_SUCCESS) << "the related LOCK did not find the chain's file";
}

TEST(ConnWaits, ARequestThatWouldWaitInsideAChainIsCancelled) {
  Waits t;
  auto reqs = create_then_lock(t, false);
  OutFrame f;
  ASSERT_TRUE(t.w.client.send_compound(reqs, f).ok());
  auto rs = t.w.deliver(f);
  ASSERT_TRUE(rs.ok()) << rs.error().message();
  ASSERT_EQ(rs->size(), 3u);  // answered together, none interim
  EXPECT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
  EXPECT_EQ((*rs)[1].hdr.Status, STATUS_CANCELLED);
  EXPECT_FALSE((*rs)[1].interim);
  EXPECT_EQ((*rs)[2].hdr.Status, STATUS_SUCCESS);
  EXPECT_EQ(t.w.conn->in_flight(), 0u);
  EXPECT_EQ(t.w.conn->waiting(), 0u);
}


// CREATE, QUERY_INFO, CLOSE related: a stat. The three go to a worker
// once, run there in order, and are answered in one frame.
std::vector<session::Request> create_query_close(Wire& w, uint32_t tree, const std::string& name) {
  std::vector<session::Request> reqs;
  CreateRequest c;
  c.DesiredAccess = FILE_READ_ATTRIBUTES;
  c.ShareAccess = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  c.CreateDisposition = FILE_OPEN;
  c.Name = name;
  reqs.push_back(*client::make_request(SMB2_CREATE, w.session_id, tree,
                                       [&](ByteWriter& b) { return encode_create_request(c, b); }));
  QueryInfoRequest q;
  q.FileInfoClass = FILE_ALL_INFORMATION;
  q.OutputBufferLength = 4096;
  q.FileId = {~0ull, ~0ull};
  auto qi = *client::make_request(SMB2_QUERY_INFO, w.session_id, tree,
                                  [&](ByteWriter& b) { return encode_query_info_request(q, b); });
  qi.hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  reqs.push_back(std::move(qi));
  CloseRequest cl;
  cl.FileId = {~0ull, ~0ull};
  auto close = *client::make_request(SMB2_CLOSE, w.session_id, tree,
                                     [&](ByteWriter& b) { return encode_close_request(cl, b); });
  close.hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  reqs.push_back(std::move(close));
  return reqs;
}

TEST(ConnChains, FileCommandsOfAChainGoToAWorkerOnce) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  const uint32_t tree = w.connect("share").tree_id;
  ASSERT_EQ(w.create(tree, "s.txt"), STATUS_SUCCESS);
  auto reqs = create_query_close(w, tree, "s.txt");
  OutFrame f;
  ASSERT_TRUE(w.client.send_compound(reqs, f).ok());
  w.io.handoffs = 0;
  auto rs = w.deliver(f);
  ASSERT_TRUE(rs.ok()) << rs.error().message();
  EXPECT_EQ(w.io.handoffs, 1u);
  EXPECT_EQ(w.frames, 1u);
  ASSERT_EQ(rs->size(), 3u);
  for (auto& r : *rs) EXPECT_EQ(r.hdr.Status, STATUS_SUCCESS) << r.hdr.Command;
  EXPECT_EQ(w.conn->in_flight(), 0u);
}

// A CREATE that fails stops the worker: the loop fails the related
// requests after it with its status, as before.
TEST(ConnChains, ACreateThatFailsFailsTheRestOfTheChain) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  ASSERT_TRUE(w.negotiate().ok());
  ASSERT_TRUE(w.login(kUser, kPassword).ok());
  const uint32_t tree = w.connect("share").tree_id;
  auto reqs = create_query_close(w, tree, "missing.txt");
  OutFrame f;
  ASSERT_TRUE(w.client.send_compound(reqs, f).ok());
  auto rs = w.deliver(f);
  ASSERT_TRUE(rs.ok()) << rs.error().message();
  ASSERT_EQ(rs->size(), 3u);
  for (auto& r : *rs) EXPECT_EQ(r.hdr.Status, STATUS_OBJECT_NAME_NOT_FOUND) << r.hdr.Command;
  EXPECT_EQ(w.conn->in_flight(), 0u);
}

}  // namespace
}  // namespace smbkit::server
