// smbkitd against Samba's own client, smbclient: every dialect with and
// without signing and sealing, its everyday commands, the share list
// (srvsvc over IPC$), and the refusals a user meets (read-only share,
// sealed share, wrong password). The files are checked on the disk behind
// the share.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "smbkitd/smbkitd_suite.h"
#include "support/samba_server.h"
#include "support/temp_dir.h"

namespace smbkit {
namespace {

namespace fs = std::filesystem;
using testing::SambaServer;

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

void write_file(const std::string& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary);
  f << data;
}

std::string random_text(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>('a' + g() % 26);
  return s;
}

class Smbclient : public SmbkitdSuite<Smbclient> {
 protected:
  testing::TempDir local_;
};

TEST_F(Smbclient, ListsTheSharesThroughSrvsvc) {
  auto o = testing::run_command({"smbclient", "-L", "//127.0.0.1", "-p", std::to_string(server_->port()), "-U",
                                 std::string(SambaServer::user())},
                                120, testing::password_env(SambaServer::password()));
  ASSERT_EQ(o.status, 0) << o.out;
  for (const char* s : {"share", "readonly", "secure", "public", "IPC$"})
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  EXPECT_NE(o.out.find("Disk"), std::string::npos) << o.out;
}

struct Mode {
  const char* max_protocol;
  const char* protection;  // --client-protection
};

class SmbclientModes : public Smbclient, public ::testing::WithParamInterface<Mode> {};

TEST_P(SmbclientModes, PutListGetRoundTrip) {
  const Mode m = GetParam();
  const std::string name = std::string("rt_") + m.max_protocol + "_" + m.protection + ".bin";
  const std::string data = random_text(300000, 7);
  write_file(local_.path() + "/up.bin", data);
  auto o = server_->smbclient(
      "share", "put " + local_.path() + "/up.bin " + name + "; ls; get " + name + " " + local_.path() + "/down.bin",
      {"-m", m.max_protocol, std::string("--client-protection=") + m.protection});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find(name), std::string::npos) << o.out;  // listed
  EXPECT_EQ(read_file(server_->share_path("share") + "/" + name), data);
  EXPECT_EQ(read_file(local_.path() + "/down.bin"), data);
}

INSTANTIATE_TEST_SUITE_P(Dialects, SmbclientModes,
                         ::testing::Values(Mode{"SMB2_02", "off"}, Mode{"SMB2_02", "sign"}, Mode{"SMB2_10", "sign"},
                                           Mode{"SMB3_00", "sign"}, Mode{"SMB3_00", "encrypt"},
                                           Mode{"SMB3_02", "encrypt"}, Mode{"SMB3_11", "off"}, Mode{"SMB3_11", "sign"},
                                           Mode{"SMB3_11", "encrypt"}),
                         [](const auto& i) { return std::string(i.param.max_protocol) + "_" + i.param.protection; });

TEST_F(Smbclient, EverydayCommands) {
  const std::string root = server_->share_path("share");
  fs::create_directories(local_.path() + "/tree/sub");
  write_file(local_.path() + "/tree/a.txt", "alpha");
  write_file(local_.path() + "/tree/sub/b.txt", "beta");
  write_file(local_.path() + "/one.txt", "one");
  auto o = server_->smbclient("share", "mkdir dir1; cd dir1; put " + local_.path() +
                                           "/one.txt one.txt; rename one.txt two.txt; cd ..; "
                                           "mkdir gone; rmdir gone; "
                                           "lcd " +
                                           local_.path() +
                                           "/tree; prompt off; recurse on; mkdir m; cd m; mput *; cd ..; "
                                           "put " +
                                           local_.path() + "/one.txt del.txt; del del.txt");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(read_file(root + "/dir1/two.txt"), "one");
  EXPECT_FALSE(fs::exists(root + "/dir1/one.txt"));
  EXPECT_FALSE(fs::exists(root + "/gone"));
  EXPECT_FALSE(fs::exists(root + "/del.txt"));
  EXPECT_EQ(read_file(root + "/m/a.txt"), "alpha");
  EXPECT_EQ(read_file(root + "/m/sub/b.txt"), "beta");

  const std::string back = local_.path() + "/back";
  fs::create_directories(back);
  o = server_->smbclient("share", "lcd " + back + "; prompt off; recurse on; cd m; mget *");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(read_file(back + "/a.txt"), "alpha");
  EXPECT_EQ(read_file(back + "/sub/b.txt"), "beta");
}

TEST_F(Smbclient, ReadOnlyShareRefusesWrites) {
  write_file(server_->share_path("readonly") + "/r.txt", "read me");
  write_file(local_.path() + "/w.txt", "no");
  auto o = server_->smbclient("readonly", "get r.txt " + local_.path() + "/r.txt");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(read_file(local_.path() + "/r.txt"), "read me");
  o = server_->smbclient("readonly", "put " + local_.path() + "/w.txt w.txt");
  EXPECT_NE(o.out.find("NT_STATUS_ACCESS_DENIED"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(server_->share_path("readonly") + "/w.txt"));
}

TEST_F(Smbclient, SealedShareNeedsEncryption) {
  auto o = server_->smbclient("secure", "ls", {"--client-protection=encrypt"});
  EXPECT_EQ(o.status, 0) << o.out;
  o = server_->smbclient("secure", "ls", {"-m", "SMB2_10"});
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("NT_STATUS_ACCESS_DENIED"), std::string::npos) << o.out;
}

TEST_F(Smbclient, WrongPasswordIsRefused) {
  auto o = testing::run_command({"smbclient", "//127.0.0.1/share", "-p", std::to_string(server_->port()), "-U",
                                 std::string(SambaServer::user()) + "%wrong", "-c", "ls"});
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.out.find("NT_STATUS_LOGON_FAILURE"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace smbkit
