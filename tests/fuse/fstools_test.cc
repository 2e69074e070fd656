// The file-system checkers (tools/smbkit_fsx.cc, smbkit_fsstress.cc,
// smbkit_twoclient.cc) run against a local directory (sanity: the tools
// themselves) and against smbkit mounts in each cache mode.
#include <regex>

#include "fuse/mount_fixture.h"

namespace smbkit::fuse_testing {
namespace {

const std::string kFsx = SMBKIT_BIN_DIR "/smbkit-fsx";
const std::string kFsstress = SMBKIT_BIN_DIR "/smbkit-fsstress";
const std::string kTwoclient = SMBKIT_BIN_DIR "/smbkit-twoclient";
const std::string kPosixcheck = SMBKIT_BIN_DIR "/smbkit-posixcheck";
constexpr int kPosixCases = 32;

// "key=N" from the tool's summary line; -1 if absent.
long long summary_value(const std::string& out, const std::string& key) {
  std::smatch m;
  std::regex re("(^|\\n)summary:[^\\n]* " + key + "=([0-9]+)");
  if (!std::regex_search(out, m, re)) return -1;
  return std::stoll(m[2]);
}

int count_lines(const std::string& out, const std::string& prefix) {
  int n = 0;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) n++;
  return n;
}

class FsTools : public Mount {
 protected:
  static st::SambaServer::Output run(std::vector<std::string> argv, int timeout_s = 300) {
    return st::run_command(argv, timeout_s);
  }

  // fsx with `ops` operations; checks the summary accounts for all of them.
  // fallocate, punch hole and zero range work on the mount in every cache
  // mode: fsx used each and disabled none.
  // fallocate, hole punching, zeroing and (server-side) copy_file_range
  // ran in the mount, none refused.
  void expect_space_ops() {
    for (const char* k : {"fallocate", "punch", "zero", "copyrange"}) {
      EXPECT_GT(summary_value(last_out_, k), 0) << k << "\n" << last_out_;
      EXPECT_EQ(last_out_.find(std::string("disabled: ") + k), std::string::npos) << last_out_;
    }
  }

