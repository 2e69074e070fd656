// get never replaces what the local path is, and uploads do not follow
// local symlinks unless asked: the smbkit binary against
// a real smbd, local nodes made by the test in its own directory.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "fixture.h"

namespace smbkit_it {
namespace {

class CliLocal : public ServerSuite<CliLocal> {
 protected:
  static st::SambaServer::Output smbkit(const std::vector<std::string>& args) { return run_smbkit(args); }
  static std::string url(const std::string& path) { return server().url("share") + "/" + path; }
  // A file on the share; its name.
  static std::string remote_file(const std::string& prefix, const Bytes& data) {
    std::string name = unique_name(prefix) + ".bin";
    EXPECT_TRUE(write_local(share_dir() + "/" + name, data));
    return name;
  }
};

mode_t lmode(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & S_IFMT : 0;
}

std::string link_target(const std::string& p) {
  std::error_code ec;
  auto t = fs::read_symlink(p, ec);
  return ec ? "<not a link>" : t.string();
}

TEST_F(CliLocal, GetIntoACharacterDeviceWritesIntoIt) {
  st::TempDir tmp("smbkit-it");
  const std::string dev = tmp.path() + "/null";
  // The same device as /dev/null (1, 3), made here so that a failure
  // cannot break the machine's.
  ASSERT_EQ(::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << std::strerror(errno);
  auto name = remote_file("cli-dev", random_bytes(300000, 61));
  auto o = smbkit({"get", url(name), dev});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lmode(dev), S_IFCHR);
  EXPECT_FALSE(fs::exists(dev + ".smbkit-part"));
  // -c has nothing to continue in a device.
  o = smbkit({"get", "-c", url(name), dev});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_EQ(lmode(dev), S_IFCHR);
}

TEST_F(CliLocal, GetIntoAFifoWritesIntoIt) {
  st::TempDir tmp("smbkit-it");
  const std::string fifo = tmp.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  Bytes data = random_bytes((1u << 20) + 7, 62);
  auto name = remote_file("cli-fifo", data);
  // The reader opens without waiting for a writer and reads until the
  // writer closes, for at most 60 s.
  Bytes got;
  std::thread reader([&] {
    int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::byte buf[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) got.insert(got.end(), buf, buf + n);
      else if (n == 0) break;  // POLLHUP: the writer came and went
      else if (errno != EAGAIN && errno != EINTR) break;
    }
    ::close(fd);
  });
  auto o = smbkit({"get", url(name), fifo});
  reader.join();
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lmode(fifo), S_IFIFO);
  IT_EXPECT_SAME_BYTES(got, data);
}

TEST_F(CliLocal, GetIntoASocketFailsAndLeavesIt) {
  st::TempDir tmp("smbkit-it");
  const std::string sock = tmp.path() + "/sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  auto name = remote_file("cli-sock", to_bytes("x"));
  auto o = smbkit({"get", url(name), sock});
  ::close(fd);
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("socket"), std::string::npos) << o.out;
  EXPECT_EQ(lmode(sock), S_IFSOCK);
}

TEST_F(CliLocal, GetThroughASymlinkKeepsTheLink) {
  st::TempDir tmp("smbkit-it");
  ASSERT_TRUE(fs::create_directories(tmp.path() + "/real"));
  const std::string target = tmp.path() + "/real/target.bin", link = tmp.path() + "/link";
  ASSERT_TRUE(write_local(target, to_bytes("old content")));
  fs::create_symlink("real/target.bin", link);
  Bytes data = random_bytes(200000, 63);
  auto name = remote_file("cli-link", data);
  auto o = smbkit({"get", url(name), link});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lmode(link), S_IFLNK);
  EXPECT_EQ(link_target(link), "real/target.bin");
  IT_EXPECT_SAME_BYTES(slurp(target), data);
  EXPECT_FALSE(fs::exists(tmp.path() + "/real/target.bin.smbkit-part"));
  EXPECT_FALSE(fs::exists(link + ".smbkit-part"));
  // A dangling link is not written through.
  fs::create_symlink("real/nowhere.bin", tmp.path() + "/dangling");
  o = smbkit({"get", url(name), tmp.path() + "/dangling"});  // ENOENT: exit status 5
  EXPECT_EQ(o.status, 5) << o.out;
  EXPECT_EQ(lmode(tmp.path() + "/dangling"), S_IFLNK);
  EXPECT_FALSE(fs::exists(tmp.path() + "/real/nowhere.bin"));
}

