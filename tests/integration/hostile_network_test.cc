// A hostile network between smbkit and the real smbd: the tampering relay
// (tests/support/tamper_relay.h) rewrites, drops and forges messages, and
// each test shows one lie being caught (docs/design/security.md). A
// response is checked against the request it answers, encryption cannot be
// stripped, the negotiation cannot be downgraded, and a named user never
// silently becomes a guest.
#include <mutex>

#include "proto/error_response.h"
#include "proto/ioctl.h"
#include "proto/session_setup.h"
#include "proto/tree_connect.h"
#include "session/client_machine.h"
#include "relay_util.h"

namespace smbkit_it {
namespace {

namespace smb2 = st::smb2;
using st::TamperContext;
using st::Toward;
using st::Verdict;

class HostileNetwork : public ServerSuite<HostileNetwork> {
 protected:
  void SetUp() override {
    ServerSuite::SetUp();
    auto r = st::TamperRelay::start(server().port());
    ASSERT_TRUE(r.ok()) << r.error().message();
    relay_ = std::move(*r);
  }
  // Options for a client that goes through the relay and does not
  // reconnect (a refused message must fail what it answers, not be
  // retried on a new connection).
  cl::ClientOptions via_relay(std::vector<uint16_t> dialects, bool sign = false, bool seal = false) {
    return through_relay(server(), *relay_, std::move(dialects), sign, seal);
  }
  std::unique_ptr<st::TamperRelay> relay_;
};

// The error of a refused message, with what the test wants to see.
::testing::AssertionResult refused(const Error& e) {
  if (smbkit::session::is_security_violation(e)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "not a security violation: " << e.message();
}
template <class T>
::testing::AssertionResult refused(const Result<T>& r) {
  if (r.ok()) return ::testing::AssertionFailure() << "accepted";
  return refused(r.error());
}

// A forged response to the request in `req` (a plain request message):
// its header with the response flag, `status`, and an ERROR body.
Bytes forged_error(const Bytes& req, uint32_t status) {
  Bytes r(req.begin(), req.begin() + smb2::kHeaderSize);
  smb2::set_flags(r, (smb2::flags(r) | smb2::kFlagServerToRedir) & ~smb2::kFlagSigned);
  smb2::set_status(r, status);
  smbkit::store_le16(r.data() + smb2::kCredit, 1);
  std::fill(r.begin() + smb2::kSignature, r.end(), std::byte{0});
  smbkit::ByteWriter w(r);
  (void)pr::encode_error_response(pr::ErrorResponse{}, w);
  return r;
}

std::string dialect_name(uint16_t d) {
  char b[8];
  std::snprintf(b, sizeof b, "%x", d);
  return std::string("d") + b;
}

// ---- 1. A response is checked against its request --------------------------

class HostileSigning : public HostileNetwork, public ::testing::WithParamInterface<uint16_t> {};

// A relay answers a signed session's READ with SessionId 0 and the SIGNED
// flag cleared. Looking the session up by the response's own SessionId
// would find none and check nothing: the data would be taken.
TEST_P(HostileSigning, AnUnsignedAnswerClaimingSessionZeroFailsTheReadAndTheConnection) {
  std::string name = unique_name("sig") + ".bin";
  Bytes data = random_bytes(100000, 11);
  ASSERT_TRUE(write_local(share_dir() + "/" + name, data));
  auto o = open_through(via_relay({GetParam()}, /*sign=*/true), "share", name, pr::FILE_READ_DATA);
  IT_ASSERT_OK(o);
  auto* c = &o->client;
  auto* t = &o->tree;
  auto* f = &o->file;
  std::atomic<int> rewritten{0};
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == pr::SMB2_READ) {
      smb2::set_session_id(m, 0);
      smb2::strip_signature(m);
      rewritten++;
    }
    return Verdict::forward;
  });
  Bytes buf(data.size());
  auto n = (*t)->read(f->id, 0, buf);
  // (Under load smbd may first answer with an interim STATUS_PENDING,
  // which the relay rewrites too.)
  EXPECT_GE(rewritten.load(), 1);
  EXPECT_TRUE(refused(n));
  // The connection is torn down: something on the path is lying.
  EXPECT_TRUE((*c)->conn().dead().has_value());
}

