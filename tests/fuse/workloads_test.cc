// Debian's own tools as workloads on the mount, a few seconds each, in
// every cache mode: dd (write, read back, compare with the server's copy),
// fio with --verify=crc32c (sequential, and random with iodepth 8 on
// libaio), dbench (Debian's client.txt load, 2 clients), tar (a tree of a
// few hundred small files, extracted onto the mount and compared with
// diff -r on both sides), and stress-ng's --hdd stressor with --verify.
// The tools come from scripts/install-deps.sh (fio, dbench, stress-ng).
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;
namespace st = smbkit::testing;

class Workloads : public Mount, public ::testing::WithParamInterface<const char*> {
 protected:
  // Mounts with the test's cache mode and returns a fresh directory on the
  // mount for this test (the suite's tests share one server and share);
  // sub_ is the same directory's name relative to the share.
  std::string mount_cache() {
    std::string mp = mounted(std::string("cache=") + GetParam());
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    sub_ = std::string(info->name());
    std::replace(sub_.begin(), sub_.end(), '/', '-');
    EXPECT_EQ(::mkdir((mp + "/" + sub_).c_str(), 0777), 0) << sub_ << ": " << strerror(errno);
    return mp + "/" + sub_;
  }
  std::string server_dir() { return share_dir() + "/" + sub_; }
  std::string sub_;

  // Runs a tool and fails (with its output's end) unless it exits 0.
  static st::SambaServer::Output tool(const std::vector<std::string>& argv, int bound_s = 120) {
    auto o = st::run_command(argv, bound_s);
    std::string tail = o.out.size() > 2000 ? o.out.substr(o.out.size() - 2000) : o.out;
    EXPECT_EQ(o.status, 0) << argv[0] << " failed (" << (o.status == 128 + SIGKILL ? "hung, killed" : "exit")
                           << " " << o.status << "):\n" << tail;
    return o;
  }
  // The end of smbd's logs, for failure messages (a dropped connection
  // shows up there, not in the tool's output).
  static std::string smbd_logs() {
    std::string out;
    if (DIR* d = opendir(server_->dir().c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.rfind("log.", 0) != 0) continue;
        std::string text = slurp(server_->dir() + "/" + n);
        out += "== " + n + "\n" + (text.size() > 1500 ? text.substr(text.size() - 1500) : text);
      }
      closedir(d);
    }
    return out;
  }
  static bool have(const std::string& prog) {
    return st::run_command({"sh", "-c", "command -v " + prog}, 10).status == 0;
  }
};

TEST_P(Workloads, DdWriteReadBackMatchesServer) {
  std::string mp = mount_cache();
  st::TempDir local("smbkit-wl");
  std::string src = local.path() + "/src.bin", back = local.path() + "/back.bin";
  ASSERT_TRUE(write_file(src, random_bytes(24u << 20, 201)));
  tool({"dd", "if=" + src, "of=" + mp + "/dd.bin", "bs=1M", "conv=fsync"});
  tool({"dd", "if=" + mp + "/dd.bin", "of=" + back, "bs=256k"});
  std::string want = slurp(src);
  EXPECT_TRUE(same(slurp(back), want)) << "read back through the mount";
  EXPECT_TRUE(same(slurp(server_dir() + "/dd.bin"), want)) << "the server's copy";
  // Odd block size, overwriting in place (no truncate): read-modify-write paths.
  tool({"dd", "if=" + src, "of=" + mp + "/dd.bin", "bs=12345", "count=300", "conv=notrunc,fsync"});
  EXPECT_TRUE(same(slurp(server_dir() + "/dd.bin"), want));
}

// fio writes blocks stamped with crc32c headers, then reads each back and
// checks it (verify_fatal: the first bad block fails the job, exit != 0).
TEST_P(Workloads, FioVerifySequentialAndRandom) {
  ASSERT_TRUE(have("fio")) << "fio is not installed (scripts/install-deps.sh)";
  std::string mp = mount_cache();
  std::vector<std::string> common = {"fio", "--directory=" + mp, "--verify=crc32c", "--verify_fatal=1",
                                     "--do_verify=1", "--size=16m", "--group_reporting=1",
                                     "--verify_state_save=0"};  // no state files in the cwd
  auto run = [&](std::vector<std::string> job) {
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), job.begin(), job.end());
    auto o = tool(argv);
    EXPECT_NE(o.out.find("err= 0"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("verify:"), std::string::npos) << o.out;  // fio's verify failure lines
    EXPECT_EQ(o.out.find("bad magic"), std::string::npos) << o.out;
  };
  run({"--name=seq", "--rw=write", "--bs=256k", "--ioengine=psync"});
  // Random writes, 8 in flight, then every block verified; and a mixed
  // random read/write job (reads of written blocks are verified).
  run({"--name=rand", "--rw=randwrite", "--bs=4k", "--ioengine=libaio", "--iodepth=8", "--numjobs=2",
       "--size=4m"});
  run({"--name=mixed", "--rw=randrw", "--bs=16k", "--ioengine=psync", "--numjobs=2", "--size=4m"});
}

