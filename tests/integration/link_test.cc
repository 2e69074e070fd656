// Through the link emulator: a cut mid-transfer must fail clearly and leave
// no file that claims to be complete; a delayed link must still verify.
// smbkit runs in the matrix cell (run_smbkit, fixture.h): the resumes go
// through each dialect's durable handles and each security's re-send.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixture.h"
#include "support/link_emulator.h"
#include "support/samba_server.h"
#include "support/temp_dir.h"

namespace {

namespace st = smbkit::testing;
namespace fs = std::filesystem;

class LinkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = st::SambaServer::start();
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = s->release();
    setenv("SMBKIT_PASSWORD", st::SambaServer::password(), 1);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static std::string url(uint16_t port, const std::string& path) {
    return "smb://smbkit@127.0.0.1:" + std::to_string(port) + "/share/" + path;
  }
  static void write_file(const std::string& p, size_t n) {
    std::ofstream f(p, std::ios::binary);
    std::string chunk(1 << 20, '\0');
    for (size_t i = 0; i < chunk.size(); i++) chunk[i] = static_cast<char>((i * 131 + 7) & 0xff);
    for (size_t done = 0; done < n; done += chunk.size()) f.write(chunk.data(), static_cast<std::streamsize>(std::min(chunk.size(), n - done)));
  }
  static st::SambaServer* server_;
};
st::SambaServer* LinkTest::server_ = nullptr;

// smbkit in the matrix cell unless the test names --vers/--sign/--seal.
st::SambaServer::Output smbkit_cli(const std::vector<std::string>& args, int timeout_s) {
  return smbkit_it::run_smbkit(args, st::SambaServer::password(), timeout_s);
}

// With --no-reconnect a cut fails the transfer (reconnect_test.cc and the
// Resumes tests below cover the default, which reconnects).
TEST_F(LinkTest, CutDuringGetFailsKeepsThePartAndGetCContinues) {
  write_file(server_->share_path("share") + "/big-get.bin", 48u << 20);
  st::LinkOptions o;
  o.target_port = server_->port();
  o.cut_after_bytes = 24u << 20;  // after some whole chunks have arrived
  auto link = st::LinkEmulator::start(o);
  ASSERT_TRUE(link.ok()) << link.error().message();
  st::TempDir tmp;
  std::string local = tmp.path() + "/got.bin";
  auto out = smbkit_cli(
      {"--timeout", "10", "--no-reconnect", "get", url((*link)->port(), "big-get.bin"), local}, 60);
  EXPECT_NE(out.status, 0) << out.out;
  EXPECT_NE(out.out.find("smbkit: "), std::string::npos) << out.out;
  EXPECT_TRUE(out.out.find("STATUS_CONNECTION") != std::string::npos ||
              out.out.find("reset") != std::string::npos)
      << out.out;
  EXPECT_FALSE(fs::exists(local));
  // What arrived is kept under the part name (never the final name) ...
  ASSERT_TRUE(fs::exists(local + ".smbkit-part")) << out.out;
  EXPECT_LT(fs::file_size(local + ".smbkit-part"), 48u << 20);
  EXPECT_NE(out.out.find("get -c"), std::string::npos) << out.out;
  // ... and `get -c` continues it to the right bytes.
  auto again = smbkit_cli({"get", "-c", url(server_->port(), "big-get.bin"), local}, 60);
  ASSERT_EQ(again.status, 0) << again.out;
  auto cmp = st::run_command({"cmp", server_->share_path("share") + "/big-get.bin", local});
  EXPECT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_FALSE(fs::exists(local + ".smbkit-part"));
}

TEST_F(LinkTest, GetCRefusesAPartOfAnotherFile) {
  write_file(server_->share_path("share") + "/other.bin", 1u << 20);
  st::TempDir tmp;
  std::string local = tmp.path() + "/other.bin";
  {
    std::ofstream f(local + ".smbkit-part", std::ios::binary);
    f << std::string(4096, 'x');
  }
  auto out = smbkit_cli({"get", "-c", url(server_->port(), "other.bin"), local}, 60);
  EXPECT_NE(out.status, 0) << out.out;
  EXPECT_NE(out.out.find("does not match"), std::string::npos) << out.out;
  EXPECT_FALSE(fs::exists(local));
}

