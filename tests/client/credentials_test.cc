#include "client/credentials.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "client/client.h"

namespace smbkit::client {
namespace {

TEST(Credentials, DomainAndUserSplitAtTheFirstSeparator) {
  auto a = split_domain_user("CORP/bob");
  ASSERT_TRUE(a.domain.has_value());
  EXPECT_EQ(*a.domain, "CORP");
  EXPECT_EQ(a.user, "bob");
  auto b = split_domain_user("CORP\\carol/x");
  ASSERT_TRUE(b.domain.has_value());
  EXPECT_EQ(*b.domain, "CORP");
  EXPECT_EQ(b.user, "carol/x");
  auto c = split_domain_user("dave");
  EXPECT_FALSE(c.domain.has_value());
  EXPECT_EQ(c.user, "dave");
  auto d = split_domain_user("/erin");  // an empty domain is still named
  ASSERT_TRUE(d.domain.has_value());
  EXPECT_EQ(*d.domain, "");
  EXPECT_EQ(d.user, "erin");
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