  void fsx(const std::string& dir, uint64_t seed, int ops, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {kFsx, "--seed", std::to_string(seed), "--ops", std::to_string(ops),
                                     "--max-size", "131072", "--max-len", "32768", "--check-every", "50"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(dir);
    auto o = run(argv);
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_EQ(summary_value(o.out, "ops"), ops) << o.out;
    EXPECT_GT(summary_value(o.out, "read"), 0) << o.out;
    EXPECT_GT(summary_value(o.out, "write"), 0) << o.out;
    EXPECT_GT(summary_value(o.out, "compares"), ops / 50 - 1) << o.out;
    EXPECT_NE(o.out.find("smbkit-fsx: PASS"), std::string::npos) << o.out;
    last_out_ = o.out;
  }

  void fsstress(const std::string& dir, uint64_t seed, int procs, int ops, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {kFsstress, "-p", std::to_string(procs), "-n", std::to_string(ops),
                                     "--seed", std::to_string(seed)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(dir);
    auto o = run(argv);
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_EQ(summary_value(o.out, "ops"), static_cast<long long>(procs) * ops) << o.out;
    EXPECT_EQ(summary_value(o.out, "errors"), 0) << o.out;
    EXPECT_GT(summary_value(o.out, "s_put"), 0) << o.out;
    EXPECT_NE(o.out.find("smbkit-fsstress: PASS"), std::string::npos) << o.out;
    last_out_ = o.out;
  }

  void twoclient(const std::string& a, const std::string& b, const std::string& checks, bool strict,
                 int expected_checks) {
    std::vector<std::string> argv = {kTwoclient, "--checks", checks};
    if (strict) argv.push_back("--strict");
    // FUSE sends RELEASE after close() returns, so a delete via B can stay
    // pending behind A's not-yet-closed handle (docs/design/fstools.md).
    argv.push_back("--release-wait");
    argv.push_back("5");
    // Coherence through lease breaks is asynchronous: the break reaches the
    // other mount shortly after the writer's WRITE returned (Samba does not
    // hold the WRITE for an R break), so a check polls (bounded) rather
    // than reading once. Without --wait, B read once right after A's write
    // and failed in about 1 of 10 runs.
    argv.push_back("--wait");
    argv.push_back("10");
    argv.push_back(a);
    argv.push_back(b);
    auto o = run(argv, 120);
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_EQ(count_lines(o.out, "PASS "), expected_checks) << o.out;
    EXPECT_EQ(count_lines(o.out, "FAIL "), 0) << o.out;
  }

  void posixcheck(const std::string& dir) {
    auto o = run({kPosixcheck, dir}, 120);
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_EQ(count_lines(o.out, "PASS "), kPosixCases) << o.out;
    EXPECT_EQ(count_lines(o.out, "FAIL "), 0) << o.out;
  }

  std::string last_out_;
};

// SMB (Samba) refuses to rename over a file another handle has open
// (STATUS_ACCESS_DENIED -> EACCES, STATUS_SHARING_VIOLATION -> EBUSY); POSIX
// allows it. Only the shared area tolerates these. See docs/design/fstools.md.
const std::vector<std::string> kSmbShared = {"--tolerate", "EACCES,EBUSY"};

// ---- the tools on a local directory ----

TEST_F(FsTools, FsxLocalDirAllOperationClasses) {
  // On a disk's file system: tmpfs (a TMPDIR of /dev/shm) has no
  // FALLOC_FL_ZERO_RANGE.
  st::TempDir d("smbkit-fsx-local", "/var/tmp");
  fsx(d.path(), 1, 3000);
  // A local file system supports every class: none may be disabled.
  EXPECT_EQ(last_out_.find("disabled:"), std::string::npos) << last_out_;
  for (const char* k : {"truncate", "mapread", "mapwrite", "fallocate", "punch", "zero", "fsync", "reopen", "copyrange"})
    EXPECT_GT(summary_value(last_out_, k), 0) << k << "\n" << last_out_;
}

TEST_F(FsTools, FsxCatchesInjectedCorruptionWithReplayLog) {
  st::TempDir d("smbkit-fsx-fault");
  std::string log = d.path() + "/replay.log";
  auto o = run({kFsx, "--seed", "42", "--ops", "2000", "--inject-fault-at", "300", "--log", log, d.path()});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("FAIL seed=42 op=300"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("data mismatch at file offset"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("expected:"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("smbkit-fsx: PASS"), std::string::npos) << o.out;
  std::string text;
  ASSERT_TRUE(read_file(log, text));
  EXPECT_NE(text.find("INJECTED FAULT"), std::string::npos) << text;
  EXPECT_GE(count_lines(text, "     2") + count_lines(text, "     3"), 40) << text;  // ~50 ops 251..300
}

TEST_F(FsTools, FsxSameSeedSameRun) {
  st::TempDir d("smbkit-fsx-seed");
  fsx(d.path(), 777, 500);
  std::string first = last_out_;
  fsx(d.path(), 777, 500);
  auto line = [](const std::string& s) { return s.substr(s.find("summary:")); };
  EXPECT_EQ(line(first), line(last_out_));
}

TEST_F(FsTools, FsstressLocalDir) {
  st::TempDir d("smbkit-fsstress-local");
  fsstress(d.path(), 3, 4, 400);
  EXPECT_GT(summary_value(last_out_, "link"), 0) << last_out_;
  EXPECT_EQ(last_out_.find("disabled: link"), std::string::npos) << last_out_;
}

TEST_F(FsTools, TwoclientLocalDirAllChecks) {
  st::TempDir d("smbkit-twoclient-local");
  twoclient(d.path(), d.path(), "data,locks,flock", true, 27);
}

TEST_F(FsTools, PosixcheckLocalDir) {
  st::TempDir d("smbkit-posixcheck-local");
  posixcheck(d.path());
}

// ---- against smbkit mounts ----

TEST_F(FsTools, PosixcheckCacheStrict) { posixcheck(mounted("cache=strict,actimeo=0")); }
TEST_F(FsTools, PosixcheckCacheNone) { posixcheck(mounted("cache=none,actimeo=0")); }

TEST_F(FsTools, FsxCacheStrict) {
  std::string mp = mounted("cache=strict");
  fsx(mp, 101, 2500);
  // Page-cache mode: shared writable mmap works.
  EXPECT_GT(summary_value(last_out_, "mapwrite"), 0) << last_out_;
  expect_space_ops();
}

TEST_F(FsTools, FsxCacheNoneRunsSharedMmap) {
  std::string mp = mounted("cache=none");
  fsx(mp, 102, 2500);
  // direct_io opens, yet shared mappings work (FUSE_DIRECT_IO_ALLOW_MMAP):
  // fsx's mapped reads and writes ran and none of them was refused.
  EXPECT_GT(summary_value(last_out_, "mapread"), 0) << last_out_;
  EXPECT_GT(summary_value(last_out_, "mapwrite"), 0) << last_out_;
  EXPECT_EQ(last_out_.find("disabled: map"), std::string::npos) << last_out_;
  expect_space_ops();
}

TEST_F(FsTools, FsxCacheLoose) {
  std::string mp = mounted("cache=loose");
  fsx(mp, 103, 2500);
  expect_space_ops();
}

TEST_F(FsTools, FsstressCacheStrict) {
  std::string mp = mounted("cache=strict");
  fsstress(mp, 201, 4, 400, kSmbShared);
  EXPECT_NE(last_out_.find("disabled: link (EPERM)"), std::string::npos) << last_out_;
}

TEST_F(FsTools, FsstressCacheNone) {
  std::string mp = mounted("cache=none");
  fsstress(mp, 202, 4, 300, kSmbShared);
}

TEST_F(FsTools, FsstressCacheLoose) {
  std::string mp = mounted("cache=loose");
  fsstress(mp, 203, 4, 400, kSmbShared);
}

TEST_F(FsTools, TwoclientDataTwoMountsCacheNone) {
  std::string a = mounted("cache=none,actimeo=0"), b = mounted("cache=none,actimeo=0");
  twoclient(a, b, "data", true, 12);
}

TEST_F(FsTools, TwoclientDataTwoMountsCacheStrict) {
  // --strict: B re-reads while both have the file open. Under cache=strict
  // A's writes may be held back only under a WRITE-caching lease, which
  // the server does not grant while B has the file open.
  std::string a = mounted("cache=strict,actimeo=0"), b = mounted("cache=strict,actimeo=0");
  twoclient(a, b, "data", true, 12);
}

}  // namespace
}  // namespace smbkit::fuse_testing