TEST_F(CliLocal, GetIntoADirectoryWritesDirSlashName) {
  st::TempDir tmp("smbkit-it");
  Bytes data = random_bytes(5000, 64);
  auto name = remote_file("cli-dir", data);
  ASSERT_TRUE(fs::create_directories(tmp.path() + "/dir"));
  auto o = smbkit({"get", url(name), tmp.path() + "/dir"});
  ASSERT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/dir/" + name), data);
  // And through a link to a directory; the link stays.
  fs::create_symlink("dir", tmp.path() + "/dirlink");
  ASSERT_TRUE(fs::remove(tmp.path() + "/dir/" + name));
  o = smbkit({"get", url(name), tmp.path() + "/dirlink"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lmode(tmp.path() + "/dirlink"), S_IFLNK);
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/dir/" + name), data);
}

// A resumed download reports what this run moved, not the whole file.
TEST_F(CliLocal, ResumedGetReportsTheBytesItMoved) {
  st::TempDir tmp("smbkit-it");
  Bytes data = random_bytes(3u << 20, 66);
  auto name = remote_file("cli-resume", data);
  const std::string local = tmp.path() + "/r.bin";
  ASSERT_TRUE(write_local(local + ".smbkit-part", Bytes(data.begin(), data.begin() + (2u << 20))));
  auto o = smbkit({"--stats", "get", "-c", url(name), local});
  ASSERT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(local), data);
  EXPECT_NE(o.out.find(": 1.0 MiB in "), std::string::npos) << o.out;
  // The amount moved, not the rate: "(33.0 MiB/s)" contains "3.0 MiB".
  EXPECT_EQ(o.out.find(": 3.0 MiB in "), std::string::npos) << o.out;
}

TEST_F(CliLocal, SymlinkPlantedAtThePartFileIsNotFollowed) {
  st::TempDir tmp("smbkit-it");
  const std::string victim = tmp.path() + "/victim.txt", local = tmp.path() + "/out.bin";
  ASSERT_TRUE(write_local(victim, to_bytes("victim")));
  fs::create_symlink(victim, local + ".smbkit-part");
  Bytes data = random_bytes(100000, 65);
  auto name = remote_file("cli-part", data);
  auto o = smbkit({"get", url(name), local});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(slurp_str(victim), "victim");
  EXPECT_EQ(lmode(victim), S_IFREG);
  EXPECT_EQ(lmode(local), S_IFREG);
  IT_EXPECT_SAME_BYTES(slurp(local), data);
  EXPECT_FALSE(fs::exists(local + ".smbkit-part"));
  // get -c does not continue into a planted link, nor a hard link.
  const std::string local2 = tmp.path() + "/out2.bin";
  fs::create_symlink(victim, local2 + ".smbkit-part");
  o = smbkit({"get", "-c", url(name), local2});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_EQ(slurp_str(victim), "victim");
  const std::string local3 = tmp.path() + "/out3.bin";
  fs::create_hard_link(victim, local3 + ".smbkit-part");
  o = smbkit({"get", "-c", url(name), local3});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_EQ(slurp_str(victim), "victim");
  // Without -c the hard link is replaced, not written through.
  o = smbkit({"get", url(name), local3});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(slurp_str(victim), "victim");
  IT_EXPECT_SAME_BYTES(slurp(local3), data);
}

