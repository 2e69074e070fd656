// The file commands of an SMB2 server, on a POSIX directory tree: CREATE,
// CLOSE, READ, WRITE, FLUSH, QUERY_DIRECTORY, QUERY_INFO, SET_INFO, LOCK,
// IOCTL and CHANGE_NOTIFY (MS-SMB2 3.3.5.9-3.3.5.16, 3.3.5.19-21), and
// named pipes on IPC$ through rpc/pipe.h.
//
// Threading: the event loops never call this; a worker thread runs one
// request (or one compound chain, in order) at a time per call. Calls for
// the same connection may run at once on different workers: ConnOpens is
// thread-safe, and FileService's tables are shared by all connections.
//
// Containment: every name a client sends is resolved beneath the share's
// root_fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS); ".." and
// absolute names are refused (STATUS_OBJECT_PATH_SYNTAX_BAD or
// STATUS_OBJECT_NAME_INVALID), and no symlink on disk leads out of the
// share. Every length and offset in a request is checked before use.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/oplock_break.h"
#include "proto/types.h"
#include "rpc/pipe.h"
#include "server/identity.h"
#include "server/share.h"

namespace smbkit::server {

// A tree connect, as the file layer sees it.
struct TreeCtx {
  uint32_t tree_id = 0;
  std::shared_ptr<const Share> share;
  bool read_only = false;  // share read-only (writes refused: STATUS_ACCESS_DENIED)
  // The access mask granted on this tree; 0: all (FILE_ALL_ACCESS), less
  // what a read-only share or tree takes away.
  uint32_t maximal_access = 0;
};

// Who a session is, for access checks against security descriptors
// (acl.h builds its token of SIDs from it).
struct SessionIdentity {
  std::string user;
  bool guest = false;
  bool anonymous = false;
  std::string server_name;  // netbios name: the server's domain SID is derived from it
  // The Unix account of the same name, when there is one (as smbd maps
  // users; guests: `guest account` when smbkitd runs as root): its SIDs
  // S-1-22-1-uid and S-1-22-2-gid (and its groups') are the session's too.
  std::shared_ptr<const Identity> account;
  // File operations run as `account` (smbkitd as root, identity.h);
  // otherwise as the daemon, whose Unix SIDs every session then holds.
  bool acts_as_account = false;
  // Who the file operations run as: null is the daemon itself.
  const Identity* on_disk() const { return acts_as_account ? account.get() : nullptr; }
};

// One request's context.
struct CallCtx {
  uint64_t session_id = 0;
  const TreeCtx* tree = nullptr;  // never null for a file command
  uint16_t dialect = 0;
  uint64_t message_id = 0;
  // The header's ChannelSequence and SMB2_FLAGS_REPLAY_OPERATION (3.x),
  // verified against the open (MS-SMB2 3.3.5.2.10, channel_sequence.h).
  uint16_t channel_sequence = 0;
  bool replay = false;
  // The compound chain's FileId (MS-SMB2 3.3.5.2.7.2): a related request
  // naming kRelatedFileId uses it; a CREATE that succeeds, or any request
  // that names an open by its FileId, sets it; an unrelated request starts
  // it afresh (kRelatedFileId: no file). The caller keeps it across one
  // chain.
  proto::FileId* chain_file_id = nullptr;
  // The request carries SMB2_FLAGS_RELATED_OPERATIONS: only then does
  // kRelatedFileId mean the chain's file (an unrelated request naming it
  // names no open: STATUS_FILE_CLOSED).
  bool related = false;
  // srvsvc's view of the server, for pipes opened on IPC$.
  const rpc::SrvsvcOptions* srvsvc = nullptr;
  // The session's identity; null: the daemon's own (tests).
  std::shared_ptr<const SessionIdentity> who;
  // NEGOTIATE's ClientGuid (leases belong to a client, MS-SMB2 3.3.1.4
  // LeaseTable) and whether the connection negotiated
  // SMB2_GLOBAL_CAP_LEASING.
  std::array<std::byte, 16> client_guid{};
  bool leasing = false;
  // The connection is 3.x and negotiated SMB2_GLOBAL_CAP_MULTI_CHANNEL
  // (Connection.ServerCapabilities): a LOCK is then verified against its
  // lock sequence on any open (MS-SMB2 3.3.5.14).
  bool multi_channel = false;
  // The session's user, as it authenticated (a durable open is reconnected
  // only by its user).
  std::string user;
  // The answer may carry a READ's data as a FileRegion: it goes out on
  // its own, neither signed nor sealed.
  bool zero_copy = false;
  // Bytes of room to leave ahead of a READ's data in its buffer
  // (FileReply::raw_offset): where the connection builds the sealed frame
  // around the data instead of copying it (session::finish_frame's room).
  size_t frame_room = 0;
};

// An oplock or lease break the file layer asks a connection to send
// (MS-SMB2 3.3.4.6, 3.3.4.7): `lease` tells which of the two bodies.
// `session_id` is the holder's session, whose keys seal the notification
// when that session encrypts.
struct BreakNotice {
  uint64_t session_id = 0;
  bool lease = false;
  proto::OplockBreakNotification oplock;
  proto::LeaseBreakNotification lease_break;
};
// Where a connection takes its break notices: called on any thread, never
// under a file-layer lock; it must only post the notice to its loop.
using BreakSink = std::function<void(const BreakNotice&)>;

// A command's answer. An error status with an empty body becomes an SMB2
// ERROR response; a status with a body (success, STATUS_BUFFER_OVERFLOW
// with partial data) is sent with it. `body` starts at the command's
// StructureSize (the 64-byte header is the caller's); `data` is sent right
// after it (READ payload) without another copy.
struct PendingCall;

// READ data left in the file for the transport to send straight from the
// page cache (zero copy): `length` bytes of `fd` from `offset`. `hold`
// keeps fd open until they are sent (the open it belongs to).
struct FileRegion {
  std::shared_ptr<void> hold;
  int fd = -1;
  uint64_t offset = 0;
  size_t length = 0;
};

struct FileReply {
  uint32_t status = 0;
  Bytes body;
  Bytes data;
  // Instead of data: a READ's data to send from the file (only when the
  // call allowed it, CallCtx::zero_copy).
  std::optional<FileRegion> region;
  // Instead of data: a READ's raw_size bytes at raw_offset in a buffer
  // that was not zeroed before the read filled it (data's vector would
  // clear it first, a tenth of a signed READ's cost). The raw_offset bytes
  // ahead of the data are room for the frame that seals it in place
  // (CallCtx::frame_room).
  std::shared_ptr<std::byte[]> raw;
  size_t raw_offset = 0;
  size_t raw_size = 0;
  ByteView raw_data() const { return {raw.get() + raw_offset, raw_size}; }
  // Set when the request must wait (body, data and status are then
  // unused): the connection sends an interim response and the final
  // answer comes through the PendingCall.
  std::shared_ptr<PendingCall> pending;
};

// A request the file layer cannot answer yet: a blocking lock waiting for
// its range, a CREATE waiting for an oplock or lease break to be
// acknowledged (MS-SMB2 3.3.4.2, 3.3.5.14, 3.3.4.6). The connection sends
// an interim response (STATUS_PENDING with an AsyncId), then calls start;
// the file layer calls `done` exactly once with the final reply, on any
// thread and never under one of its locks (the connection posts it to its
// loop). cancel() (CANCEL, or the tree, session or connection going away)
// makes the call finish as soon as it can, normally with
// STATUS_CANCELLED; `done` still runs once. cancel() before start() makes
// start() finish at once.
struct PendingCall {
  virtual ~PendingCall() = default;
  virtual void start(std::function<void(FileReply)> done) = 0;
  virtual void cancel() = 0;
};

struct FileServiceOptions {
  uint32_t max_open_files = 16384;  // per session; more: STATUS_TOO_MANY_OPENED_FILES
  // Opens of all sessions together, durable ones kept for a reconnect
  // included (each holds a descriptor): the server's descriptors are
  // shared, so no client can take them all (smbkitd derives it from
  // RLIMIT_NOFILE, open_files_budget in server.h).
  uint32_t max_open_files_total = 65536;
  uint32_t max_read = 8 << 20;      // MaxReadSize/MaxWriteSize/MaxTransactSize we negotiate
  uint32_t max_write = 8 << 20;
  uint32_t max_transact = 8 << 20;
  // How long a CREATE waits for an oplock or lease break to be
  // acknowledged before the holder is downgraded without it (smbd: 35 s).
  std::chrono::milliseconds break_timeout{35000};
  // READs of data in the page cache are served on the calling loop
  // (execute_nowait); off: every READ goes to a worker.
  bool nowait_reads = true;
  // READs of cached data of at least zero_copy_min bytes answered with a
  // FileRegion where the call allows it (CallCtx::zero_copy).
  bool zero_copy_reads = true;
  uint32_t zero_copy_min = 64 * 1024;
  // Also for a peer on this host (ConnIo::peer_on_this_host). Off: there
  // the client copies each byte out of the page-cache pages the socket
  // refers to, cold, where the server's copy leaves them in the cache, and
  // the splice path's per-page work cost the server more than the copy
  // (docs/benchmarks.md, "smbkitd against its targets").
  bool zero_copy_same_host = false;
  // Sessions are served as their users' Unix accounts (identity.h):
  // Server::start sets it when smbkitd runs as root.
  bool as_session_users = false;
  // Opens the server end of the named pipe `name` ("srvsvc", without a
  // leading '\\' or "PIPE\\") on IPC$ with the call's srvsvc view; nullptr
  // (or a null result): no such pipe (STATUS_OBJECT_NAME_NOT_FOUND). Tests
  // plug in their own endpoints.
  std::function<std::unique_ptr<rpc::PipeEndpoint>(std::string_view name, const rpc::SrvsvcOptions& opts)> open_pipe =
      rpc::open_pipe;
};

class FileService;

// One session's open files (Session.OpenTable, MS-SMB2 3.3.1.8/3.3.1.10),
// reached from every channel of the session: FileIds handed out here are
// valid only here. The name is older than multichannel.
class ConnOpens : public std::enable_shared_from_this<ConnOpens> {
 public:
  explicit ConnOpens(FileService& svc);
  ~ConnOpens();  // closes what is left (as close_all)
  ConnOpens(const ConnOpens&) = delete;
  ConnOpens& operator=(const ConnOpens&) = delete;

