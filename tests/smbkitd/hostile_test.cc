// smbkitd against hostile and broken clients, each on its own connection
// while a well-behaved client (impacket, an independent implementation)
// keeps being served: garbage frames, oversized and partial frames held
// open, MessageIds outside the credit window, many idle connections, path
// escapes (`..`, absolute names, a symlink out of the share) and more
// opens than the configured bound. Every refusal costs the offending
// connection or request only.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "smbkitd/smbkitd_suite.h"
#include "support/samba_server.h"

namespace smbkit {
namespace {

namespace fs = std::filesystem;
using testing::SambaServer;

const std::string kScript = std::string(SMBKIT_SOURCE_DIR) + "/tests/smbkitd/impacket_client.py";

class Hostile : public SmbkitdSuite<Hostile> {
 public:
  static std::vector<std::string> global() { return {"smbkitd:max open files = 100"}; }

 protected:
  static testing::SambaServer::Output impacket(std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/python3", kScript, std::to_string(server_->port()), SambaServer::user(),
                                     SambaServer::password()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::run_command(argv, 120);
  }
  // A well-behaved client is still served.
  static void still_serving() {
    auto o = impacket({"roundtrip", "share", "alive.bin", "10000"});
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_EQ(o.out, "ok\n");
  }
  static int dial() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(server_->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  // Whether the server closed `fd` within `ms` (reads until EOF).
  static bool closed_within(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    char buf[4096];
    for (int waited = 0; waited < ms;) {
      if (poll(&p, 1, 100) == 1) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) return true;
      } else {
        waited += 100;
      }
    }
    return false;
  }
};

TEST_F(Hostile, GarbageFrameCostsItsConnection) {
  int fd = dial();
  std::mt19937 g(1);
  unsigned char frame[4 + 200] = {0, 0, 0, 200};
  for (size_t i = 4; i < sizeof frame; i++) frame[i] = g();
  ASSERT_EQ(write(fd, frame, sizeof frame), ssize_t(sizeof frame));
  EXPECT_TRUE(closed_within(fd, 5000));
  close(fd);
  still_serving();
}

TEST_F(Hostile, OversizedFrameBeforeLogonIsRefusedAtOnce) {
  int fd = dial();
  unsigned char hdr[4] = {0, 0xff, 0xff, 0xff};  // 16 MiB - 1 announced
  ASSERT_EQ(write(fd, hdr, 4), 4);
  EXPECT_TRUE(closed_within(fd, 5000));
  close(fd);
  still_serving();
}

TEST_F(Hostile, PartialFramesHeldOpenDoNotStallOthers) {
  std::vector<int> fds;
  for (int i = 0; i < 50; i++) {
    int fd = dial();
    unsigned char part[14] = {0, 0, 0x10, 0, 0xfe, 'S', 'M', 'B', 64, 0};  // 4096 announced, 10 sent
    ASSERT_EQ(write(fd, part, sizeof part), ssize_t(sizeof part));
    fds.push_back(fd);
  }
  still_serving();
  for (int fd : fds) close(fd);
}

TEST_F(Hostile, NegotiateOutsideTheCreditWindowEndsTheConnection) {
  // A well-formed SMB2 NEGOTIATE header with MessageId 5: only 0 is granted.
  unsigned char m[4 + 64 + 36 + 2] = {};
  m[3] = 64 + 36 + 2;
  unsigned char* h = m + 4;
  h[0] = 0xfe, h[1] = 'S', h[2] = 'M', h[3] = 'B', h[4] = 64;
  h[24] = 5;  // MessageId
  unsigned char* b = h + 64;
  b[0] = 36;                   // StructureSize
  b[2] = 1;                    // DialectCount
  b[36] = 0x02, b[37] = 0x02;  // 2.0.2
  int fd = dial();
  ASSERT_EQ(write(fd, m, sizeof m), ssize_t(sizeof m));
  EXPECT_TRUE(closed_within(fd, 5000));
  close(fd);
  still_serving();
}

TEST_F(Hostile, ManyIdleConnectionsDoNotStallOthers) {
  std::vector<int> fds;
  for (int i = 0; i < 300; i++) fds.push_back(dial());
  still_serving();
  for (int fd : fds) close(fd);
}

TEST_F(Hostile, PathsOutsideTheShareAreRefused) {
  // A symlink inside the share that leads out of it.
  std::error_code ec;
  fs::create_directory_symlink("/etc", server_->share_path("share") + "/out", ec);
  for (const char* name :
       {"..\\..\\..\\..\\etc\\passwd", "..\\share\\x", "\\etc\\passwd", "out\\passwd", "sub\\..\\..\\etc\\passwd"}) {
    auto o = impacket({"open", "share", name});
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_NE(o.out, "STATUS_SUCCESS\n") << name;
    EXPECT_FALSE(o.out.empty()) << name;
  }
  still_serving();
}

TEST_F(Hostile, OpensPastTheBoundAreRefused) {
  auto o = impacket({"opens", "share", "150"});
  ASSERT_EQ(o.status, 0) << o.out;
  std::istringstream in(o.out);
  int opened = -1;
  std::string first_error;
  in >> opened >> first_error;
  EXPECT_EQ(opened, 100) << o.out;
  EXPECT_NE(first_error, "none") << o.out;
  still_serving();
}

// An independent parser reads the descriptor: a file smbkitd did not
// give one is described by its mode and owner (owner rw, group and
// others r: three allow ACEs).
TEST_F(Hostile, ImpacketReadsASecurityDescriptor) {
  const std::string path = server_->share_path("share") + "/sd.txt";
  { std::ofstream(path) << "x"; }
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto o = impacket({"sd", "share", "sd.txt"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("owner S-1-22-1-" + std::to_string(geteuid()) + "\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("group S-1-22-2-" + std::to_string(getegid()) + "\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ace 0 0x001f01ff S-1-22-1-"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ace 0 0x001200a9 S-1-1-0\n"), std::string::npos) << o.out;
}

TEST_F(Hostile, ImpacketListsTheShares) {
  auto o = impacket({"shares"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("share\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("IPC$\n"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace smbkit