// The same with the real SessionId: only the signature is stripped.
TEST_P(HostileSigning, AnUnsignedAnswerWithTheRealSessionIdFailsToo) {
  auto c = cl::Client::connect(via_relay({GetParam()}, /*sign=*/true));
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == pr::SMB2_CREATE) smb2::strip_signature(m);
    return Verdict::forward;
  });
  EXPECT_TRUE(refused((*t)->stat("")));
}

INSTANTIATE_TEST_SUITE_P(Dialects, HostileSigning,
                         ::testing::Values(pr::SMB2_DIALECT_0210, pr::SMB2_DIALECT_0300, pr::SMB2_DIALECT_0311),
                         [](const auto& i) { return dialect_name(i.param); });

// ---- 2. Encryption cannot be stripped ---------------------------------------

class HostileEncryption : public HostileNetwork, public ::testing::WithParamInterface<uint16_t> {};

// On the `secure` share (smb encrypt = required) without --seal, the
// client encrypts because the TREE_CONNECT answer says so. A relay that
// cannot read the sealed CREATE drops it and answers in clear with the
// right MessageId and SessionId: that answer must be refused.
TEST_P(HostileEncryption, APlainAnswerToASealedRequestIsRefused) {
  std::string name = unique_name("enc") + ".txt";
  ASSERT_TRUE(write_local(share_dir("secure") + "/" + name, to_bytes("secret")));
  std::mutex mu;
  uint64_t tree_mid = 0, session = 0;
  int sealed_after_tree = 0, forged = 0;
  // The CREATE is the first sealed request after TREE_CONNECT (3.1.1) or
  // the second, after VALIDATE_NEGOTIATE (3.0, 3.0.2).
  const int create_index = GetParam() == pr::SMB2_DIALECT_0311 ? 1 : 2;
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext& ctx) {
    std::lock_guard<std::mutex> g(mu);
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == pr::SMB2_TREE_CONNECT) {
      tree_mid = smb2::message_id(m);
      session = smb2::session_id(m);
    } else if (to == Toward::server && smb2::is_sealed(m) && tree_mid) {
      if (++sealed_after_tree == create_index) {
        // The request is unreadable; its header is predictable.
        Bytes req(smb2::kHeaderSize);
        smbkit::store_le32(req.data(), 0x424D53FE);
        smbkit::store_le16(req.data() + 4, 64);
        smbkit::store_le16(req.data() + smb2::kCommand, pr::SMB2_CREATE);
        smbkit::store_le64(req.data() + smb2::kMessageId, tree_mid + static_cast<uint64_t>(create_index));
        smb2::set_session_id(req, session);
        ctx.send(Toward::client, forged_error(req, smbkit::STATUS_OBJECT_NAME_NOT_FOUND));
        forged++;
        return Verdict::drop;
      }
    }
    return Verdict::forward;
  });
  auto c = cl::Client::connect(via_relay({GetParam()}));
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("secure");
  IT_ASSERT_OK(t);
  ASSERT_TRUE((*t)->encrypted());
  cl::OpenParams p;
  p.access = pr::FILE_READ_DATA | pr::SYNCHRONIZE;
  auto f = (*t)->open(name, p);
  {
    std::lock_guard<std::mutex> g(mu);
    EXPECT_EQ(forged, 1);
  }
  EXPECT_TRUE(refused(f));
}

