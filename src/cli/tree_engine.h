// What tree copies (cp -r) and sync share: many files in flight over a
// few connections through a pool of workers, each waiting for one file at a
// time, and the per-file steps they run.
#pragma once

#include <sys/stat.h>

#include <optional>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <semaphore>
#include <string>
#include <vector>

#include "base/worker_pool.h"
#include "cli/context.h"
#include "cli/local_fs.h"

namespace smbkit::cli {

// Files in flight at once on the one connection: each worker waits for
// one file's compound (or its pipelined transfer), so this many round
// trips overlap. Large files hold a window of their own: fewer of them.
inline constexpr int kFilesInFlight = 32;
inline constexpr std::ptrdiff_t kLargeInFlight = 2;
// Connections (each its own session) a tree's files are spread over
// unless --connections says otherwise: a server may run one connection's
// requests on one core (smbd forks a process per connection), and small
// files are bound by the server's work per request, not by the link.
inline constexpr int kTreeConnections = 2;

using SharedFd = std::shared_ptr<UniqueFd>;

// What a tree copy did, for the summary; shared by the workers.
struct Tally {
  std::atomic<uint64_t> files{0}, bytes{0}, skipped{0}, removed{0};
};

struct Engine {
  Context& c;
  client::Tree& t;  // directories, listings and removals: the walker's
  Tally tally;
  std::counting_semaphore<kLargeInFlight> large{kLargeInFlight};
  // trees: the same share on each connection the files are spread over,
  // t first.
  Engine(Context& ctx, std::vector<client::Tree*> trees) : c(ctx), t(*trees.at(0)), trees_(std::move(trees)) {}
  // The tree a file's requests go on: the connections in turn.
  client::Tree& file_tree() { return *trees_[next_.fetch_add(1, std::memory_order_relaxed) % trees_.size()]; }
  // Blocks while the queue is full.
  void submit(std::function<void()> job) { pool->submit(std::move(job)); }
  // Waits for every file handed out.
  void finish() { pool.reset(); }

 private:
  std::vector<client::Tree*> trees_;
  std::atomic<size_t> next_{0};

 public:
  // Declared last: destroyed (its queue run, its threads joined) first.
  std::unique_ptr<WorkerPool> pool = std::make_unique<WorkerPool>(kFilesInFlight, 2 * kFilesInFlight);
};

// A directory's modification time, set once everything below it is
// written (as rsync -t and rclone do: writing an entry moves the time).
// Each file job in the directory and each subdirectory holds a reference;
// the last to let go runs `set` (on a worker, or on the walker). A
// subdirectory's holds its parent's, so a parent's time is set after its
// children's.
class DirTime {
 public:
  DirTime(std::function<void()> set, std::shared_ptr<DirTime> parent)
      : set_(std::move(set)), parent_(std::move(parent)) {}
  DirTime(const DirTime&) = delete;
  DirTime& operator=(const DirTime&) = delete;
  ~DirTime() {
    if (set_) set_();
  }

 private:
  std::function<void()> set_;
  std::shared_ptr<DirTime> parent_;  // released after set_ ran
};
using DirTimeRef = std::shared_ptr<DirTime>;

// The DirTime of a local directory (its descriptor): LastWriteTime
// `filetime` by futimens; a failure is reported under `shown`.
DirTimeRef local_dir_time(Context& c, SharedFd dir, uint64_t filetime, const std::string& shown, DirTimeRef parent);
// The DirTime of the remote directory rdir: LastWriteTime by SET_INFO
// FileBasicInformation; a failure is reported under `shown`.
DirTimeRef remote_dir_time(Engine& w, const std::string& rdir, uint64_t filetime, const std::string& shown,
                           DirTimeRef parent);

// Reports a file that failed (Context::file_failed) and goes on; the
// message never names a part file (the user never asked for one).
void failed(Context& c, const std::string& shown, const Error& e);
// A local entry of dir_fd about to be uploaded (shown: its local path):
// its lstat, or nothing once a name the server cannot take or a failed
// lstat is reported as failed.
std::optional<struct stat> local_entry_to_upload(Context& c, int dir_fd, const std::string& name,
                                                 const std::string& shown);
// Counts a skipped entry and warns with why.
void skipped(Tally& tally, const std::string& what, const std::string& why);
// "VERB: N files, SIZE, N skipped, N failed" on stderr (not with -q).
void summary(Context& c, const Tally& t, const char* verb);

// One remote file into dir/name (shown: its local path), with the
// server's LastWriteTime; counted in the tally or reported as failed.
// listed_size picks the one-compound path.
void download_one(Engine& w, const std::string& rpath, const SharedFd& dir, const std::string& name,
                  const std::string& shown, uint64_t listed_size);
// The open local file f (st its fstat) to rpath, with its mtime.
void upload_one(Engine& w, const SharedFd& f, const struct stat& st, const std::string& shown,
                const std::string& rpath, bool name_is_new = false);
// rm -r of the remote directory rdir: whether all of it went.
bool remove_dir(Engine& w, const std::string& rdir);

}  // namespace smbkit::cli
