// get keeps the network busy while the local side is slow: the local
// writes run on a thread of their own, so a write that blocks does not
// stop the READs. The smbkit binary against a real server, its standard
// output a pipe the test does not read until the end, its protocol trace
// (-vv, on standard error) the record of what it received meanwhile.
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "cli/chunk_writer.h"
#include "fixture.h"

namespace smbkit_it {
namespace {

// `smbkit -vv ARGS` with stdout and stderr on pipes of their own.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kSmbkitBin};
    auto cell = env_cli_args();
    if (cell) argv.insert(argv.end(), cell->begin(), cell->end());
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = {std::string("SMBKIT_PASSWORD=") + st::SambaServer::password(),
                                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    // Everything allocated before fork: the child only calls exec-safe functions.
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    int o[2], r[2];
    if (pipe2(o, O_CLOEXEC) != 0) return;
    if (pipe2(r, O_CLOEXEC) != 0) {
      close(o[0]), close(o[1]);
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(o[1], 1);
      dup2(r[1], 2);
      int null = open("/dev/null", O_RDONLY);
      dup2(null, 0);
      execve(a[0], a.data(), e.data());
      _exit(127);
    }
    close(o[1]);
    close(r[1]);
    out_ = o[0];
    err_ = r[0];
    fcntl(err_, F_SETFL, O_NONBLOCK);
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }
  pid_t pid() const { return pid_; }
  // Reads what stderr has, waiting at most `wait` for some.
  void drain_err(std::chrono::milliseconds wait) {
    pollfd p{err_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return;
    char buf[65536];
    ssize_t n;
    while ((n = read(err_, buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
  }
  // Reads stdout to its end (and stderr meanwhile), for at most `limit`;
  // then the exit status (-1: still running).
  int finish(Bytes& got, std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    std::byte buf[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      drain_err(std::chrono::milliseconds(0));
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t n = read(out_, buf, sizeof buf);
      if (n > 0) got.insert(got.end(), buf, buf + n);
      else if (n == 0) break;
      else if (errno != EINTR) break;
    }
    int st = 0;
    for (int i = 0; i < 100; i++) {
      drain_err(std::chrono::milliseconds(0));
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        drain_err(std::chrono::milliseconds(0));
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }
  std::string err;  // stderr so far

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
};

// READ responses in a -vv trace, interim ones (STATUS_PENDING) left out.
size_t reads_answered(const std::string& trace) {
  size_t n = 0, at = 0;
  while ((at = trace.find("<- READ ", at)) != std::string::npos) {
    size_t eol = trace.find('\n', at);
    if (eol == std::string::npos) break;  // a line still being written
    if (eol < 9 || trace.compare(eol - 9, 9, "(interim)") != 0) n++;
    at = eol;
  }
  return n;
}

class CliSlowTarget : public ServerSuite<CliSlowTarget> {
 protected:
  static std::string url(const std::string& path) { return server().url("share") + "/" + path; }
  static std::string remote_file(const std::string& prefix, const Bytes& data) {
    std::string name = unique_name(prefix) + ".bin";
    EXPECT_TRUE(write_local(share_dir() + "/" + name, data));
    return name;
  }
};

// A local file system without room: the write that fails, on the writer's
// thread, is what get reports (with the part file's name), and the part
// is removed; the same for a device that is always full, written in order.
TEST_F(CliSlowTarget, LocalWriteFailuresAreReportedOnTheFile) {
  st::TempDir tmp("smbkit-it");
  const std::string small = tmp.path() + "/small";
  ASSERT_TRUE(fs::create_directories(small));
  ASSERT_EQ(::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=5m"), 0) << std::strerror(errno);
  std::string name = remote_file("disk-full", random_bytes(24u << 20, 72));
  auto o = run_smbkit({"get", url(name), small + "/x.bin"});
  std::vector<std::string> left;
  for (auto& e : fs::directory_iterator(small)) left.push_back(e.path().filename());
  ::umount2(small.c_str(), MNT_DETACH);
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find(small + "/x.bin.smbkit-part: ENOSPC"), std::string::npos) << o.out;
  EXPECT_TRUE(left.empty()) << left.front();

  const std::string full = tmp.path() + "/full";
  ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
  o = run_smbkit({"get", url(name), full});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find(full + ": ENOSPC"), std::string::npos) << o.out;
}

// The first chunk's write blocks on a pipe that holds 64 KiB, and nothing
// is read from it until the get has closed the remote file. The file is
// as large as the writer's bound: every chunk is handed to the writer
// while its first write is blocked, so the READ loop ends and the remote
// file is closed, every READ answered before a byte of output was taken.
// Written in the READ-issuing thread, the get would wait in that first
// write and never close the file until the output was read.
TEST_F(CliSlowTarget, ReadsKeepFlowingWhileALocalWriteIsBlocked) {
  Bytes data = random_bytes(static_cast<size_t>(smbkit::cli::ChunkWriter::kDefaultBound), 71);
  std::string name = unique_name("slow-target") + ".bin";
  ASSERT_TRUE(write_local(share_dir() + "/" + name, data));
  Child c({"-vv", "get", url(name), "-"});
  ASSERT_GT(c.pid(), 0);
  // Wait (at most 60 s) for the CLOSE that follows the READs.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  size_t close_at = std::string::npos;
  while (std::chrono::steady_clock::now() < deadline) {
    c.drain_err(std::chrono::milliseconds(200));
    size_t first_read = c.err.find("<- READ ");
    if (first_read != std::string::npos) close_at = c.err.find("-> CLOSE ", first_read);
    if (close_at != std::string::npos) break;
  }
  const size_t reads_before = reads_answered(c.err.substr(0, std::min(close_at, c.err.size())));
  EXPECT_NE(close_at, std::string::npos) << "the remote file was not read to its end while the output was not read; "
                                         << reads_before << " READs answered";
  Bytes got;
  EXPECT_EQ(c.finish(got, std::chrono::seconds(60)), 0) << c.err.substr(c.err.size() > 2000 ? c.err.size() - 2000 : 0);
  IT_EXPECT_SAME_BYTES(got, data);
  // Every READ answered was answered before the output was read.
  EXPECT_EQ(reads_answered(c.err), reads_before);
  EXPECT_GE(reads_before, 1u);
}

}  // namespace
}  // namespace smbkit_it
