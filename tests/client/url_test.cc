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
  EXPECT_FALSE(parse_smb_url("smb://host/share/%zz").ok());
  EXPECT_FALSE(parse_smb_url("smb://host/share/%4").ok());
}

}  // namespace
}  // namespace smbkit::client