TEST_F(LinkTest, CutDuringPutFailsAndTargetNeverAppears) {
  st::TempDir tmp;
  std::string src = tmp.path() + "/src.bin";
  write_file(src, 48u << 20);
  st::LinkOptions o;
  o.target_port = server_->port();
  o.cut_after_bytes = 8u << 20;
  auto link = st::LinkEmulator::start(o);
  ASSERT_TRUE(link.ok());
  auto out = smbkit_cli(
      {"--timeout", "10", "--no-reconnect", "put", src, url((*link)->port(), "big-put.bin")}, 60);
  EXPECT_NE(out.status, 0) << out.out;
  EXPECT_FALSE(fs::exists(server_->share_path("share") + "/big-put.bin"));
  // The part stays on the server, and put -c completes it.
  EXPECT_TRUE(fs::exists(server_->share_path("share") + "/big-put.bin.smbkit-part")) << out.out;
  EXPECT_NE(out.out.find("put -c"), std::string::npos) << out.out;
  auto again = smbkit_cli({"put", "-c", src, url(server_->port(), "big-put.bin")}, 60);
  ASSERT_EQ(again.status, 0) << again.out;
  auto cmp = st::run_command({"cmp", src, server_->share_path("share") + "/big-put.bin"});
  EXPECT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_FALSE(fs::exists(server_->share_path("share") + "/big-put.bin.smbkit-part"));
}

TEST_F(LinkTest, PutCWithHolesBelowTheEndStillGivesTheRightFile) {
  // A part whose end is written but whose middle is a hole (as out-of-order
  // WRITEs can leave it): put -c must not trust the part's size.
  st::TempDir tmp;
  std::string src = tmp.path() + "/src.bin";
  const uint64_t n = 300u << 20;
  write_file(src, n);
  std::string part = server_->share_path("share") + "/holes.bin.smbkit-part";
  {
    std::ifstream in(src, std::ios::binary);
    std::ofstream f(part, std::ios::binary);
    std::string buf(1 << 20, '\0');
    for (uint64_t off = 0; off < n - (1u << 20); off += buf.size()) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      // Leave [250 MiB, 251 MiB) zero (never written): within
      // upload_span() of the end, where an interrupted upload can leave one.
      if (off == (250u << 20)) std::fill(buf.begin(), buf.end(), '\0');
      f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    }
  }
  struct passwd* pw = getpwnam(st::SambaServer::user());
  ASSERT_NE(pw, nullptr);
  ASSERT_EQ(chown(part.c_str(), pw->pw_uid, pw->pw_gid), 0);
  auto out = smbkit_cli({"put", "-c", src, url(server_->port(), "holes.bin")}, 120);
  ASSERT_EQ(out.status, 0) << out.out;
  auto cmp = st::run_command({"cmp", src, server_->share_path("share") + "/holes.bin"});
  EXPECT_EQ(cmp.status, 0) << cmp.out;
}

TEST_F(LinkTest, CutDuringGetResumesAfterReconnect) {
  write_file(server_->share_path("share") + "/resume-get.bin", 48u << 20);
  st::LinkOptions o;
  o.target_port = server_->port();
  o.cut_after_bytes = 8u << 20;
  auto link = st::LinkEmulator::start(o);
  ASSERT_TRUE(link.ok()) << link.error().message();
  st::TempDir tmp;
  std::string local = tmp.path() + "/got.bin";
  auto out = smbkit_cli({"--timeout", "10", "get", url((*link)->port(), "resume-get.bin"), local}, 120);
  ASSERT_EQ(out.status, 0) << out.out;
  EXPECT_TRUE((*link)->was_cut());
  auto cmp = st::run_command({"cmp", server_->share_path("share") + "/resume-get.bin", local});
  EXPECT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_FALSE(fs::exists(local + ".smbkit-part"));
}

