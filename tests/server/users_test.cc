// The users file: NT hashes (MS-NLMP 4.2.2.1.2 vector), the mode, owner
// and file-type rules, malformed lines named, atomic save.
#include "server/users.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace smbkit::server {
namespace {

// NTOWFv1("Password"), MS-NLMP 4.2.2.1.2.
constexpr const char* kPasswordHash = "a4f49c406510bdcab6824ee7c30fd852";

std::string hex(const auth::NtHash& h) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::byte b : h) {
    s += d[std::to_integer<unsigned>(b) >> 4];
    s += d[std::to_integer<unsigned>(b) & 0xf];
  }
  return s;
}

class UsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/smbkitd-users-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    priv_ = dir_ + "/private";
    file_ = priv_ + "/" + std::string(kUsersFileName);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes the users file with `mode`.
  void write_file(const std::string& text, mode_t mode = 0600) {
    ::mkdir(priv_.c_str(), 0700);
    int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ASSERT_EQ(::fchmod(fd, mode), 0);
    ::close(fd);
  }
  std::string read_file() {
    std::ifstream in(file_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string load_error() {
    auto r = UserDb::load(priv_);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.error().message();
  }

  std::string dir_, priv_, file_;
};

TEST_F(UsersTest, MissingFileIsAnEmptyDatabase) {
  auto r = UserDb::load(priv_);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->names().empty());
}

TEST_F(UsersTest, SetPasswordStoresTheNtHash) {
  UserDb db;
  ASSERT_TRUE(db.set_password("alice", "Password").ok());
  auto h = db.lookup("alice");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(hex(*h), kPasswordHash);
  EXPECT_FALSE(db.lookup("bob").has_value());
}

TEST_F(UsersTest, NamesCompareWithoutAsciiCase) {
  UserDb db;
  ASSERT_TRUE(db.set_password("Alice", "Password").ok());
  EXPECT_TRUE(db.lookup("ALICE").has_value());
  EXPECT_TRUE(db.lookup("alice").has_value());
  ASSERT_TRUE(db.set_password("aLiCe", "other").ok());  // replaces, does not add
  EXPECT_EQ(db.names(), std::vector<std::string>{"Alice"});
  EXPECT_NE(hex(*db.lookup("alice")), kPasswordHash);
  EXPECT_TRUE(db.remove("ALICE"));
  EXPECT_FALSE(db.remove("alice"));
  EXPECT_TRUE(db.names().empty());
}

