// The file layer's shared pieces: an open (Open), the server-wide state of
// one on-disk file (FileNode: share modes, byte-range locks, delete
// pending), the tables that hold them, and the handlers FileService::execute
// dispatches to (one file per command group).
//
// Lock order: Open::mu is a leaf taken alone; ConnOpens::Impl::mu is
// taken alone or after nodes_mu (a durable reconnect adds the open back);
// FileService::Impl::nodes_mu (the share-mode, lock, delete-pending,
// oplock and lease table) may be taken while holding an Open::mu, never
// the other way; FileTimer::mu, CreateWait::mu and NotifyCall::mu_ are
// taken after nodes_mu or alone.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/buffer_pool.h"
#include "base/bytes.h"
#include "base/mutex.h"
#include "base/result.h"
#include "proto/constants.h"
#include "proto/fscc_dir_info.h"
#include "proto/ioctl.h"
#include "proto/types.h"
#include "server/channel_sequence.h"
#include "server/file_service.h"

namespace smbkit::server {

struct Open;
struct Lease;
class CreateWait;
struct NotifyWatch;
class KernelNotify;

using SteadyTime = std::chrono::steady_clock::time_point;

// Caching granted to an oplock or a lease, in lease bits (MS-SMB2
// 2.2.13.2.8): an oplock is held as the lease state it amounts to
// (level II = R, exclusive = RW, batch = RWH), so one set of break rules
// serves both (MS-FSA 2.1.4.12). Guarded by FileService::Impl::nodes_mu.
struct Caching {
  uint32_t state = 0;
  bool breaking = false;     // a break waits for its acknowledgment
  uint32_t breaking_to = 0;  // what the holder must come down to (the notice's NewLeaseState)
  // What every conflict since the notice needs (MS-SMB2 3.3.1.4
  // Lease.BreakToLeaseState): an ack above it continues the break.
  uint32_t breaking_required = 0;
  SteadyTime deadline{};  // when it is downgraded without the ack
};
struct LockWaiter;

// MS-SMB2 2.2.26 LOCK element as held: a range of one open.
struct ByteRangeLock {
  const Open* owner = nullptr;
  uint64_t offset = 0;
  uint64_t length = 0;
  bool exclusive = false;
};

// One on-disk file (dev, ino) with at least one open on any connection:
// MS-FSA 2.1.1.4 File's open list (for share modes), its byte-range locks
// and DeletePending. Guarded by FileService::Impl::nodes_mu.
struct FileNode {
  dev_t dev = 0;
  ino_t ino = 0;
  std::vector<Open*> opens;
  std::vector<ByteRangeLock> locks;
  // LOCKs waiting for a range (lock.cc), in arrival order.
  std::vector<std::shared_ptr<LockWaiter>> lock_waiters;
  bool delete_pending = false;
  // Where the file is now (kept by CREATE and rename): the share that
  // named it last and its path under that share's root, '/' separated. A
  // file with two hard links is known by the name it was last opened by.
  std::shared_ptr<const Share> share;
  std::string path;
  // CREATEs waiting for a break of this file's oplocks or leases to be
  // acknowledged (woken by an ack, a close or the break timeout).
  std::vector<std::shared_ptr<CreateWait>> waiters;
};

// A directory enumeration in progress (QUERY_DIRECTORY): the pattern of the
// first query and the names still to return.
struct DirCursor {
  bool started = false;
  std::string pattern;
  std::vector<std::string> names;  // sorted snapshot, "." and ".." first
  size_t next = 0;
};

// A place among the server's opens (FileServiceOptions::
// max_open_files_total): taken before a file is opened, given back when
// the Open holding it goes. The count is shared, so an Open that outlives
// its FileService gives its place back safely.
class OpenSlot {
 public:
  using Count = std::shared_ptr<std::atomic<uint32_t>>;
  OpenSlot() = default;
  // Empty when `max` places are taken.
  static OpenSlot take(const Count& count, uint32_t max);
  OpenSlot(OpenSlot&& o) noexcept : count_(std::move(o.count_)) {}
  OpenSlot& operator=(OpenSlot&& o) noexcept {
    give_back();
    count_ = std::move(o.count_);
    return *this;
  }
  ~OpenSlot() { give_back(); }
  explicit operator bool() const { return count_ != nullptr; }