  // TREE_DISCONNECT, LOGOFF, connection loss: close every open of the tree
  // or session (delete-on-close applies, share modes are released); at a
  // LOGOFF or a connection loss durable opens are kept for a reconnect.
  void close_tree(uint64_t session_id, uint32_t tree_id);
  void close_session(uint64_t session_id);
  void close_all();
  size_t size() const;
  // Where this connection's oplock and lease breaks go; set once, before
  // the first CREATE. A CREATE that waits for a break keeps a weak
  // reference to this table, so it must be owned by a shared_ptr.
  void set_break_sink(BreakSink sink);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class FileService {
 public:
  explicit FileService(FileServiceOptions opts = {});
  ~FileService();
  FileService(const FileService&) = delete;
  FileService& operator=(const FileService&) = delete;

  // Runs one file command. `msg` is the whole message, header included
  // (the body starts at offset 64); the header has been checked by the
  // session machine. `command` is one of CREATE, CLOSE, FLUSH, READ,
  // WRITE, LOCK, IOCTL (other than FSCTL_VALIDATE_NEGOTIATE_INFO, which
  // the connection answers), QUERY_DIRECTORY, QUERY_INFO, SET_INFO,
  // OPLOCK_BREAK acknowledgments, CHANGE_NOTIFY.
  FileReply execute(ConnOpens& opens, const CallCtx& ctx, uint16_t command, ByteView msg);

  // The same on the calling thread (an event loop) when the command can
  // finish without waiting for the disk: a READ whose data is all in the
  // page cache (preadv2 RWF_NOWAIT). nullopt otherwise: run execute on a
  // worker. A cached READ then costs no thread hand-off and never queues
  // behind reads that wait for the disk.
  std::optional<FileReply> execute_nowait(ConnOpens& opens, const CallCtx& ctx, uint16_t command, ByteView msg);

  const FileServiceOptions& options() const { return opts_; }

  // What is open now (smbkitd status): one entry per open of a file or
  // directory on any connection, durable opens waiting for a reconnect
  // included, ordered by share and path. A snapshot; status.cc.
  struct OpenStatus {
    std::string share;
    std::string path;  // under the share's root, '/' separated ("" for the root)
    uint64_t session_id = 0;
    uint32_t granted = 0;       // GrantedAccess
    uint32_t share_access = 0;  // FILE_SHARE_*
    uint32_t caching = 0;       // oplock or lease state, in lease bits
    bool lease = false;
    bool durable = false;
    bool disconnected = false;  // durable, its connection gone
  };
  std::vector<OpenStatus> open_files();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  FileServiceOptions opts_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smbkit::server