// A relay clears SMB2_SHAREFLAG_ENCRYPT_DATA in the TREE_CONNECT answer and
// strips its signature, so that what follows would go out in clear. The
// TREE_CONNECT request is signed (3.1.1 requires it; smbkit signs it on
// every keyed session), so its answer must be signed too.
TEST_P(HostileEncryption, AStrippedShareEncryptFlagIsRefused) {
  std::atomic<int> stripped{0}, clear_after{0};
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == pr::SMB2_TREE_CONNECT &&
        smb2::status(m) == 0 && m.size() >= smb2::kHeaderSize + 8) {
      uint32_t flags = smbkit::load_le32(m.data() + smb2::kHeaderSize + 4);  // ShareFlags (MS-SMB2 2.2.10)
      smbkit::store_le32(m.data() + smb2::kHeaderSize + 4, flags & ~uint32_t{pr::SMB2_SHAREFLAG_ENCRYPT_DATA});
      smb2::strip_signature(m);
      stripped++;
    } else if (to == Toward::server && smb2::is_plain(m) && stripped &&
               (smb2::command(m) == pr::SMB2_CREATE || smb2::command(m) == pr::SMB2_WRITE)) {
      clear_after++;
    }
    return Verdict::forward;
  });
  auto c = cl::Client::connect(via_relay({GetParam()}));
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("secure");
  EXPECT_EQ(stripped.load(), 1);
  EXPECT_TRUE(refused(t));
  if (t.ok()) {
    auto w = put_file(**t, unique_name("leak"), to_bytes("would leak"));
    (void)w;
  }
  EXPECT_EQ(clear_after.load(), 0) << "requests went out in clear";
}

INSTANTIATE_TEST_SUITE_P(Dialects, HostileEncryption,
                         ::testing::Values(pr::SMB2_DIALECT_0300, pr::SMB2_DIALECT_0302, pr::SMB2_DIALECT_0311),
                         [](const auto& i) { return dialect_name(i.param); });

// ---- 3. No downgrade --------------------------------------------------------

struct DowngradeCase {
  const char* name;
  bool sign, seal;
};

class HostileDowngrade : public HostileNetwork, public ::testing::WithParamInterface<DowngradeCase> {};

// The relay rewrites 3.1.1 to 3.0.2 in our NEGOTIATE, so the server picks
// 3.0.2, and answers the VALIDATE_NEGOTIATE itself (the real server would
// see the rewrite) with an unsigned STATUS_NOT_SUPPORTED, which must not be
// taken as "the server does not validate".
TEST_P(HostileDowngrade, ARewrittenDialectListIsCaught) {
  std::mutex mu;
  uint64_t setup_mid = 0, session = 0;
  int sealed = 0, answered = 0;
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext& ctx) {
    std::lock_guard<std::mutex> g(mu);
    if (!smb2::is_plain(m)) {
      // --seal: TREE_CONNECT and then VALIDATE_NEGOTIATE go sealed.
      if (to == Toward::server && smb2::is_sealed(m) && ++sealed == 2) {
        Bytes req(smb2::kHeaderSize);
        smbkit::store_le32(req.data(), 0x424D53FE);
        smbkit::store_le16(req.data() + 4, 64);
        smbkit::store_le16(req.data() + smb2::kCommand, pr::SMB2_IOCTL);
        smbkit::store_le64(req.data() + smb2::kMessageId, setup_mid + 2);
        smb2::set_session_id(req, session);
        ctx.send(Toward::client, forged_error(req, smbkit::STATUS_NOT_SUPPORTED));
        answered++;
        return Verdict::drop;
      }
      return Verdict::forward;
    }
    uint16_t cmd = smb2::command(m);
    if (to == Toward::server && cmd == pr::SMB2_NEGOTIATE) {
      // MS-SMB2 2.2.3: DialectCount at body + 2, Dialects at body + 36.
      size_t body = smb2::kHeaderSize;
      uint16_t count = smbkit::load_le16(m.data() + body + 2);
      for (size_t i = 0; i < count; i++) {
        std::byte* d = m.data() + body + 36 + 2 * i;
        if (smbkit::load_le16(d) == pr::SMB2_DIALECT_0311) smbkit::store_le16(d, pr::SMB2_DIALECT_0302);
      }
    } else if (to == Toward::client && cmd == pr::SMB2_SESSION_SETUP) {
      setup_mid = smb2::message_id(m);
      session = smb2::session_id(m);
    } else if (to == Toward::server && cmd == pr::SMB2_IOCTL &&
               smbkit::load_le32(m.data() + smb2::kHeaderSize + 4) == pr::FSCTL_VALIDATE_NEGOTIATE_INFO) {
      ctx.send(Toward::client, forged_error(m, smbkit::STATUS_NOT_SUPPORTED));
      answered++;
      return Verdict::drop;
    }
    return Verdict::forward;
  });
  auto c = cl::Client::connect(via_relay({}, GetParam().sign, GetParam().seal));
  IT_ASSERT_OK(c);
  EXPECT_EQ((*c)->conn().server().dialect, pr::SMB2_DIALECT_0302) << "the rewrite did not take";
  auto t = (*c)->tree_connect("share");
  {
    std::lock_guard<std::mutex> g(mu);
    EXPECT_EQ(answered, 1);
  }
  ASSERT_FALSE(t.ok()) << "a downgraded session was accepted";
  EXPECT_TRUE(refused(t));
  EXPECT_TRUE((*c)->conn().dead().has_value()) << "MS-SMB2 3.2.5.14.12: the connection is terminated";
}

