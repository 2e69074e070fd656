#include "client/url.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "client/client.h"

namespace smbkit::client {
namespace {

TEST(Url, Full) {
  auto u = parse_smb_url("smb://WORK;alice@files.example:4450/media/a%20b/c.txt");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->domain, "WORK");
  EXPECT_EQ(u->user, "alice");
  EXPECT_EQ(u->host, "files.example");
  EXPECT_EQ(u->port, 4450);
  EXPECT_EQ(u->share, "media");
  EXPECT_EQ(u->path, "a b/c.txt");
  EXPECT_EQ(u->str(), "smb://WORK;alice@files.example:4450/media/a b/c.txt");
}

TEST(Url, Minimal) {
  auto u = parse_smb_url("smb://127.0.0.1/share");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 445);
  EXPECT_EQ(u->user, "");
  EXPECT_EQ(u->path, "");
  auto v = parse_smb_url("//host/share//x///y/");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->path, "x/y");
  auto six = parse_smb_url("smb://[::1]:1445/s");
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(six->host, "::1");
  EXPECT_EQ(six->port, 1445);
}

TEST(Url, Rejects) {
  EXPECT_FALSE(parse_smb_url("http://x/y").ok());
  EXPECT_FALSE(parse_smb_url("smb://user:secret@host/share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host:0/share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host:99999/share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host:12a/share").ok());
  EXPECT_FALSE(parse_smb_url("smb:///share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host/share/../etc").ok());
  EXPECT_FALSE(parse_smb_url("smb://host/share/%zz").ok());
  EXPECT_FALSE(parse_smb_url("smb://host/share/%4").ok());
}

TEST(Credentials, MountCifsFormat) {
  auto c = parse_credentials("# comment\nusername=bob\npassword=p=ss word\ndomain=CORP\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->username, "bob");
  EXPECT_EQ(c->password, "p=ss word");
  EXPECT_EQ(c->domain, "CORP");
  auto d = parse_credentials("user=DOM\\carol\r\npass=x\r\n");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->domain, "DOM");
  EXPECT_EQ(d->username, "carol");
}

TEST(Credentials, RejectsJunkWithoutEchoingSecrets) {
  auto c = parse_credentials("password=hunter2\nbogus line\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message().find("hunter2"), std::string::npos);
  EXPECT_FALSE(parse_credentials("colour=blue\n").ok());
  EXPECT_FALSE(read_credentials_file("/nonexistent/creds").ok());
}

// Passwords are held in the wiping type (the wiping is
// tested in tests/base/secret_test.cc).
TEST(Credentials, PasswordsAreSecretStrings) {
  EXPECT_TRUE((std::is_same_v<decltype(Credentials::password), SecretString>));
  EXPECT_TRUE((std::is_same_v<decltype(CredentialsFile::password), SecretString>));
  auto c = parse_credentials("username=u\npassword=pw\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->password, "pw");
}

}  // namespace
}  // namespace smbkit::client
