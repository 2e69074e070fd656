// CHANGE_NOTIFY: the watches, matching changes to them, the buffer of
// changes per open and the answers (MS-SMB2 3.3.5.19, MS-FSA 2.1.5.10,
// MS-FSCC 2.7.1). See notify.h.
#include "server/notify.h"

#include <sys/stat.h>

#include <algorithm>

#include "proto/create.h"
#include "proto/fscc_file_info.h"
#include "proto/query_info.h"
#include "server/notify_kernel.h"

namespace smbkit::server {

using namespace proto;

namespace {

FileReply notify_reply(const Bytes& entries) {
  ChangeNotifyResponse resp;
  resp.OutputBuffer = entries;
  return body_reply(STATUS_SUCCESS, resp, encode_change_notify_response);
}

// The answer to a request of `length` bytes from what `w` holds, which
// it empties. The first request's length bounds every later one (as smbd
// keeps it); changes that do not fit, or a zero length, are "enumerate
// the directory" (MS-SMB2 3.3.5.19, MS-FSA 2.1.5.10).
FileReply take_changes(NotifyWatch& w, uint32_t length) {
  const uint32_t limit = std::min(length, w.max_output);
  const bool overflow = w.overflow;
  auto entries = encode_file_notify_information(w.changes);
  w.overflow = false;
  w.changes.clear();
  w.bytes = 0;
  if (overflow || !entries || entries->empty() || entries->size() > limit) return error_reply(STATUS_NOTIFY_ENUM_DIR);
  return notify_reply(*entries);
}

// `path` relative to the watched directory `dir` ("" for the share root),
// '\' separated; nullopt when it is not below it (or is `dir` itself).
std::optional<std::string> relative_name(const std::string& dir, const std::string& path, bool tree) {
  std::string rel;
  if (dir.empty()) {
    rel = path;
  } else {
    if (path.size() <= dir.size() + 1 || path.compare(0, dir.size(), dir) != 0 || path[dir.size()] != '/')
      return std::nullopt;
    rel = path.substr(dir.size() + 1);
  }
  if (rel.empty()) return std::nullopt;
  const bool nested = rel.find('/') != std::string::npos;
  if (nested && !tree) return std::nullopt;
  std::replace(rel.begin(), rel.end(), '/', '\\');
  return rel;
}

// Answers the first request waiting on `w`, if any, with what it holds.
void answer_first(NotifyWatch& w, NotifyCompletions& out) {
  if (w.waiting.empty()) return;
  std::shared_ptr<NotifyCall> call = std::move(w.waiting.front());
  w.waiting.pop_front();
  auto reply = std::make_shared<FileReply>(take_changes(w, call->output_length()));
  out.add([call, reply] { call->finish(std::move(*reply)); });
}

// Adds a change to `w`'s buffer; a waiting request is answered unless the
// change is the first half of a rename (both halves go in one answer).
void record(NotifyWatch& w, uint32_t action, std::string name, NotifyCompletions& out) {
  if (!w.overflow) {
    FileNotifyInformation c{action, std::move(name)};
    // A change identical to the one before it is reported once (as smbd
    // coalesces them): a write followed by a SET_INFO is one MODIFIED.
    if (w.changes.empty() || !(w.changes.back() == c)) {
      auto sized = file_notify_information_size(c);
      const size_t size = sized ? *sized : kNotifyMaxBufferBytes;  // a name that cannot be encoded overflows
      if (w.changes.size() >= kNotifyMaxChanges || w.bytes + size > kNotifyMaxBufferBytes) {
        w.overflow = true;
        w.changes.clear();
        w.bytes = 0;
      } else {
        w.bytes += size;
        w.changes.push_back(std::move(c));
      }
    }
  }
  if (action != FILE_ACTION_RENAMED_OLD_NAME) answer_first(w, out);
}

}  // namespace

ShareRoot share_root(const Share& share) {
  struct stat st {};
  if (share.root_fd < 0 || fstat(share.root_fd, &st) != 0) return {};
  return {st.st_dev, st.st_ino};
}

void NotifyCompletions::run() {
  auto fns = std::move(fns_);
  fns_.clear();
  for (auto& f : fns) f();
}

void NotifyCall::start(std::function<void(FileReply)> done) {
  std::optional<FileReply> early;
  {
    MutexLock l(mu_);
    started_ = true;
    if (early_) {
      early = std::move(early_);
      early_.reset();
    } else {
      done_ = std::move(done);
    }
  }
  if (early) done(std::move(*early));
}

void NotifyCall::cancel() {
  bool mine = false;
  {
    MutexLock l(svc_.impl().nodes_mu);
    if (auto w = watch_.lock()) {
      auto it = std::find(w->waiting.begin(), w->waiting.end(), shared_from_this());
      if (it != w->waiting.end()) {
        w->waiting.erase(it);
        mine = true;
      }
    }
  }
  // Not waiting any more: a change or the close is answering it already.
  if (mine) finish(error_reply(STATUS_CANCELLED));
}

void NotifyCall::finish(FileReply r) {
  std::function<void(FileReply)> done;
  {
    MutexLock l(mu_);
    if (finished_) return;
    finished_ = true;
    if (!started_) {
      early_ = std::move(r);
      return;
    }
    done = std::move(done_);
  }
  if (done) done(std::move(r));
}

bool notify_watched(const FileService& svc) {
  return const_cast<FileService&>(svc).impl().watch_count.load(std::memory_order_relaxed) > 0;
}

void notify_locked(FileService::Impl& impl, const ShareRoot& root, const NotifyEvent& e, NotifyCompletions& out) {
  for (const std::shared_ptr<NotifyWatch>& w : impl.watches) {
    if (!(w->filter & e.filter) || !(w->root == root)) continue;
    auto rel = relative_name(w->node->path, e.path, w->tree);
    if (rel) record(*w, e.action, std::move(*rel), out);
  }
}

void notify(FileService& svc, const Share& share, const std::vector<NotifyEvent>& events) {
  if (!notify_watched(svc) || events.empty()) return;
  const ShareRoot root = share_root(share);
  NotifyCompletions done;  // runs after the lock is released
  MutexLock l(svc.impl().nodes_mu);
  for (const NotifyEvent& e : events) notify_locked(svc.impl(), root, e, done);
  note_own_changes(svc.impl(), root, events);
}

void notify_open(FileService& svc, const Open& o, uint32_t action, uint32_t filter) {
  if (!notify_watched(svc) || !o.node || !o.share) return;
  const ShareRoot root = share_root(*o.share);
  NotifyCompletions done;
  MutexLock l(svc.impl().nodes_mu);
  NotifyEvent e{action, filter, o.node->path};
  if (e.path.empty()) return;  // the share root has no parent to report to
  notify_locked(svc.impl(), root, e, done);
  note_own_changes(svc.impl(), root, {e});
}

void notify_overflow_locked(FileService::Impl& impl, NotifyCompletions& out) {
  for (const std::shared_ptr<NotifyWatch>& w : impl.watches) {
    w->overflow = true;
    w->changes.clear();
    w->bytes = 0;
    answer_first(*w, out);
  }
}

void notify_delete_pending_locked(FileService::Impl& impl, const FileNode& node, NotifyCompletions& out) {
  for (const std::shared_ptr<NotifyWatch>& w : impl.watches) {
    if (w->node.get() != &node) continue;
    for (auto& call : w->waiting) out.add([call] { call->finish(error_reply(STATUS_DELETE_PENDING)); });
    w->waiting.clear();
  }
}

void notify_close_locked(FileService::Impl& impl, const Open& o, NotifyCompletions& out) {
  auto it = std::find_if(impl.watches.begin(), impl.watches.end(),
                         [&](const std::shared_ptr<NotifyWatch>& w) { return w->open == &o; });
  if (it == impl.watches.end()) return;
  std::shared_ptr<NotifyWatch> w = std::move(*it);
  impl.watches.erase(it);
  impl.watch_count.store(impl.watches.size(), std::memory_order_relaxed);
  unwatch_kernel(impl, *w);
  // MS-SMB2 3.3.4.17 / MS-FSA 2.1.5.4: requests waiting on a closing
  // open complete with STATUS_NOTIFY_CLEANUP.
  for (auto& call : w->waiting) out.add([call] { call->finish(error_reply(STATUS_NOTIFY_CLEANUP)); });
  w->waiting.clear();
}

void notify_rename_locked(FileService::Impl& impl, const Share& share, bool dir, const std::string& from,
                          const std::string& to, NotifyCompletions& out) {
  const uint32_t filter = dir ? FILE_NOTIFY_CHANGE_DIR_NAME : FILE_NOTIFY_CHANGE_FILE_NAME;
  auto parent = [](const std::string& p) {
    const size_t cut = p.rfind('/');
    return cut == std::string::npos ? std::string() : p.substr(0, cut);
  };
  std::vector<NotifyEvent> events;
  if (parent(from) == parent(to)) {
    events = {{FILE_ACTION_RENAMED_OLD_NAME, filter, from}, {FILE_ACTION_RENAMED_NEW_NAME, filter, to}};
  } else {
    events = {{FILE_ACTION_REMOVED, filter, from}, {FILE_ACTION_ADDED, filter, to}};
  }
  const ShareRoot root = share_root(share);
  for (const NotifyEvent& e : events) notify_locked(impl, root, e, out);
  note_own_changes(impl, root, events);
}

void notify_set_info(FileService& svc, const Open& o, uint8_t info_type, uint8_t info_class, ByteView buf) {
  if (!notify_watched(svc)) return;
  uint32_t filter = 0;
  if (info_type == SMB2_0_INFO_SECURITY) {
    filter = FILE_NOTIFY_CHANGE_SECURITY;
  } else if (info_class == FILE_BASIC_INFORMATION) {
    // MS-FSA 2.1.5.14.2: each time given, and the attributes.
    FileBasicInformation b;
    if (!decode_info(buf, b)) return;
    auto given = [](uint64_t t) { return t != 0 && t != UINT64_MAX && t != UINT64_MAX - 1; };
    if (given(b.CreationTime)) filter |= FILE_NOTIFY_CHANGE_CREATION;
    if (given(b.LastAccessTime)) filter |= FILE_NOTIFY_CHANGE_LAST_ACCESS;
    if (given(b.LastWriteTime)) filter |= FILE_NOTIFY_CHANGE_LAST_WRITE;
    if (b.FileAttributes != 0) filter |= FILE_NOTIFY_CHANGE_ATTRIBUTES;
  } else if (info_class == FILE_END_OF_FILE_INFORMATION) {
    filter = FILE_NOTIFY_CHANGE_SIZE | FILE_NOTIFY_CHANGE_LAST_WRITE;  // MS-FSA 2.1.5.14.4
  } else if (info_class == FILE_ALLOCATION_INFORMATION) {
    filter = FILE_NOTIFY_CHANGE_SIZE;  // MS-FSA 2.1.5.14.1
  }
  if (filter) notify_open(svc, o, FILE_ACTION_MODIFIED, filter);
}

FileReply handle_change_notify(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_change_notify_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  // MS-SMB2 3.3.5.2.10: outstanding until answered, a wait included.
  ChannelSequenceHold seq_hold = count_request(f, ctx);
  // MS-SMB2 3.3.5.19: OutputBufferLength above MaxTransactSize, or an open
  // that is not a directory, is STATUS_INVALID_PARAMETER; the open must
  // have been granted FILE_LIST_DIRECTORY (MS-FSA 2.1.5.10).
  if (req->OutputBufferLength > svc.options().max_transact) return error_reply(STATUS_INVALID_PARAMETER);
  if (f.pipe || !f.node || !f.is_dir) return error_reply(STATUS_INVALID_PARAMETER);
  if (!(f.granted & FILE_LIST_DIRECTORY)) return error_reply(STATUS_ACCESS_DENIED);

  FileService::Impl& impl = svc.impl();
  MutexLock l(impl.nodes_mu);
  // Closed meanwhile (its release took it off the node under nodes_mu).
  if (std::find(f.node->opens.begin(), f.node->opens.end(), &f) == f.node->opens.end())
    return error_reply(STATUS_FILE_CLOSED);
  if (f.node->delete_pending) return error_reply(STATUS_DELETE_PENDING);
  std::shared_ptr<NotifyWatch> w = f.notify;
  if (!w) {
    const void* conn = &opens;
    const size_t mine =
        static_cast<size_t>(std::count_if(impl.watches.begin(), impl.watches.end(),
                                          [&](const std::shared_ptr<NotifyWatch>& x) { return x->conn == conn; }));
    if (impl.watches.size() >= kNotifyMaxWatches || mine >= kNotifyMaxWatchesPerConn)
      return error_reply(STATUS_INSUFFICIENT_RESOURCES);
    w = std::make_shared<NotifyWatch>();
    w->open = &f;
    w->conn = conn;
    w->node = f.node;
    w->root = share_root(*f.share);
    w->filter = req->CompletionFilter;
    w->tree = req->Flags & SMB2_WATCH_TREE;
    w->max_output = req->OutputBufferLength;
    f.notify = w;
    impl.watches.push_back(w);
    impl.watch_count.store(impl.watches.size(), std::memory_order_relaxed);
    watch_kernel(impl, *w, f.share);
  }
  // Changes seen since the last answer are answered at once.
  if (w->overflow || !w->changes.empty()) return take_changes(*w, req->OutputBufferLength);
  auto call = std::make_shared<NotifyCall>(svc, w, req->OutputBufferLength);
  w->waiting.push_back(call);
  FileReply pending;
  pending.pending = std::move(call);
  keep_counted_until_answered(pending, *o, std::move(seq_hold));
  return pending;
}

}  // namespace smbkit::server
