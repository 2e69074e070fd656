// The per-connection open table (MS-SMB2 3.3.1.10 Open, FileIds) and what
// closing an open does to the server-wide file state: its share-mode
// entry and locks go, and the last close of a delete-pending file deletes
// it (MS-FSA 2.1.5.4 Server Requests Closing an Open).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include "server/replay.h"
#include "server/durable.h"
#include "server/file_internal.h"
#include "server/notify.h"
#include "server/notify_kernel.h"
#include "server/oplock.h"
#include "server/path.h"

namespace smbkit::server {

OpenSlot OpenSlot::take(const Count& count, uint32_t max) {
  uint32_t n = count->load(std::memory_order_relaxed);
  do {
    if (n >= max) return {};
  } while (!count->compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  OpenSlot s;
  s.count_ = count;
  return s;
}

Open::~Open() {
  if (fd >= 0) ::close(fd);
}

bool ConnOpens::Impl::add(const OpenPtr& o, uint32_t max, uint64_t persistent) {
  MutexLock l(mu);
  if (opens.size() >= max) return false;
  const uint64_t n = next_id++;
  o->id = proto::FileId{persistent ? persistent : svc.impl().next_persistent++, n ^ salt};
  opens.emplace(o->id, o);
  return true;
}

OpenPtr ConnOpens::Impl::find(const proto::FileId& id, uint64_t session_id, uint32_t tree_id) {
  OpenPtr o;
  {
    MutexLock l(mu);
    auto it = opens.find(id);
    if (it == opens.end()) return nullptr;
    if (it->second->session_id != session_id || it->second->tree_id != tree_id) return nullptr;
    o = it->second;
  }
  if (o->replayable.load(std::memory_order_relaxed)) forget_replay(svc.impl(), *o);
  return o;
}

OpenPtr ConnOpens::Impl::find_in_session(const proto::FileId& id, uint64_t session_id) {
  MutexLock l(mu);
  auto it = opens.find(id);
  if (it == opens.end() || it->second->session_id != session_id) return nullptr;
  return it->second;
}

OpenPtr ConnOpens::Impl::remove(const proto::FileId& id) {
  MutexLock l(mu);
  auto it = opens.find(id);
  if (it == opens.end()) return nullptr;
  OpenPtr o = std::move(it->second);
  opens.erase(it);
  return o;
}

void ConnOpens::Impl::close_if(const std::function<bool(const Open&)>& pred, bool keep_durable) {
  std::vector<OpenPtr> closing;
  {
    MutexLock l(mu);
    for (auto it = opens.begin(); it != opens.end();) {
      if (pred(*it->second)) {
        closing.push_back(std::move(it->second));
        it = opens.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& o : closing)
    if (!(keep_durable && o->durable && keep_disconnected(svc, o))) svc.impl().release(*o);
}

ConnOpens::ConnOpens(FileService& svc) : impl_(std::make_unique<Impl>(svc)) {
  std::random_device rd;
  impl_->salt = (static_cast<uint64_t>(rd()) << 32) | rd();
}

ConnOpens::~ConnOpens() { close_all(); }

void ConnOpens::close_tree(uint64_t session_id, uint32_t tree_id) {
  impl_->close_if([&](const Open& o) { return o.session_id == session_id && o.tree_id == tree_id; });
}

void ConnOpens::close_session(uint64_t session_id) {
  // A durable open outlives its session's logoff as it outlives its
  // connection (smbd; MS-SMB2 3.3.5.9.7 reconnects it on a new session).
  impl_->close_if([&](const Open& o) { return o.session_id == session_id; }, true);
}

void ConnOpens::close_all() {
  impl_->close_if([](const Open&) { return true; }, true);
}

void ConnOpens::set_break_sink(BreakSink sink) {
  MutexLock l(impl_->mu);
  impl_->sink = std::make_shared<const BreakSink>(std::move(sink));
}

size_t ConnOpens::size() const {
  MutexLock l(impl_->mu);
  return impl_->opens.size();
}

namespace {

// Deletes the file a node names if that name still leads to the same
// (dev, ino): the parent is reached beneath the share root, the entry
// checked without following a symlink, then removed relative to the parent.
// Reports the removal to CHANGE_NOTIFY watches. Requires nodes_mu.
void delete_node_file(FileService::Impl& impl, const FileNode& n, NotifyCompletions& done) REQUIRES(impl.nodes_mu) {
  if (!n.share || n.share->root_fd < 0 || n.path.empty()) return;  // never the root
  auto [parent, leaf] = split_parent(n.path);
  int dfd = open_beneath(n.share->root_fd, parent, O_PATH | O_DIRECTORY);
  if (dfd < 0) return;
  struct stat st {};
  if (fstatat(dfd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == n.dev && st.st_ino == n.ino) {
    const bool dir = S_ISDIR(st.st_mode);
    if (unlinkat(dfd, leaf.c_str(), dir ? AT_REMOVEDIR : 0) == 0 && notify_watched(impl.svc)) {
      const NotifyEvent e{proto::FILE_ACTION_REMOVED,
                          dir ? proto::FILE_NOTIFY_CHANGE_DIR_NAME : proto::FILE_NOTIFY_CHANGE_FILE_NAME, n.path};
      const ShareRoot root = share_root(*n.share);
      notify_locked(impl, root, e, done);
      note_own_changes(impl, root, {e});
    }
  }
  ::close(dfd);
}

}  // namespace

std::string open_path(FileService& svc, const Open& o) {
  if (!o.node) return {};
  MutexLock l(svc.impl().nodes_mu);
  return o.node->path;
}

void FileService::Impl::release(Open& o) {
  if (!o.node) return;  // a pipe
  bool doc;
  {
    MutexLock l(o.mu);
    doc = o.delete_on_close;
  }
  Breaks breaks;
  std::vector<std::function<void()>> woken;
  NotifyCompletions notified;  // after nodes_mu is released
  {
    MutexLock l(nodes_mu);
    forget_replay(*this, o);
    FileNode& n = *o.node;
    std::erase(n.opens, &o);
    if (o.notify) notify_close_locked(*this, o, notified);
    std::erase_if(n.locks, [&](const ByteRangeLock& k) { return k.owner == &o; });
    release_caching(*this, n, o, breaks);
    woken = wake_lock_waiters(n);
    if (doc) n.delete_pending = true;
    if (n.opens.empty()) {
      if (n.delete_pending) delete_node_file(*this, n, notified);
      nodes.erase({n.dev, n.ino});
    } else if (n.delete_pending && !watches.empty()) {
      notify_delete_pending_locked(*this, n, notified);
    }
  }
  breaks.deliver();
  for (auto& w : woken) w();
}

}  // namespace smbkit::server