TEST_F(LinkTest, CutDuringPutResumesAfterReconnect) {
  st::TempDir tmp;
  std::string src = tmp.path() + "/src.bin";
  write_file(src, 48u << 20);
  st::LinkOptions o;
  o.target_port = server_->port();
  o.cut_after_bytes = 8u << 20;
  auto link = st::LinkEmulator::start(o);
  ASSERT_TRUE(link.ok());
  auto out = smbkit_cli({"--timeout", "10", "put", src, url((*link)->port(), "resume-put.bin")}, 120);
  ASSERT_EQ(out.status, 0) << out.out;
  EXPECT_TRUE((*link)->was_cut());
  auto cmp = st::run_command({"cmp", src, server_->share_path("share") + "/resume-put.bin"});
  EXPECT_EQ(cmp.status, 0) << cmp.out;
}

TEST_F(LinkTest, CutDuringSignedAndSealedPutResumesAfterReconnect) {
  // Signed and sealed WRITEs leave from the send workers: a cut while they
  // hold the caller's buffers must still end in a re-send and a whole file.
  st::TempDir tmp;
  std::string src = tmp.path() + "/src.bin";
  write_file(src, 48u << 20);
  for (std::string sec : {"--sign", "--seal"}) {
    SCOPED_TRACE("security: " + sec);
    st::LinkOptions o;
    o.target_port = server_->port();
    o.cut_after_bytes = 8u << 20;
    auto link = st::LinkEmulator::start(o);
    ASSERT_TRUE(link.ok());
    std::string name = "resume-put" + sec + ".bin";
    auto out = smbkit_cli({"--timeout", "10", sec, "put", src, url((*link)->port(), name)}, 120);
    ASSERT_EQ(out.status, 0) << out.out;
    EXPECT_TRUE((*link)->was_cut());
    auto cmp = st::run_command({"cmp", src, server_->share_path("share") + "/" + name});
    EXPECT_EQ(cmp.status, 0) << cmp.out;
  }
}

TEST_F(LinkTest, DelayedLinkRoundTripVerifies) {
  st::TempDir tmp;
  std::string src = tmp.path() + "/src.bin", back = tmp.path() + "/back.bin";
  write_file(src, 6u << 20);
  st::LinkOptions o;
  o.target_port = server_->port();
  o.one_way_delay_ms = 10;  // 20 ms round trip
  o.rate_bytes_per_s = 200e6;
  auto link = st::LinkEmulator::start(o);
  ASSERT_TRUE(link.ok());
  auto put = smbkit_cli({"put", src, url((*link)->port(), "slow.bin")}, 120);
  ASSERT_EQ(put.status, 0) << put.out;
  auto get = smbkit_cli({"get", url((*link)->port(), "slow.bin"), back}, 120);
  ASSERT_EQ(get.status, 0) << get.out;
  auto cmp = st::run_command({"cmp", src, back});
  EXPECT_EQ(cmp.status, 0) << cmp.out;
  EXPECT_GT((*link)->bytes(), 12u << 20);
}

TEST_F(LinkTest, StalledServerTimesOut) {
  // A link that never delivers anything: the client must give up within
  // --timeout instead of hanging.
  st::LinkOptions o;
  o.target_port = server_->port();
  o.one_way_delay_ms = 60000;
  auto link = st::LinkEmulator::start(o);
  ASSERT_TRUE(link.ok());
  auto t0 = std::chrono::steady_clock::now();
  auto out = smbkit_cli({"--timeout", "2", "ls", url((*link)->port(), "")}, 30);
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(out.status, 0);
  EXPECT_NE(out.out.find("STATUS_IO_TIMEOUT"), std::string::npos) << out.out;
  EXPECT_LT(secs, 20.0);  // bound, not a benchmark: 2 s timeout plus slack
}

}  // namespace