 private:
  void give_back() {
    if (count_) count_->fetch_sub(1, std::memory_order_relaxed);
    count_.reset();
  }
  Count count_;
};

// An open file, directory or pipe (MS-SMB2 3.3.1.10 Open).
// A durable v2 CREATE as remembered for its replay (replay.h): by
// ClientGuid and CreateGuid, in FileService::Impl::replays under nodes_mu.
using ReplayKey = std::pair<std::array<std::byte, 16>, std::array<std::byte, 16>>;
struct ReplayEntry {
  bool busy = false;               // a CREATE is working on it now
  std::weak_ptr<CreateWait> wait;  // it waits for a break
  std::weak_ptr<Open> open;        // it succeeded: the open it made
  uint32_t create_action = 0;      // and what the CREATE did
};

struct Open {
  ~Open();
  OpenSlot slot;
  proto::FileId id;
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  std::shared_ptr<const Share> share;
  bool read_only_tree = false;
  int fd = -1;  // O_RDONLY/O_RDWR, or O_PATH when no data access was possible
  bool is_dir = false;
  bool data_fd = false;       // fd permits data I/O (not O_PATH)
  uint32_t granted = 0;       // GrantedAccess
  uint32_t share_access = 0;  // FILE_SHARE_*
  uint32_t create_options = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  std::shared_ptr<FileNode> node;  // null for pipes
  // Open.ChannelSequence and its counts (MS-SMB2 3.3.5.2.10).
  OpenChannelSequence channel_sequence;
  // Whether the file lives in memory (tmpfs, ramfs: io.cc, in_memory):
  // 0 not asked yet, 1 yes, 2 no.
  std::atomic<uint8_t> in_memory{0};
  std::unique_ptr<rpc::PipeEndpoint> pipe;
  std::string pipe_name;
  // Oplock (lease bits, see Caching) or lease; guarded by nodes_mu.
  Caching oplock;
  std::shared_ptr<Lease> lease;
  std::shared_ptr<const BreakSink> sink;  // the connection's, for breaks
  // CHANGE_NOTIFY (notify.h): set by the first request; guarded by nodes_mu.
  std::shared_ptr<NotifyWatch> notify;
  // Durable handle (MS-SMB2 3.3.1.10 IsDurable, DurableOpenTimeout,
  // CreateGuid, ClientGuid, the session's user): set at CREATE; while
  // disconnected (kept in FileService::Impl::disconnected) and at a
  // reconnect, read and changed under nodes_mu.
  bool durable = false;
  bool durable_v2 = false;
  uint32_t durable_timeout_ms = 0;
  std::array<std::byte, 16> create_guid{};
  std::array<std::byte, 16> client_guid{};
  std::string user;
  bool disconnected = false;
  SteadyTime disconnected_until{};
  // Its CREATE's entry in FileService::Impl::replays (a durable v2
  // request), under replay_mu; `replayable` until the first request on the
  // open (ConnOpens::Impl::find) or its loss ends the replay.
  std::optional<ReplayKey> replay_key;
  std::atomic<bool> replayable{false};

  Mutex mu;
  bool delete_on_close GUARDED_BY(mu) = false;  // FILE_DELETE_ON_CLOSE at create
  uint64_t position GUARDED_BY(mu) = 0;         // FilePositionInformation
  uint32_t mode GUARDED_BY(mu) = 0;             // FileModeInformation
  DirCursor cursor GUARDED_BY(mu);
  // MS-SMB2 3.3.1.10 Open.IsResilient (FSCTL_LMR_REQUEST_RESILIENCY) and
  // Open.LockSequenceArray: per LockSequenceIndex 1..64, the
  // LockSequenceNumber of the last LOCK that succeeded (lock.cc).
  bool resilient GUARDED_BY(mu) = false;
  std::array<std::optional<uint8_t>, 64> lock_sequence GUARDED_BY(mu);
};

using OpenPtr = std::shared_ptr<Open>;

struct ConnOpens::Impl {
  explicit Impl(FileService& s) : svc(s) {}
  FileService& svc;
  Mutex mu;
  std::map<proto::FileId, OpenPtr> opens GUARDED_BY(mu);
  uint64_t next_id GUARDED_BY(mu) = 1;
  uint64_t salt = 0;  // mixed into Volatile so ids are not a plain counter
  std::shared_ptr<const BreakSink> sink GUARDED_BY(mu);

  // Adds an open under a new FileId (Persistent: `persistent`, or a new
  // server-wide one); false when max_open_files is reached.
  bool add(const OpenPtr& o, uint32_t max, uint64_t persistent = 0);
  // The open named by `id` on this session and tree, else nullptr
  // (MS-SMB2 3.3.5.x: STATUS_FILE_CLOSED).
  OpenPtr find(const proto::FileId& id, uint64_t session_id, uint32_t tree_id);
  // The open named by `id` on this session, on any of its trees (server
  // side copy between shares).
  OpenPtr find_in_session(const proto::FileId& id, uint64_t session_id);
  OpenPtr remove(const proto::FileId& id);
  // Closes the opens `pred` selects; with keep_durable (connection loss)
  // durable ones are kept for a reconnect instead.
  void close_if(const std::function<bool(const Open&)>& pred, bool keep_durable = false);
  std::shared_ptr<const BreakSink> break_sink() {
    MutexLock l(mu);
    return sink;
  }
};

// The file layer's deadlines (unacknowledged breaks, disconnected durable
// opens): one thread, started at the first, sleeping until the earliest;
// each task runs on it with no lock held.
class FileTimer {
 public:
  ~FileTimer();
  void schedule(SteadyTime when, std::function<void()> task);