TEST_F(UsersTest, RemoveKeepsTheOthersInOrder) {
  UserDb db;
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(db.set_password(n, n).ok());
  auto hc = db.lookup("c");
  EXPECT_TRUE(db.remove("a"));
  EXPECT_EQ(db.names(), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(db.lookup("c"), hc);
}

TEST_F(UsersTest, SaveCreatesThePrivateDirAndAMode0600File) {
  UserDb db;
  ASSERT_TRUE(db.set_password("alice", "Password").ok());
  ASSERT_TRUE(db.set_password("mary jane", "x").ok());
  auto s = db.save(priv_);
  ASSERT_TRUE(s.ok()) << s.error().message();
  struct stat st {};
  ASSERT_EQ(::stat(priv_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  std::string text = read_file();
  EXPECT_NE(text.find(std::string("\nalice:") + kPasswordHash + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nmary jane:"), std::string::npos) << text;
  // No temporary file left behind.
  size_t entries = 0;
  for (auto& e : std::filesystem::directory_iterator(priv_)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);

  auto back = UserDb::load(priv_);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->names(), (std::vector<std::string>{"alice", "mary jane"}));
  EXPECT_EQ(hex(*back->lookup("ALICE")), kPasswordHash);
}

TEST_F(UsersTest, SaveReplacesAndKeeps0600EvenOverAWiderFile) {
  write_file("", 0600);
  UserDb db;
  ASSERT_TRUE(db.set_password("bob", "pw").ok());
  ASSERT_TRUE(db.save(priv_).ok());
  struct stat st {};
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_NE(read_file().find("bob:"), std::string::npos);
}

TEST_F(UsersTest, GroupOrWorldAccessibleFileIsRefused) {
  for (mode_t mode : {0644, 0640, 0604, 0660, 0602}) {
    write_file(std::string("alice:") + kPasswordHash + "\n", mode);
    std::string e = load_error();
    EXPECT_NE(e.find(file_), std::string::npos) << e;
    EXPECT_NE(e.find("gives group or others access"), std::string::npos) << std::oct << mode << " " << e;
  }
  write_file(std::string("alice:") + kPasswordHash + "\n", 0400);
  EXPECT_TRUE(UserDb::load(priv_).ok());
}

TEST_F(UsersTest, SymlinkDirectoryAndFifoAreRefused) {
  ::mkdir(priv_.c_str(), 0700);
  std::string real = dir_ + "/real";
  { std::ofstream(real) << "alice:" << kPasswordHash << "\n"; }
  ::chmod(real.c_str(), 0600);
  ASSERT_EQ(::symlink(real.c_str(), file_.c_str()), 0);
  EXPECT_NE(load_error().find("symbolic link"), std::string::npos);
  ::unlink(file_.c_str());
  ASSERT_EQ(::mkdir(file_.c_str(), 0700), 0);
  EXPECT_NE(load_error().find("not a regular file"), std::string::npos);
  ::rmdir(file_.c_str());
  ASSERT_EQ(::mkfifo(file_.c_str(), 0600), 0);  // must not hang in open()
  EXPECT_NE(load_error().find("not a regular file"), std::string::npos);
}

TEST_F(UsersTest, FileOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file away";
  write_file(std::string("alice:") + kPasswordHash + "\n", 0600);
  ASSERT_EQ(::chown(file_.c_str(), 65534, 65534), 0);
  std::string e = load_error();
  EXPECT_NE(e.find("owned by uid 65534"), std::string::npos) << e;
}

TEST_F(UsersTest, CommentsBlankLinesAndCrlfAreAccepted) {
  write_file(std::string("# users\n\nalice:") + "A4F49C406510BDCAB6824EE7C30FD852" + "\r\n");
  auto r = UserDb::load(priv_);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(hex(*r->lookup("alice")), kPasswordHash);
}

TEST_F(UsersTest, MalformedLinesAreNamed) {
  std::string ok = std::string("alice:") + kPasswordHash + "\n";
  write_file("# c\n" + ok + "bob\n");
  std::string e = load_error();
  EXPECT_NE(e.find(file_ + ":3:"), std::string::npos) << e;
  EXPECT_NE(e.find("expected NAME:HASH"), std::string::npos) << e;

  write_file(ok + "bob:1234\n");
  e = load_error();
  EXPECT_NE(e.find(file_ + ":2:"), std::string::npos) << e;
  EXPECT_NE(e.find("32 hex digits"), std::string::npos) << e;

  write_file(ok + "bob:zz4f49c406510bdcab6824ee7c30fd852\n");
  EXPECT_NE(load_error().find("32 hex digits"), std::string::npos);

  write_file(ok + "ALICE:" + kPasswordHash + "\n");
  e = load_error();
  EXPECT_NE(e.find(":2:"), std::string::npos) << e;
  EXPECT_NE(e.find("listed twice"), std::string::npos) << e;

  write_file(ok + ":" + kPasswordHash + "\n");
  EXPECT_NE(load_error().find("empty user name"), std::string::npos);

  write_file(ok + "a\tb:" + kPasswordHash + "\n");
  EXPECT_NE(load_error().find("control character"), std::string::npos);
}

TEST(UserName, Rules) {
  EXPECT_TRUE(check_user_name("alice").ok());
  EXPECT_TRUE(check_user_name("mary jane").ok());
  EXPECT_TRUE(check_user_name("jos\xc3\xa9").ok());
  EXPECT_FALSE(check_user_name("").ok());
  EXPECT_FALSE(check_user_name("a:b").ok());
  EXPECT_FALSE(check_user_name("a\nb").ok());
  EXPECT_FALSE(check_user_name(std::string("a\0b", 3)).ok());
  EXPECT_FALSE(check_user_name("a\x7f").ok());
  EXPECT_FALSE(check_user_name("#root").ok());
  EXPECT_FALSE(check_user_name(" alice").ok());
  EXPECT_FALSE(check_user_name("alice ").ok());
  EXPECT_FALSE(check_user_name("\xff\xfe").ok());
  EXPECT_FALSE(check_user_name(std::string(257, 'a')).ok());
  EXPECT_TRUE(check_user_name(std::string(256, 'a')).ok());
}

TEST(UserDbPassword, EmptyPasswordAndBadNameAreRefused) {
  UserDb db;
  auto r = db.set_password("alice", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("empty password"), std::string::npos);
  EXPECT_FALSE(db.set_password("a:b", "pw").ok());
  EXPECT_TRUE(db.names().empty());
}

}  // namespace
}  // namespace smbkit::server