// cp -r down into a directory that already holds symlinks where the
// server's entries go: nothing is written through them, and they stay.
TEST_F(CliLocal, RecursiveGetDoesNotWriteThroughExistingSymlinks) {
  const std::string d = unique_name("cli-links-down");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d));
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d + "/sub"));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/sub/x.txt", to_bytes("x")));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/f.txt", to_bytes("f")));
  st::TempDir tmp("smbkit-it");
  const std::string dest = tmp.path() + "/dest", mine = dest + "/" + d;
  ASSERT_TRUE(fs::create_directories(mine));
  ASSERT_TRUE(fs::create_directories(tmp.path() + "/elsewhere"));
  ASSERT_TRUE(write_local(tmp.path() + "/victim.txt", to_bytes("victim")));
  fs::create_symlink("../../elsewhere", mine + "/sub");
  fs::create_symlink("../../victim.txt", mine + "/f.txt");
  auto o = smbkit({"cp", "-r", url(d), dest});
  EXPECT_EQ(o.status, 3) << o.out;
  EXPECT_NE(o.out.find(", 2 failed"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(mine + "/sub is a symbolic link"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(mine + "/f.txt exists and is a symbolic link"), std::string::npos) << o.out;
  EXPECT_TRUE(fs::is_empty(tmp.path() + "/elsewhere"));
  EXPECT_EQ(slurp_str(tmp.path() + "/victim.txt"), "victim");
  EXPECT_EQ(lmode(mine + "/sub"), S_IFLNK);
  EXPECT_EQ(lmode(mine + "/f.txt"), S_IFLNK);
}

// A tree with a file, a symlink to a file outside it, and a loop.
struct LinkTree {
  std::string root;
  explicit LinkTree(const std::string& base) : root(base + "/tree") {
    EXPECT_TRUE(fs::create_directories(root + "/sub"));
    EXPECT_TRUE(write_local(root + "/real.txt", to_bytes("real")));
    EXPECT_TRUE(write_local(root + "/sub/deep.txt", to_bytes("deep")));
    EXPECT_TRUE(write_local(base + "/outside.txt", to_bytes("outside")));
    fs::create_symlink("../outside.txt", root + "/link.txt");
    fs::create_symlink("..", root + "/sub/loop");
  }
};

TEST_F(CliLocal, UploadSkipsSymlinksByDefault) {
  st::TempDir tmp("smbkit-it");
  LinkTree t(tmp.path());
  const std::string remote = unique_name("cli-nofollow");
  auto o = smbkit({"cp", "-r", t.root, url(remote)});
  ASSERT_EQ(o.status, 0) << o.out;
  const std::string r = share_dir() + "/" + remote;
  EXPECT_EQ(slurp_str(r + "/real.txt"), "real");
  EXPECT_EQ(slurp_str(r + "/sub/deep.txt"), "deep");
  EXPECT_FALSE(fs::exists(r + "/link.txt"));
  EXPECT_FALSE(fs::exists(r + "/sub/loop"));
  EXPECT_NE(o.out.find("warning: " + t.root + "/link.txt: symbolic link skipped"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("warning: " + t.root + "/sub/loop: symbolic link skipped"), std::string::npos) << o.out;

  // put of a symlink is refused, and names --follow; with it, the target
  // is uploaded.
  o = smbkit({"put", t.root + "/link.txt", url(remote + "/put.txt")});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("--follow"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(r + "/put.txt"));
  o = smbkit({"put", "--follow", t.root + "/link.txt", url(remote + "/put.txt")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(slurp_str(r + "/put.txt"), "outside");
}

TEST_F(CliLocal, UploadFollowsWithFollowAndStopsAtLoops) {
  st::TempDir tmp("smbkit-it");
  LinkTree t(tmp.path());
  const std::string remote = unique_name("cli-follow");
  auto t0 = std::chrono::steady_clock::now();
  auto o = smbkit({"cp", "-r", "--follow", t.root, url(remote)});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  ASSERT_EQ(o.status, 0) << o.out;
  const std::string r = share_dir() + "/" + remote;
  EXPECT_EQ(slurp_str(r + "/real.txt"), "real");
  EXPECT_EQ(slurp_str(r + "/link.txt"), "outside");
  EXPECT_EQ(slurp_str(r + "/sub/deep.txt"), "deep");
  EXPECT_FALSE(fs::exists(r + "/sub/loop"));
  EXPECT_NE(o.out.find(t.root + "/sub/loop: symbolic link loop"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace smbkit_it