 private:
  void run();
  Mutex mu;  // after nodes_mu
  CondVar cv_;
  std::multimap<SteadyTime, std::function<void()>> due_ GUARDED_BY(mu);
  bool stop_ GUARDED_BY(mu) = false;
  std::thread thread_;
};

using LeaseId = std::pair<std::array<std::byte, 16>, std::array<std::byte, 16>>;  // ClientGuid, LeaseKey

struct FileService::Impl {
  explicit Impl(FileService& s);  // out of line: KernelNotify is complete there
  FileService& svc;
  Mutex nodes_mu;
  std::map<std::pair<dev_t, ino_t>, std::shared_ptr<FileNode>> nodes GUARDED_BY(nodes_mu);
  // MS-SMB2 3.3.1.4 GlobalLeaseTableList: every lease, by client and key.
  std::map<LeaseId, std::shared_ptr<Lease>> leases GUARDED_BY(nodes_mu);
  // The break sinks of the connections of each client holding a lease, in
  // the order they first took one: a lease's breaks go to the client's
  // first connection still there (as smbd; oplock.cc). An entry goes with
  // the client's last lease. Guarded by nodes_mu (not annotated: the break
  // rules reach it from callbacks run under nodes_mu).
  std::map<std::array<std::byte, 16>, std::vector<std::weak_ptr<const BreakSink>>> client_sinks;

  // Releases an open: its share-mode entry, locks, oplock or lease;
  // applies delete on close when it was the last open of a delete-pending
  // file; wakes CREATEs waiting on the file.
  void release(Open& o);

  // Durable opens whose connection went (MS-SMB2 3.3.5.9.7/.12
  // reconnects find them), by persistent FileId.
  std::map<uint64_t, std::shared_ptr<Open>> disconnected GUARDED_BY(nodes_mu);
  // Persistent FileIds are unique server-wide (durable reconnects name
  // them on another connection).
  std::atomic<uint64_t> next_persistent{1};
  // READ answers' data buffers, recycled: a fresh 1 MiB buffer per READ
  // is faulted in page by page (the allocator gives freed memory back,
  // and under a hypervisor the guest gives it to the host), a tenth of a
  // cached sequential read's server CPU.
  std::shared_ptr<BufferPool> read_buffers = BufferPool::create();
  // Durable v2 CREATEs by ClientGuid and CreateGuid (replay.h). A leaf:
  // taken alone or after nodes_mu; nothing is taken under it.
  Mutex replay_mu;
  std::map<ReplayKey, ReplayEntry> replays GUARDED_BY(replay_mu);
  // How many opens there are, server-wide (OpenSlot).
  OpenSlot::Count open_count = std::make_shared<std::atomic<uint32_t>>(0);
  OpenSlot take_open_slot() { return OpenSlot::take(open_count, svc.options().max_open_files_total); }

  // CHANGE_NOTIFY (notify.h): every watched open, and how many there are
  // (read without the lock: nothing is built for changes nobody watches).
  std::vector<std::shared_ptr<NotifyWatch>> watches GUARDED_BY(nodes_mu);
  std::atomic<size_t> watch_count{0};

  FileTimer timer;  // stopped before the tables go
  // The inotify reader (notify_kernel.h), started at the first watch;
  // last: its thread stops before anything it reports to goes.
  std::unique_ptr<KernelNotify> kernel;
  ~Impl();
};

// The path of a disk open under its share root ("" for the root).
std::string open_path(FileService& svc, const Open& o);

// ---- access masks (access.cc) -----------------------------------------------

// MS-SMB2 2.2.13.1: GENERIC_* mapped to the file-specific rights.
uint32_t map_generic(uint32_t access);
// The rights an open of a file with `st` may be granted on this tree.
uint32_t maximal_access(const TreeCtx& tree, const struct stat& st);
// MS-FSA 2.1.5.1.2.1: whether an open asking `access` with `share` can join
// the opens already on the file. Requires nodes_mu.
bool share_access_ok(const FileNode& node, uint32_t access, uint32_t share);

// ---- stat to FSCC (attrs.cc) ------------------------------------------------

uint32_t file_attributes(const struct stat& st);
struct FileTimes {
  uint64_t creation = 0, last_access = 0, last_write = 0, change = 0;
};
FileTimes file_times(const struct stat& st);
uint64_t allocation_size(const struct stat& st);
// The times, sizes and attributes every answer about a file carries in
// the same shape (MS-SMB2 CREATE and CLOSE responses, MS-FSCC network open
// information, directory entries), from one stat. The CREATE and CLOSE
// responses spell the size field EndofFile.
template <class T>
void fill_times_sizes_attributes(const struct stat& st, T& out) {
  const FileTimes t = file_times(st);
  out.CreationTime = t.creation;
  out.LastAccessTime = t.last_access;
  out.LastWriteTime = t.last_write;
  out.ChangeTime = t.change;
  out.AllocationSize = allocation_size(st);
  const uint64_t eof = S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size);
  if constexpr (requires { out.EndofFile; })
    out.EndofFile = eof;
  else
    out.EndOfFile = eof;
  out.FileAttributes = file_attributes(st);
}
// An on-disk id for FileInternalInformation / FileId directory classes.
inline uint64_t file_index(const struct stat& st) { return static_cast<uint64_t>(st.st_ino); }