TEST_P(Workloads, DbenchTwoClients) {
  ASSERT_TRUE(have("dbench")) << "dbench is not installed (scripts/install-deps.sh)";
  const std::string loadfile = "/usr/share/dbench/client.txt";
  ASSERT_EQ(access(loadfile.c_str(), R_OK), 0) << loadfile;
  std::string mp = mount_cache();
  auto o = tool({"dbench", "-c", loadfile, "-D", mp, "-t", "4", "2"});
  // dbench reports a failed operation as an "ERROR" or "... failed" line
  // and may still exit 0; the summary line proves the run got to the end.
  // dbench 4.00 always prints "failed to create barrier semaphore" when
  // semget returns id 0 (it tests the id with !): not an error.
  EXPECT_NE(o.out.find("Throughput"), std::string::npos) << o.out.substr(0, 2000) << "\n" << smbd_logs();
  std::istringstream lines(o.out);
  std::string line;
  int bad = 0;
  while (std::getline(lines, line)) {
    if (line.find("barrier semaphore") != std::string::npos) continue;
    if (line.find("ERROR") != std::string::npos || line.find("failed") != std::string::npos ||
        line.find("Failed") != std::string::npos) {
      ADD_FAILURE() << "dbench: " << line;
      if (++bad == 10) break;
    }
  }
}

TEST_P(Workloads, TarExtractOntoMountMatchesLocalAndServer) {
  std::string mp = mount_cache();
  st::TempDir local("smbkit-wl");
  // 300 small files in 10 directories, 0..20 KiB, with a few empty ones.
  std::mt19937 g(301);
  std::string tree = local.path() + "/tree";
  ASSERT_EQ(::mkdir(tree.c_str(), 0755), 0);
  for (int d = 0; d < 10; d++) {
    std::string dir = tree + "/dir" + std::to_string(d);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    for (int f = 0; f < 30; f++) {
      size_t n = f % 11 == 0 ? 0 : g() % 20000;
      ASSERT_TRUE(write_file(dir + "/file-" + std::to_string(f) + ".dat", random_bytes(n, 1000 + d * 100 + f)));
    }
  }
  tool({"tar", "-C", local.path(), "-cf", local.path() + "/tree.tar", "tree"});
  tool({"tar", "-C", mp, "-xf", local.path() + "/tree.tar"});
  auto through = tool({"diff", "-r", tree, mp + "/tree"});
  auto server = tool({"diff", "-r", tree, server_dir() + "/tree"});
  EXPECT_EQ(through.out, "");
  EXPECT_EQ(server.out, "");
  // And back out through the mount: the archive lists the same 310 entries.
  auto again = tool({"tar", "-C", mp, "-cf", local.path() + "/again.tar", "tree"});
  auto list = tool({"tar", "-tf", local.path() + "/again.tar"});
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 311) << list.out.substr(0, 500);
}

// stress-ng's hdd stressor writes, reads back and checks (--verify) with
// several workers and I/O patterns the other tools do not use (random
// and sequential mixed with fsync/fdatasync, small writes, readahead
// hints), concurrently on one mount.
TEST_P(Workloads, StressNgHddVerify) {
  ASSERT_TRUE(have("stress-ng")) << "stress-ng is not installed (scripts/install-deps.sh)";
  std::string mp = mount_cache();
  auto o = tool({"stress-ng", "--hdd", "2", "--hdd-bytes", "4M", "--hdd-write-size", "4K", "--verify", "--timeout",
                 "4s", "--temp-path", mp, "--metrics-brief"});
  EXPECT_EQ(o.out.find("fail"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("successful run completed"), std::string::npos) << o.out;
}

INSTANTIATE_TEST_SUITE_P(Cache, Workloads, ::testing::Values("strict", "none", "loose"),
                         [](const auto& i) { return std::string(i.param); });

}  // namespace