INSTANTIATE_TEST_SUITE_P(Options, HostileDowngrade,
                         ::testing::Values(DowngradeCase{"defaults", false, false}, DowngradeCase{"sign", true, false},
                                           DowngradeCase{"seal", false, true}),
                         [](const auto& i) { return std::string(i.param.name); });

// Without a relay, VALIDATE_NEGOTIATE against smbd passes on 3.0 and 3.0.2
// (what it sends is what NEGOTIATE sent).
TEST_F(HostileNetwork, ValidateNegotiatePassesAgainstTheRealServer) {
  for (uint16_t d : {pr::SMB2_DIALECT_0300, pr::SMB2_DIALECT_0302}) {
    auto c = cl::Client::connect(via_relay({pr::SMB2_DIALECT_0202, pr::SMB2_DIALECT_0210, d}));
    IT_ASSERT_OK(c);
    EXPECT_EQ((*c)->conn().server().dialect, d);
    auto t = (*c)->tree_connect("share");
    IT_EXPECT_OK(t);
  }
}

// ---- 4. No silent guest -----------------------------------------------------

// A relay sets SMB2_SESSION_FLAG_IS_GUEST in the final SESSION_SETUP
// answer. Going on as guest would mean no keys, so no signing: it fails.
TEST_F(HostileNetwork, ANamedUserMadeGuestFails) {
  std::atomic<int> flagged{0};
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == pr::SMB2_SESSION_SETUP &&
        smb2::status(m) == 0) {
      // MS-SMB2 2.2.6: SessionFlags at body + 2.
      std::byte* f = m.data() + smb2::kHeaderSize + 2;
      smbkit::store_le16(f, smbkit::load_le16(f) | pr::SMB2_SESSION_FLAG_IS_GUEST);
      flagged++;
    }
    return Verdict::forward;
  });
  auto c = cl::Client::connect(via_relay({}));
  EXPECT_EQ(flagged.load(), 1);
  IT_EXPECT_STATUS(c, smbkit::STATUS_LOGON_FAILURE);
  if (!c.ok()) {
    EXPECT_NE(c.error().message().find("guest"), std::string::npos) << c.error().message();
  }
  // Asked for, guest is accepted.
  auto o = via_relay({});
  o.creds.allow_guest = true;
  auto g = cl::Client::connect(o);
  IT_ASSERT_OK(g);
  EXPECT_TRUE((*g)->session().guest);
}

// ---- The command line -------------------------------------------------------

// `smbkit --sign cat` through a relay that strips the READ answer's
// signature: the command fails, names the refusal, and prints no data.
TEST_F(HostileNetwork, TheCommandLineRefusesAnUnsignedAnswer) {
  std::string name = unique_name("cli") + ".txt";
  ASSERT_TRUE(write_local(share_dir() + "/" + name, to_bytes("the real content\n")));
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == pr::SMB2_READ) {
      smb2::strip_signature(m);
      smb2::set_session_id(m, 0);
    }
    return Verdict::forward;
  });
  std::string url = "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                    std::to_string(relay_->port()) + "/share/" + name;
  auto out = run_smbkit({"--sign", "--no-reconnect", "--timeout", "10", "cat", url});
  EXPECT_NE(out.status, 0) << out.out;
  EXPECT_EQ(out.out.find("the real content"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("security"), std::string::npos) << out.out;
}

}  // namespace
}  // namespace smbkit_it
