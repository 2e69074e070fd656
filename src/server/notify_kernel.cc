// inotify for CHANGE_NOTIFY: what other programs change on a share's disk.
// See notify_kernel.h.
#include "server/notify_kernel.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <optional>

#include "base/log.h"
#include "server/path.h"

namespace smbkit::server {

using namespace proto;

namespace {

constexpr uint32_t kWatchMask =
    IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY | IN_ONLYDIR | IN_EXCL_UNLINK;
// How long a path smbkitd changed hides the kernel's reports of it: the
// kernel's event follows the change at once, so this only needs to cover
// the reader's delay.
constexpr std::chrono::milliseconds kOwnChangeWindow{2000};
constexpr size_t kMaxOwnChanges = 4096;
constexpr std::chrono::milliseconds kOwnNoteDelay{50};
constexpr size_t kReadBufferSize = 64 * 1024;
// The kernel queues a rename's two halves one after the other, but a read
// may end between them: the first half waits this long for the second
// before it is reported as a removal.
constexpr int kRenamePairWaitMs = 100;

// What a metadata change (chmod, chown, utimes, xattrs) may be: inotify
// says only IN_ATTRIB.
constexpr uint32_t kAttribFilter = FILE_NOTIFY_CHANGE_ATTRIBUTES | FILE_NOTIFY_CHANGE_LAST_WRITE |
                                   FILE_NOTIFY_CHANGE_LAST_ACCESS | FILE_NOTIFY_CHANGE_CREATION |
                                   FILE_NOTIFY_CHANGE_SECURITY | FILE_NOTIFY_CHANGE_EA;
constexpr uint32_t kModifyFilter = FILE_NOTIFY_CHANGE_LAST_WRITE | FILE_NOTIFY_CHANGE_SIZE;

uint32_t name_filter(bool dir) { return dir ? FILE_NOTIFY_CHANGE_DIR_NAME : FILE_NOTIFY_CHANGE_FILE_NAME; }

std::string join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

}  // namespace

KernelNotify::KernelNotify(FileService::Impl& impl) : impl_(impl) {
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    SMBKIT_LOG(warn, "inotify unavailable ({}): changes by other programs are not notified", errno);
    return;
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  thread_ = std::thread([this] { run(); });
}

KernelNotify::~KernelNotify() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  if (fd_ >= 0) ::close(fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void KernelNotify::remove(int wd) { (void)inotify_rm_watch(fd_, wd); }

bool KernelNotify::add_one(int id, const std::shared_ptr<const Share>& share, const ShareRoot& root,
                           const std::string& path, bool tree) {
  if (dirs.size() >= kKernelMaxDirs) return false;
  const int dfd = open_beneath(share->root_fd, path, O_PATH | O_DIRECTORY);
  if (dfd < 0) return false;
  // inotify takes a name: the directory's own fd names it exactly.
  char proc[64];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", dfd);
  const int wd = inotify_add_watch(fd_, proc, kWatchMask);
  ::close(dfd);
  if (wd < 0) return false;
  Dir& d = dirs[wd];
  if (d.ids.empty()) {
    d.root = root;
    d.path = path;
    d.share = share;
  }
  if (std::find(d.ids.begin(), d.ids.end(), id) == d.ids.end()) {
    d.ids.push_back(id);
    by_id[id].push_back(wd);
  }
  if (tree && std::find(d.tree_ids.begin(), d.tree_ids.end(), id) == d.tree_ids.end()) d.tree_ids.push_back(id);
  return true;
}

void KernelNotify::add(int id, const std::shared_ptr<const Share>& share, const ShareRoot& root,
                       const std::string& path, bool tree) {
  if (!ok() || !add_one(id, share, root, path, tree) || !tree) return;
  // The directories below, breadth first, up to the bound.
  std::deque<std::string> todo{path};
  size_t added = 1;
  while (!todo.empty() && added < kKernelMaxDirsPerWatch) {
    const std::string dir = std::move(todo.front());
    todo.pop_front();
    const int dfd = open_beneath(share->root_fd, dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0) continue;
    DIR* d = fdopendir(dfd);
    if (!d) {
      ::close(dfd);
      continue;
    }
    while (dirent* e = readdir(d)) {
      const std::string_view name = e->d_name;
      if (name == "." || name == ".." || e->d_type != DT_DIR) continue;
      const std::string sub = join(dir, name);
      if (added >= kKernelMaxDirsPerWatch || !add_one(id, share, root, sub, true)) break;
      added++;
      todo.push_back(sub);
    }
    closedir(d);
  }
}

void KernelNotify::run() {
  std::vector<char> buf(kReadBufferSize);
  for (;;) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int ready = poll(p, 2, rename_pending() ? kRenamePairWaitMs : -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (ready == 0) {  // the rename's second half did not come
      flush_rename();
      continue;
    }
    if (p[1].revents) return;
    const ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n <= 0) continue;
    // smbkitd's own changes are noted just after the system call that
    // makes them: a short wait lets a worker note them before their
    // events are looked at.
    std::this_thread::sleep_for(kOwnNoteDelay);
    dispatch(buf.data(), static_cast<size_t>(n));
  }
}

void KernelNotify::dispatch(const char* buf, size_t len) {
  NotifyCompletions done;  // after nodes_mu is released
  MutexLock l(impl_.nodes_mu);
  const SteadyTime now = std::chrono::steady_clock::now();
  auto own_change = [&](const ShareRoot& root, const std::string& path) {
    impl_.nodes_mu.assert_held();  // called only below, under the lock
    return own_recently(root, path, now);
  };
  auto report = [&](const ShareRoot& root, uint32_t action, uint32_t filter, const std::string& path) {
    impl_.nodes_mu.assert_held();  // called only below, under the lock
    notify_locked(impl_, root, NotifyEvent{action, filter, path}, done);
  };
  std::optional<RenameFrom>& from = from_;
  auto flush_from = [&] {
    impl_.nodes_mu.assert_held();  // called only below, under the lock
    if (from && !own_change(from->root, from->path))
      report(from->root, FILE_ACTION_REMOVED, name_filter(from->dir), from->path);
    from.reset();
  };
  for (size_t pos = 0; pos + sizeof(inotify_event) <= len;) {
    const auto* ev = reinterpret_cast<const inotify_event*>(buf + pos);
    pos += sizeof(inotify_event) + ev->len;
    if (pos > len) break;
    if (ev->mask & IN_Q_OVERFLOW) {
      flush_from();
      notify_overflow_locked(impl_, done);
      continue;
    }
    auto it = dirs.find(ev->wd);
    if (it == dirs.end()) continue;
    if (ev->mask & IN_IGNORED) {  // the directory went, or was unwatched
      for (int id : it->second.ids) std::erase(by_id[id], ev->wd);
      dirs.erase(it);
      continue;
    }
    if (ev->len == 0) continue;  // about the directory itself
    const Dir& d = it->second;
    const ShareRoot root = d.root;
    const std::string path = join(d.path, ev->name);
    const bool is_dir = ev->mask & IN_ISDIR;
    // A directory made (or moved) below a tree watch is watched too,
    // whoever made it.
    if (is_dir && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && !d.tree_ids.empty()) {
      const std::vector<int> ids = d.tree_ids;
      const auto share = d.share;
      for (int id : ids)
        if (by_id[id].size() < kKernelMaxDirsPerWatch) add(id, share, root, path, true);
    }
    if (ev->mask & IN_MOVED_FROM) {
      flush_from();
      from = RenameFrom{ev->cookie, ev->wd, root, path, is_dir};
      continue;
    }
    if (ev->mask & IN_MOVED_TO) {
      if (from && from->cookie == ev->cookie) {
        if (!own_change(root, path) && !own_change(from->root, from->path)) {
          if (from->wd == ev->wd) {
            report(root, FILE_ACTION_RENAMED_OLD_NAME, name_filter(is_dir), from->path);
            report(root, FILE_ACTION_RENAMED_NEW_NAME, name_filter(is_dir), path);
          } else {
            report(from->root, FILE_ACTION_REMOVED, name_filter(is_dir), from->path);
            report(root, FILE_ACTION_ADDED, name_filter(is_dir), path);
          }
        }
        from.reset();
        continue;
      }
      flush_from();
      if (!own_change(root, path)) report(root, FILE_ACTION_ADDED, name_filter(is_dir), path);
      continue;
    }
    flush_from();
    if (own_change(root, path)) continue;
    if (ev->mask & IN_CREATE) report(root, FILE_ACTION_ADDED, name_filter(is_dir), path);
    if (ev->mask & IN_DELETE) report(root, FILE_ACTION_REMOVED, name_filter(is_dir), path);
    if (ev->mask & IN_ATTRIB) report(root, FILE_ACTION_MODIFIED, kAttribFilter, path);
    if (ev->mask & IN_MODIFY) report(root, FILE_ACTION_MODIFIED, kModifyFilter, path);
  }
  // A rename's first half at the end waits for the next read.
}

bool KernelNotify::own_recently(const ShareRoot& root, const std::string& path, SteadyTime now) const {
  auto it = own.find({{root.dev, root.ino}, path});
  return it != own.end() && now - it->second < kOwnChangeWindow;
}

bool KernelNotify::rename_pending() {
  MutexLock l(impl_.nodes_mu);
  return from_.has_value();
}

void KernelNotify::flush_rename() {
  NotifyCompletions done;  // after nodes_mu is released
  MutexLock l(impl_.nodes_mu);
  if (!from_) return;
  if (!own_recently(from_->root, from_->path, std::chrono::steady_clock::now()))
    notify_locked(impl_, from_->root, NotifyEvent{FILE_ACTION_REMOVED, name_filter(from_->dir), from_->path}, done);
  from_.reset();
}

void watch_kernel(FileService::Impl& impl, NotifyWatch& w, const std::shared_ptr<const Share>& share) {
  if (!share || share->root_fd < 0) return;
  if (!impl.kernel) impl.kernel = std::make_unique<KernelNotify>(impl);
  KernelNotify& k = *impl.kernel;
  if (!k.ok()) return;
  w.kernel_id = k.next_id++;
  k.add(w.kernel_id, share, w.root, w.node->path, w.tree);
}

void unwatch_kernel(FileService::Impl& impl, NotifyWatch& w) {
  if (!impl.kernel || w.kernel_id == 0) return;
  KernelNotify& k = *impl.kernel;
  auto it = k.by_id.find(w.kernel_id);
  if (it == k.by_id.end()) return;
  for (int wd : it->second) {
    auto d = k.dirs.find(wd);
    if (d == k.dirs.end()) continue;
    std::erase(d->second.ids, w.kernel_id);
    std::erase(d->second.tree_ids, w.kernel_id);
    if (d->second.ids.empty()) {
      // IN_IGNORED follows; the entry goes now (the wd is not reused soon).
      k.remove(wd);
      k.dirs.erase(d);
    }
  }
  k.by_id.erase(it);
  w.kernel_id = 0;
}

void note_own_changes(FileService::Impl& impl, const ShareRoot& root, const std::vector<NotifyEvent>& events) {
  if (!impl.kernel || impl.kernel->dirs.empty()) return;
  auto& own = impl.kernel->own;
  const SteadyTime now = std::chrono::steady_clock::now();
  if (own.size() >= kMaxOwnChanges) {
    std::erase_if(own, [&](const auto& kv) { return now - kv.second >= kOwnChangeWindow; });
    if (own.size() >= kMaxOwnChanges) own.clear();  // a burst: some own changes may be reported twice
  }
  for (const NotifyEvent& e : events) own[{{root.dev, root.ino}, e.path}] = now;
}

}  // namespace smbkit::server
