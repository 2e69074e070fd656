// Error paths against a real smbd: each failure must come back as the
// exact NTSTATUS (or errno) a caller can act on.
#include "fixture.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;
using smbkit::STATUS_ACCESS_DENIED;
using smbkit::STATUS_BAD_NETWORK_NAME;
using smbkit::STATUS_DIRECTORY_NOT_EMPTY;
using smbkit::STATUS_LOGON_FAILURE;
using smbkit::STATUS_OBJECT_NAME_COLLISION;
using smbkit::STATUS_OBJECT_NAME_NOT_FOUND;
using smbkit::STATUS_OBJECT_PATH_NOT_FOUND;

class Errors : public ServerSuite<Errors> {};

TEST_F(Errors, WrongPasswordIsLogonFailure) {
  auto o = client_options(server());
  o.creds.password = "definitely-not-the-password";
  auto c = cl::Client::connect(o);
  IT_ASSERT_STATUS(c, STATUS_LOGON_FAILURE);
  EXPECT_NE(c.error().message().find("STATUS_LOGON_FAILURE"), std::string::npos) << c.error().message();
}

TEST_F(Errors, UnknownShareIsBadNetworkName) {
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("no-such-share");
  IT_ASSERT_STATUS(t, STATUS_BAD_NETWORK_NAME);
  // The session is still usable afterwards.
  auto t2 = (*c)->tree_connect("share");
  IT_EXPECT_OK(t2);
}

TEST_F(Errors, MissingFileIsObjectNameNotFound) {
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  IT_EXPECT_STATUS((*t)->stat("no-such-file.txt"), STATUS_OBJECT_NAME_NOT_FOUND);
  cl::OpenParams p;
  p.access = FILE_READ_DATA | SYNCHRONIZE;
  IT_EXPECT_STATUS((*t)->open("no-such-file.txt", p), STATUS_OBJECT_NAME_NOT_FOUND);
  IT_EXPECT_STATUS((*t)->unlink("no-such-file.txt"), STATUS_OBJECT_NAME_NOT_FOUND);
  // A missing directory on the way is the "path" variant.
  IT_EXPECT_STATUS((*t)->stat("no-such-dir/file.txt"), STATUS_OBJECT_PATH_NOT_FOUND);
  IT_EXPECT_STATUS((*t)->list("no-such-dir"), STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(Errors, MkdirExistingIsCollision) {
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  const std::string d = unique_name("dir");
  IT_ASSERT_OK((*t)->mkdir(d));
  EXPECT_TRUE(fs::is_directory(share_dir() + "/" + d));
  IT_EXPECT_STATUS((*t)->mkdir(d), STATUS_OBJECT_NAME_COLLISION);
}

TEST_F(Errors, RefusedPortIsEconnrefusedWithinTimeout) {
  auto o = client_options(server());
  o.conn.port = st::free_port();  // nothing listens there
  o.conn.timeout = std::chrono::seconds(5);
  auto t0 = std::chrono::steady_clock::now();
  auto c = cl::Client::connect(o);
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().status, 0u) << c.error().message();
  EXPECT_EQ(c.error().sys_errno, ECONNREFUSED) << c.error().message();
  EXPECT_EQ(c.error().to_errno(), ECONNREFUSED);
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(Errors, RmdirNonEmptyIsDirectoryNotEmpty) {
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  const std::string d = unique_name("full");
  IT_ASSERT_OK((*t)->mkdir(d));
  IT_ASSERT_OK(put_file(**t, d + "/inside.txt", to_bytes("x")));
  IT_EXPECT_STATUS((*t)->rmdir(d), STATUS_DIRECTORY_NOT_EMPTY);
  EXPECT_TRUE(fs::exists(share_dir() + "/" + d + "/inside.txt"));
  // Once empty it goes.
  IT_ASSERT_OK((*t)->unlink(d + "/inside.txt"));
  IT_EXPECT_OK((*t)->rmdir(d));
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d));
}

// Guest and anonymous sessions, on every dialect. On 3.0 and 3.0.2 the
// client must not attempt FSCTL_VALIDATE_NEGOTIATE_INFO on such sessions: it
// has no key to sign it with (MS-SMB2 3.2.5.5 applies only to sessions with
// a signing key), and an unsigned answer would be (rightly) refused.
class GuestAnonymous : public ServerSuite<GuestAnonymous, ::testing::TestWithParam<uint16_t>> {};

