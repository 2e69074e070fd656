#include "client/url.h"

#include <gtest/gtest.h>

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
  auto six_default = parse_smb_url("smb://[fe80::1]/s");
  ASSERT_TRUE(six_default.ok());
  EXPECT_EQ(six_default->host, "fe80::1");
  EXPECT_EQ(six_default->port, 445);
  EXPECT_FALSE(parse_smb_url("smb://[::1]x/s").ok());
  EXPECT_FALSE(parse_smb_url("smb://[::1/s").ok());
}

TEST(Url, Rejects) {
  EXPECT_FALSE(parse_smb_url("http://x/y").ok());
  EXPECT_FALSE(parse_smb_url("smb://user:secret@host/share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host:0/share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host:99999/share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host:12a/share").ok());
  EXPECT_FALSE(parse_smb_url("smb:///share").ok());
  EXPECT_FALSE(parse_smb_url("smb://host/share/../etc").ok());
}

// A malformed target is a local failure: EINVAL, no made-up NTSTATUS.
TEST(Url, SyntaxErrorsAreEinval) {
  auto r = parse_smb_url("smb://127.0.0.1:99999/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, 0u);
  EXPECT_EQ(r.error().sys_errno, EINVAL);
  EXPECT_NE(r.error().message().find("bad port"), std::string::npos) << r.error().message();
  EXPECT_EQ(r.error().message().find("STATUS_"), std::string::npos) << r.error().message();
}

TEST(Url, PasswordIsRefusedWithoutEchoingIt) {
  for (const char* s : {"smb://user:secret@host/share", "smb://DOM;user:secret@host/share/x",
                        "//user:secret@host/share", "\\\\user:secret@host\\share"}) {
    auto r = parse_smb_url(s);
    ASSERT_FALSE(r.ok()) << s;
    const std::string m = r.error().message();
    EXPECT_EQ(m.find("secret"), std::string::npos) << m;
    EXPECT_NE(m.find("password"), std::string::npos) << m;
    EXPECT_NE(m.find("host"), std::string::npos) << m;
  }
}

TEST(Url, UncForms) {
  auto b = parse_smb_url("\\\\files.example\\media\\dir\\a b.txt");
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->host, "files.example");
  EXPECT_EQ(b->share, "media");
  EXPECT_EQ(b->path, "dir/a b.txt");
  EXPECT_TRUE(looks_like_smb_url("\\\\h\\s"));
  auto s = parse_smb_url("//alice@host:4450/share/dir/f");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->user, "alice");
  EXPECT_EQ(s->port, 4450);
  EXPECT_EQ(s->path, "dir/f");
  EXPECT_FALSE(parse_smb_url("\\\\host\\share\\..\\etc").ok());
}

// '%' that starts no escape is a '%'; in the UNC forms nothing is an escape.
TEST(Url, PercentWhereUnambiguous) {
  auto a = parse_smb_url("smb://host/share/100%.txt");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->path, "100%.txt");
  auto z = parse_smb_url("smb://host/share/%zz/%4");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->path, "%zz/%4");
  auto e = parse_smb_url("smb://host/share/a%20b%25c");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->path, "a b%c");
  auto u = parse_smb_url("//host/share/a%20b");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->path, "a%20b");
}

}  // namespace
}  // namespace smbkit::client
