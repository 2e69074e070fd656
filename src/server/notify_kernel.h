// Changes made to a share's disk by other programs, for CHANGE_NOTIFY:
// inotify, one watch per watched directory (WATCH_TREE adds the
// directories below it, up to kKernelMaxDirsPerWatch), read by a thread of
// its own that reports what it reads through notify_locked. Changes
// smbkitd makes itself are reported by the file layer and also come back
// from the kernel: those are recognised by their path (note_own_changes)
// and dropped. docs/design/server-files.md, "Change notification".
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/notify.h"

namespace smbkit::server {

// Directories one watch may add to inotify (WATCH_TREE), and in all.
inline constexpr size_t kKernelMaxDirsPerWatch = 256;
inline constexpr size_t kKernelMaxDirs = 8192;

// Starts watching `w`'s directory (and, for a tree, those below it).
// Requires nodes_mu. A failure (no inotify, limits) only means changes
// from other programs are not seen.
void watch_kernel(FileService::Impl& impl, NotifyWatch& w, const std::shared_ptr<const Share>& share)
    REQUIRES(impl.nodes_mu);
void unwatch_kernel(FileService::Impl& impl, NotifyWatch& w) REQUIRES(impl.nodes_mu);
// smbkitd changed these paths itself: the kernel's reports of them in the
// next moments are its own and not reported again. Requires nodes_mu.
void note_own_changes(FileService::Impl& impl, const ShareRoot& root, const std::vector<NotifyEvent>& events)
    REQUIRES(impl.nodes_mu);

// The inotify reader (one per FileService, started at the first watch).
// Its tables are guarded by nodes_mu; the thread reads with no lock held
// and takes nodes_mu to report what it read.
class KernelNotify {
 public:
  explicit KernelNotify(FileService::Impl& impl);
  ~KernelNotify();  // stops and joins the thread
  KernelNotify(const KernelNotify&) = delete;
  KernelNotify& operator=(const KernelNotify&) = delete;
  bool ok() const { return fd_ >= 0; }
  void remove(int wd);

  // One inotify watch: a directory under a share root.
  struct Dir {
    ShareRoot root;
    std::string path;
    std::shared_ptr<const Share> share;  // keeps root_fd open for the directories added later
    std::vector<int> ids;                // the NotifyWatch kernel ids using it
    std::vector<int> tree_ids;           // those of them that watch the tree below it
  };
  std::map<int, Dir> dirs;                                                    // by inotify wd
  std::map<int, std::vector<int>> by_id;                                      // kernel id -> its wds
  std::map<std::pair<std::pair<dev_t, ino_t>, std::string>, SteadyTime> own;  // recent own changes
  int next_id = 1;

  // Adds `path` (and with `tree` the directories below it, bounded) for
  // kernel id `id`. Requires nodes_mu.
  void add(int id, const std::shared_ptr<const Share>& share, const ShareRoot& root, const std::string& path,
           bool tree);

  // Reports one read's events (the reader thread's step; tests call it
  // with events of their own). A rename's first half that ends the read
  // waits for the second: rename_pending() says so, and flush_rename()
  // reports it as a removal once it has waited long enough.
  void dispatch(const char* buf, size_t len);
  bool rename_pending();
  void flush_rename();

 private:
  // The first half of a rename (IN_MOVED_FROM), until its other half
  // (IN_MOVED_TO, same cookie) comes.
  struct RenameFrom {
    uint32_t cookie = 0;
    int wd = 0;
    ShareRoot root;
    std::string path;
    bool dir = false;
  };
  bool add_one(int id, const std::shared_ptr<const Share>& share, const ShareRoot& root, const std::string& path,
               bool tree);
  void run();
  // Whether smbkitd itself changed `path` just now (its report is out).
  bool own_recently(const ShareRoot& root, const std::string& path, SteadyTime now) const
      REQUIRES(impl_.nodes_mu);
  FileService::Impl& impl_;
  std::optional<RenameFrom> from_ GUARDED_BY(impl_.nodes_mu);
  int fd_ = -1;
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace smbkit::server