// "map to guest = Bad User": an unknown user becomes a guest session, which
// may use the guest-ok share but cannot use the encrypt-required one.
TEST_P(GuestAnonymous, UnknownUserMapsToGuestOnPublicShare) {
  auto o = client_options(server(), {GetParam()});
  o.creds.user = "no-such-user";
  o.creds.password = "whatever";
  // Only when asked for (--guest): a named user is never silently a guest.
  IT_ASSERT_STATUS(cl::Client::connect(o), STATUS_LOGON_FAILURE);
  o.creds.allow_guest = true;
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  EXPECT_TRUE((*c)->session().guest);
  EXPECT_FALSE((*c)->session().signing);
  auto t = (*c)->tree_connect("public");
  IT_ASSERT_OK(t);
  const std::string name = unique_name("guest-visible") + ".txt";
  ASSERT_TRUE(write_local(share_dir("public") + "/" + name, to_bytes("hello guest")));
  auto ls = (*t)->list("");
  IT_ASSERT_OK(ls);
  bool seen = false;
  for (auto& e : *ls) seen |= e.name == name;
  EXPECT_TRUE(seen);
  auto d = get_file(**t, name);
  IT_ASSERT_OK(d);
  EXPECT_EQ(to_string(*d), "hello guest");
  // The encrypt-required share needs a session key a guest does not have.
  IT_EXPECT_STATUS((*c)->tree_connect("secure"), STATUS_ACCESS_DENIED);
}

// Empty credentials: an anonymous (null) NTLM session. Samba 4.17 lets it
// use a "guest ok" share (as the guest account). Samba never sets
// SMB2_SESSION_FLAG_IS_NULL, but the client knows it authenticated
// anonymously and must report (and treat) the session as anonymous.
TEST_P(GuestAnonymous, AnonymousSessionListsPublicShare) {
  auto o = client_options(server(), {GetParam()});
  o.creds = {};
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  EXPECT_TRUE((*c)->session().anonymous) << "guest=" << (*c)->session().guest;
  EXPECT_FALSE((*c)->session().signing);
  auto t = (*c)->tree_connect("public");
  IT_ASSERT_OK(t);
  const std::string name = unique_name("anon-visible") + ".txt";
  ASSERT_TRUE(write_local(share_dir("public") + "/" + name, to_bytes("hello anon")));
  auto ls = (*t)->list("");
  IT_ASSERT_OK(ls);
  bool seen = false;
  for (auto& e : *ls) seen |= e.name == name;
  EXPECT_TRUE(seen);
  auto d = get_file(**t, name);
  IT_ASSERT_OK(d);
  EXPECT_EQ(to_string(*d), "hello anon");
}

INSTANTIATE_TEST_SUITE_P(Dialects, GuestAnonymous,
                         ::testing::Values(SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300,
                                           SMB2_DIALECT_0302, SMB2_DIALECT_0311),
                         [](const ::testing::TestParamInfo<uint16_t>& i) {
                           char b[16];
                           std::snprintf(b, sizeof b, "v%03x", i.param);
                           return std::string(b);
                         });

TEST_F(Errors, GuestAskingForSigningIsRefused) {
  auto o = client_options(server(), {}, /*sign=*/true);
  o.creds.user = "no-such-user";
  o.creds.password = "whatever";
  // Not asked for, the guest session is refused as such.
  auto c = cl::Client::connect(o);
  ASSERT_FALSE(c.ok()) << "a named user must not silently become a guest";
  EXPECT_EQ(c.error().status, STATUS_LOGON_FAILURE) << c.error().message();
  // Asked for, it still cannot sign: --sign must fail.
  o.creds.allow_guest = true;
  auto g = cl::Client::connect(o);
  ASSERT_FALSE(g.ok()) << "a guest session cannot sign; --sign must fail";
  EXPECT_EQ(g.error().status, STATUS_ACCESS_DENIED) << g.error().message();
}

}  // namespace
}  // namespace smbkit_it
