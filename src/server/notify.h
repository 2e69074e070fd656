// CHANGE_NOTIFY (MS-SMB2 3.3.5.19; MS-FSA 2.1.5.10 and 2.1.4.1): an open
// of a directory that has asked once is watched from then on, with the
// CompletionFilter, WATCH_TREE and OutputBufferLength of that first
// request (as Windows and smbd keep them). Changes are reported by the
// file layer as it makes them (notify_*), and by the kernel for changes
// made by other programs (notify_kernel.cc); they are matched against every
// watch of the same share root and either complete the request that waits
// or are buffered on the open until the next one.
//
// Locking: a watch, the server's list of them and the waiting requests
// are guarded by FileService::Impl::nodes_mu; NotifyCall::mu_ is a leaf
// taken after nodes_mu or alone. Replies are sent (PendingCall's `done`)
// with no lock held: NotifyCompletions runs them when it goes out of scope,
// so it is declared before the MutexLock on nodes_mu.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "proto/change_notify.h"
#include "server/file_internal.h"

namespace smbkit::server {

class NotifyCall;

// Bounds on what a client can make the server keep.
// Changes buffered on one open between two requests: past either bound
// the buffer is dropped and the next answer is STATUS_NOTIFY_ENUM_DIR
// (smbd: 1000 changes). 64 KiB is also the largest answer Windows sends.
inline constexpr size_t kNotifyMaxChanges = 1000;
inline constexpr size_t kNotifyMaxBufferBytes = 64 * 1024;
// Watched opens per connection and server-wide; past them a first
// CHANGE_NOTIFY is STATUS_INSUFFICIENT_RESOURCES.
inline constexpr size_t kNotifyMaxWatchesPerConn = 256;
inline constexpr size_t kNotifyMaxWatches = 16384;

// One change, by path under the share root ('/' separated).
struct NotifyEvent {
  uint32_t action = 0;  // FILE_ACTION_*
  uint32_t filter = 0;  // the FILE_NOTIFY_CHANGE_* bits it matches
  std::string path;
};

// A share root, as watches and events name it: the directory's identity
// (each tree connect opens the share again, so Share pointers differ).
struct ShareRoot {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const ShareRoot&) const = default;
};
ShareRoot share_root(const Share& share);

// One open's change notification state (MS-FSA 2.1.1.6 Open's
// NotifyEventList, and its waiting requests). Guarded by nodes_mu.
struct NotifyWatch {
  const Open* open = nullptr;      // the watched open (the watch goes with it)
  const void* conn = nullptr;      // its ConnOpens, for the per-connection bound
  std::shared_ptr<FileNode> node;  // node->path is the watched directory
  ShareRoot root;
  uint32_t filter = 0;
  bool tree = false;
  uint32_t max_output = 0;  // the first request's OutputBufferLength
  std::vector<proto::FileNotifyInformation> changes;
  size_t bytes = 0;  // changes' encoded size
  bool overflow = false;
  std::deque<std::shared_ptr<NotifyCall>> waiting;
  int kernel_id = 0;  // its kernel watches (notify_kernel.cc), 0: none
};

// Replies to send once nodes_mu is released (see the locking note).
class NotifyCompletions {
 public:
  NotifyCompletions() = default;
  NotifyCompletions(const NotifyCompletions&) = delete;
  NotifyCompletions& operator=(const NotifyCompletions&) = delete;
  ~NotifyCompletions() { run(); }
  void add(std::function<void()> fn) { fns_.push_back(std::move(fn)); }
  void run();

 private:
  std::vector<std::function<void()>> fns_;
};

// A CHANGE_NOTIFY that waits for a change (the connection sends the
// interim response). Finished once: by a change, CANCEL (STATUS_CANCELLED)
// or the open's close (STATUS_NOTIFY_CLEANUP).
class NotifyCall : public PendingCall, public std::enable_shared_from_this<NotifyCall> {
 public:
  NotifyCall(FileService& svc, std::weak_ptr<NotifyWatch> watch, uint32_t output_length)
      : svc_(svc), watch_(std::move(watch)), output_length_(output_length) {}
  void start(std::function<void(FileReply)> done) override;
  void cancel() override;
  // Sends `r` (at start when it comes before). Call with no lock held.
  void finish(FileReply r);
  uint32_t output_length() const { return output_length_; }

 private:
  FileService& svc_;
  const std::weak_ptr<NotifyWatch> watch_;  // where it waits
  const uint32_t output_length_;
  Mutex mu_;  // a leaf, after nodes_mu or alone
  std::function<void(FileReply)> done_ GUARDED_BY(mu_);
  std::optional<FileReply> early_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool finished_ GUARDED_BY(mu_) = false;
};

// Whether anything is watched at all (a cheap test before building events).
bool notify_watched(const FileService& svc);
// Reports `e` under `share` to every watch it matches. Requires nodes_mu.
void notify_locked(FileService::Impl& impl, const ShareRoot& root, const NotifyEvent& e, NotifyCompletions& out)
    REQUIRES(impl.nodes_mu);
// The same, taking nodes_mu.
void notify(FileService& svc, const Share& share, const std::vector<NotifyEvent>& events);
// A change to an open's own file (MODIFIED): under its current path.
void notify_open(FileService& svc, const Open& o, uint32_t action, uint32_t filter);
// A rename (MS-FSA 2.1.5.14.11): OLD_NAME and NEW_NAME in one directory,
// REMOVED and ADDED between two. Requires nodes_mu.
void notify_rename_locked(FileService::Impl& impl, const Share& share, bool dir, const std::string& from,
                          const std::string& to, NotifyCompletions& out) REQUIRES(impl.nodes_mu);
// A SET_INFO that succeeded on `o` (MS-FSA 2.1.5.14): what it changed.
void notify_set_info(FileService& svc, const Open& o, uint8_t info_type, uint8_t info_class, ByteView buf);
// `node` is delete-pending and one of its opens closed (MS-FSA 2.1.5.4):
// requests waiting on its watches end with STATUS_DELETE_PENDING, as
// Windows and smbd answer (smbtorture smb2.notify.rmdir*). Requires
// nodes_mu.
void notify_delete_pending_locked(FileService::Impl& impl, const FileNode& node, NotifyCompletions& out)
    REQUIRES(impl.nodes_mu);
// The kernel lost events (inotify's queue overflowed): every watch answers
// STATUS_NOTIFY_ENUM_DIR next. Requires nodes_mu.
void notify_overflow_locked(FileService::Impl& impl, NotifyCompletions& out) REQUIRES(impl.nodes_mu);
// The open is closing: its waiting requests end with
// STATUS_NOTIFY_CLEANUP and its watch goes. Requires nodes_mu.
void notify_close_locked(FileService::Impl& impl, const Open& o, NotifyCompletions& out) REQUIRES(impl.nodes_mu);

// SMB2 CHANGE_NOTIFY (MS-SMB2 3.3.5.19).
FileReply handle_change_notify(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);

}  // namespace smbkit::server