// ---- replies (file_service.cc) ----------------------------------------------

FileReply error_reply(uint32_t status);
// Runs `encode(resp, w)` on a writer that starts with a blank 64-byte
// header (the codec's offsets count from the header) and keeps the body.
template <class Resp, class Enc>
FileReply body_reply(uint32_t status, const Resp& resp, Enc encode) {
  Bytes b(proto::kHeaderSize);
  ByteWriter w(b);
  auto r = encode(resp, w);
  if (!r) return error_reply(STATUS_INSUFFICIENT_RESOURCES);
  FileReply out;
  out.status = status;
  out.body.assign(b.begin() + proto::kHeaderSize, b.end());
  return out;
}
// The open a request's FileId names (kRelatedFileId: the chain's), or an
// error status.
Result<OpenPtr> resolve_open(ConnOpens& opens, const CallCtx& ctx, const proto::FileId& id);
// MS-SMB2 3.3.5.2.10 for a request on an open that its ChannelSequence
// never fails (all but WRITE, SET_INFO and IOCTL): counted as outstanding
// until the hold ends, and a newer sequence moves the open on.
ChannelSequenceHold count_request(Open& o, const CallCtx& ctx);
// A reply that waits (r.pending) keeps its request counted until its
// final answer; `open` is kept alive as long.
void keep_counted_until_answered(FileReply& r, OpenPtr open, ChannelSequenceHold hold);
// An errno from the file system as an NTSTATUS.
uint32_t errno_status(int e);

// ---- handlers ---------------------------------------------------------------

FileReply handle_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
// CREATE, again for a request that waited for a break (`resumed`: the
// wait, which a further wait reuses).
FileReply run_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg,
                     const std::shared_ptr<CreateWait>& resumed);
FileReply handle_oplock_break(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_close(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_read(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
// A READ served only from the page cache; nullopt where it would wait.
std::optional<FileReply> read_nowait(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_write(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_flush(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_lock(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_ioctl(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_query_directory(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_query_info(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);
FileReply handle_set_info(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg);

// A READ response (MS-SMB2 2.2.20) carrying `data` uncopied (io.cc).
FileReply read_reply(uint32_t status, Bytes data);

// Pipes on IPC$ (pipe_ops.cc).
FileReply pipe_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, const std::string& name);
FileReply pipe_read(Open& o, uint32_t length);
FileReply pipe_write(Open& o, ByteView data);
FileReply pipe_transceive(Open& o, const proto::FileId& id, ByteView in, uint32_t max_out);

// An IOCTL response (MS-SMB2 2.2.32) carrying `output` (ioctl.cc).
FileReply ioctl_reply(uint32_t status, uint32_t ctl, const proto::FileId& id, Bytes output);

// The sparse-file controls (sparse.cc): FSCTL_SET_SPARSE,
// FSCTL_SET_ZERO_DATA, FSCTL_QUERY_ALLOCATED_RANGES.
FileReply set_sparse(Open& o, const proto::IoctlRequest& req);
FileReply set_zero_data(FileService& svc, Open& o, const proto::IoctlRequest& req);
FileReply query_allocated_ranges(Open& o, const proto::IoctlRequest& req);

// Server-side copy (copychunk.cc).
FileReply resume_key(Open& o, const proto::FileId& id, uint32_t max_out);
FileReply copychunk(FileService& svc, ConnOpens& opens, const CallCtx& ctx, Open& target, uint32_t ctl, ByteView input,
                    uint32_t max_out);

// Byte-range locks (lock.cc): whether [offset, offset+length) of `o` may be
// read (write=false) or written without meeting another open's lock.
bool io_allowed_by_locks(FileService& svc, const Open& o, uint64_t offset, uint64_t length, bool write);
// After locks or opens of `n` went away (unlock, close): grants the waiting
// LOCKs that can have their range now and ends those whose open is closed.
// Requires nodes_mu; run what it returns once nodes_mu is released.
std::vector<std::function<void()>> wake_lock_waiters(FileNode& n);

}  // namespace smbkit::server
