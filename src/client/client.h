// The client's top objects: a Client is one authenticated SMB2 session on
// one connection; a Tree is a connected share with the file operations the
// CLI and the mount use. Calls block until answered, except
// Tree::read_async/write_async; the asynchronous engine underneath is
// Connection::submit.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "auth/ntlm_initiator.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "base/worker_pool.h"
#include "client/connection.h"
#include "client/handle_table.h"
#include "client/listing.h"
#include "client/reconnect.h"
#include "client/reconnect_observers.h"
#include "client/reconnect_policy.h"
#include "proto/create.h"
#include "proto/fsctl_fscc.h"
#include "proto/lock.h"
#include "proto/types.h"

namespace smbkit::client {

struct Credentials {
  std::string user;
  SecretString password;  // wiped when freed
  std::string domain;
  // The user accepts a guest or anonymous session in place of the named
  // one (--guest, -o guest). Without it, a session the server (or
  // something on the path) made guest or null fails: a silent guest
  // session would have no keys, so no signing and no encryption.
  bool allow_guest = false;
  bool anonymous() const { return user.empty() && password.empty(); }
};

struct ClientOptions {
  ConnectionOptions conn;
  Credentials creds;
  // What happens when the connection drops (docs/design/reconnect.md).
  ReconnectOptions reconnect;
  // The most entries one listing may return (Tree::list_each):
  // past it the listing fails with STATUS_NO_MEMORY.
  uint64_t max_listing_entries = kDefaultMaxListingEntries;
};

struct SessionInfo {
  uint64_t session_id = 0;
  bool guest = false, anonymous = false;
  bool signing = false, encrypting = false;
};

class Tree;

// Implements ReconnectTarget for its Reconnector (client/rebuild.cc).
class Client final : private ReconnectTarget {
 public:
  // Connect, negotiate and authenticate.
  static Result<std::unique_ptr<Client>> connect(const ClientOptions& opts);
  ~Client();

  Result<std::unique_ptr<Tree>> tree_connect(const std::string& share);
  Result<void> logoff();

  // The current connection. A reconnect replaces it; the old object stays
  // alive (closed) until the Client goes, so a reference never dangles.
  Connection& conn() { return *live_.load(std::memory_order_acquire); }
  // Bumped by each successful reconnect, and when a bound channel takes
  // the place of a lost first connection (multichannel): requests that
  // failed with the connection of an older generation are sent again.
  uint64_t generation() const override;
  using ReconnectStats = client::ReconnectStats;
  ReconnectStats reconnect_stats() const;
  // No more reconnects: operations waiting for one, and later ones on a
  // dead connection, fail at once. For teardown (a `hard` mount being
  // unmounted must not wait forever for a server that is gone, neither in
  // a RELEASE still running nor to say TREE_DISCONNECT and LOGOFF).
  // Callable from any thread.
  void stop_reconnecting();
  // Drops the connection as if the network had failed (tests, tools): the
  // reconnect logic takes over.
  void drop_connection() override;
  // Re-authenticates the current session on its connection (MS-SMB2
  // 3.2.4.2.3): same SessionId, keys, trees and handles. Done by the client
  // on STATUS_NETWORK_SESSION_EXPIRED; callable directly.
  Result<void> reauthenticate() override;
  SessionInfo session() const EXCLUDES(state_mu_) {
    MutexLock g(state_mu_);
    return session_;
  }
  const ClientOptions& options() const { return opts_; }

  // The handler for unsolicited OPLOCK_BREAK notifications (lease breaks,
  // client/lease.h), on this connection and on every one a reconnect
  // brings (Connection::set_break_handler; nullptr removes it).
  void set_break_handler(Connection::BreakHandler h);
  // Called on the reconnect thread; neither may send requests or wait for
  // any (hand that to another thread). `begins` runs when an attempt
  // starts, before the old connection is closed and anything is reopened:
  // leases held so far are gone from then on. `done` runs after each
  // successful reconnect, once the new connection, session, trees and
  // handles are in place and before the operations that waited for it are
  // resumed, with the leases the server granted to the reopened handles
  // (each handle opened with a lease asks for it again).
  using ReconnectObserver = client::ReconnectObserver;
  // Returns an id for remove_reconnect_observer.
  uint64_t add_reconnect_observer(ReconnectObserver o);
  void remove_reconnect_observer(uint64_t id);
  // smb://host[:port] for messages.
  std::string host_url() const;

  // Multichannel (MS-SMB2 3.2.4.2.3, 3.2.5.3; docs/design/multichannel.md;
  // client/channels.cc). The connect options must have asked for it
  // (ConnectionOptions::multichannel) and the server offered it on 3.x.
  // Binds one more channel to this session: a new connection to `host`
  // (empty: the first connection's) with the same dialect and ClientGuid,
  // set up with SMB2_SESSION_FLAG_BINDING; it signs with its own key. READs
  // and WRITEs are then spread over the channels (Tree::read_async,
  // write_async); every other request stays on the first one.
  Result<void> bind_channel(const std::string& host = {});
  // Asks the server for its interfaces (FSCTL_QUERY_NETWORK_INTERFACE_INFO
  // on `tree`) and binds `extra` more channels over them (at most
  // kMaxChannels in all), each to the interface with the fewest channels.
  // A channel that is lost later is bound again in the background, a
  // bounded number of times, on the interfaces the server lists then.
  // Returns the channels bound.
  static constexpr size_t kMaxChannels = 16;
  Result<size_t> add_channels(Tree& tree, size_t extra);
  // The channels of the session, the first connection first.
  size_t channel_count() const EXCLUDES(state_mu_);
  // The address each channel went to, the first connection first.
  std::vector<std::string> channel_peers() const EXCLUDES(state_mu_);
  std::vector<ConnectionStats> channel_stats() const EXCLUDES(state_mu_);
  struct ChannelStats {
    uint64_t bound = 0;    // channels bound (re-binds included)
    uint64_t lost = 0;     // channels lost while the first one stayed
    uint64_t resent = 0;   // READs and WRITEs sent again on another channel
    uint64_t rebind_failures = 0;
    uint64_t promoted = 0;  // bound channels that took the place of a lost first connection
  };
  // Session.ChannelSequence now (what 3.x requests carry).
  uint16_t channel_sequence() const EXCLUDES(state_mu_);
  ChannelStats multichannel_stats() const EXCLUDES(state_mu_);
  // Shuts the index-th (from 1) bound channel that is still up down as if
  // its network had failed (tests, tools): its requests go to the other
  // channels.
  void drop_channel(size_t index) EXCLUDES(state_mu_);

 private:
  Client() = default;
  // Authenticates a new session on c (PreviousSessionId lets the server
  // drop a session we lost with an old connection, MS-SMB2 3.2.4.2.3).
  // reauth_session_id: re-authenticate that existing session instead.
  Result<SessionInfo> authenticate(Connection& c, uint64_t previous_session_id, uint64_t reauth_session_id = 0);
  struct TreeLink {
    uint32_t tree_id = 0;
    bool encrypt = false;
  };
  Result<TreeLink> connect_tree(Connection& c, const SessionInfo& s, const std::string& share);
  Result<void> validate_negotiate(Connection& c, const SessionInfo& s, uint32_t tree_id, bool encrypt);

  // ReconnectTarget (rebuild.cc): what the Reconnector drives.
  bool connection_dead() const override;
  bool replace_lost_connection() override EXCLUDES(state_mu_);
  std::string where() const override { return host_url(); }
  Result<Reopens> reestablish(bool patient) override;
  uint64_t frames_in() const override;
  bool can_echo() const override;
  void send_echo() override;

  ClientOptions opts_;
  // Guards what a reconnect replaces: conn_, session_, gen_, trees_ and
  // every tree's id and handle table. Operations take it briefly to read
  // one consistent view (Tree::route); a reconnect builds the new state
  // without it and publishes it in one step. A leaf: taken after the
  // Reconnector's lock, and nothing is locked or called back under it.
  mutable Mutex state_mu_;
  std::shared_ptr<Connection> conn_ GUARDED_BY(state_mu_);
  std::atomic<Connection*> live_{nullptr};  // conn_, readable without the lock
  std::vector<std::shared_ptr<Connection>> retired_ GUARDED_BY(state_mu_);
  SessionInfo session_ GUARDED_BY(state_mu_);
  // gen_: the connection's generation, bumped by a reconnect or a
  // promotion (the Reconnector resends what failed with an older one).
  // session_gen_: the session's, bumped by a reconnect only: tree ids,
  // handles and listing positions of an older one are stale.
  uint64_t gen_ GUARDED_BY(state_mu_) = 0;
  uint64_t session_gen_ GUARDED_BY(state_mu_) = 0;
  // The session's security as set up on its first connection
  // (Session.SigningKey signs bindings, MS-SMB2 3.2.4.2.3) and that
  // connection's nonce prefix: both outlive that connection once a
  // channel has taken its place.
  std::optional<session::SessionSecurity> session_keys_ GUARDED_BY(state_mu_);
  uint32_t nonce_base_ GUARDED_BY(state_mu_) = 0;
  // The session's security as its first connection holds it now.
  void remember_session_keys_locked(Connection& c, uint64_t session_id) REQUIRES(state_mu_);
  std::vector<Tree*> trees_ GUARDED_BY(state_mu_);
  std::array<std::byte, 16> client_guid_{};
  std::unique_ptr<Reconnector> reconnector_;
  bool logged_off_ = false;
  std::shared_ptr<Connection::BreakHandler> break_handler_ GUARDED_BY(state_mu_);
  ReconnectObservers observers_;
  // Multichannel (client/channels.cc). The channel for the next READ or
  // WRITE: the one with the fewest bytes of READs and WRITEs outstanding
  // (Connection::io_outstanding), the first connection included.
  Connection* io_channel_locked() REQUIRES(state_mu_);
  // `c` failed as a channel of the current session (not a security
  // violation): it leaves the channels and is bound again in the
  // background; the first connection is replaced by a bound channel that
  // is still up (promote_locked). False when c is not such a channel or
  // no other channel is left.
  bool channel_lost(Connection* c) EXCLUDES(state_mu_);
  // The first connection `dead` is lost (`why`; not a security
  // violation): a bound channel still up takes its place (carries every request from now on; same session, trees and
  // handles) and gen_ moves on. False when none is up.
  bool promote_locked(Connection* dead, const Error& why) REQUIRES(state_mu_);
  void wake_keeper() EXCLUDES(keeper_mu_);
  // Session.ChannelSequence (MS-SMB2 3.2.1.3): one more at each lost
  // channel (3.2.7.1), kept across reconnects (a durable open reconnected
  // keeps the server's Open.ChannelSequence). publish_channel_sequence
  // gives it to every connection of the session.
  uint16_t channel_sequence_ GUARDED_BY(state_mu_) = 0;
  // Runs `f` after `pause` on a thread of its own (a request the server
  // asked to replay later, STATUS_FILE_NOT_AVAILABLE): never on a
  // receiver thread, which must not sleep.
  void later(std::chrono::milliseconds pause, std::function<void()> f) EXCLUDES(state_mu_);
  std::unique_ptr<WorkerPool> later_ GUARDED_BY(state_mu_);
  void publish_channel_sequence() EXCLUDES(state_mu_);
  // Around a reconnect: the channels belong to the old session; they are
  // closed with it and bound again to the new one.
  std::vector<std::shared_ptr<Connection>> take_channels() EXCLUDES(state_mu_);
  void rebind_all() EXCLUDES(state_mu_);
  // The server's interfaces we would bind channels on, fastest first
  // (empty: every channel goes to the first connection's address).
  // nullopt when the server does not answer.
  std::optional<std::vector<std::string>> interface_hosts(Tree& tree);
  // Asks for them again on a tree of IPC$ (the keeper has no tree of its
  // own); keeps the list it has when the server does not answer.
  void refresh_interfaces() EXCLUDES(state_mu_);
  std::vector<std::string> interfaces_ GUARDED_BY(state_mu_);
  // Listed interfaces a binding could not reach: passed over until the
  // list is asked for again.
  std::vector<std::string> unreachable_ GUARDED_BY(state_mu_);
  // Where the next channel goes: the interface with the fewest channels
  // (the first listed of those), empty without a list.
  std::string next_channel_host() const EXCLUDES(state_mu_);
  // Binds one channel on the next interface, or on the first connection's
  // address when that one cannot be reached.
  Result<void> bind_next_channel() EXCLUDES(state_mu_);
  void keeper_loop() EXCLUDES(keeper_mu_);
  void stop_keeper() EXCLUDES(keeper_mu_);
  std::vector<std::shared_ptr<Connection>> channels_ GUARDED_BY(state_mu_);
  // Channels taken out after a loss (kept alive in retired_): their other
  // requests are sent again too.
  std::vector<Connection*> lost_channels_ GUARDED_BY(state_mu_);
  std::atomic<uint64_t> next_channel_{0};
  // Nonce prefixes of bound channels: the first connection's plus this
  // count, never the same twice under the session's keys.
  uint32_t channel_serial_ GUARDED_BY(state_mu_) = 0;
  ChannelStats channel_stats_ GUARDED_BY(state_mu_);
  // The background re-binder: bindings still wanted, and its thread.
  // keeper_mu_ is taken alone (nothing is called under it).
  Mutex keeper_mu_;
  CondVar keeper_cv_;
  size_t want_channels_ GUARDED_BY(keeper_mu_) = 0;  // extra channels asked for
  size_t rebinds_ GUARDED_BY(keeper_mu_) = 0;        // lost ones to bind again
  bool keeper_stop_ GUARDED_BY(keeper_mu_) = false;
  std::thread keeper_;
  void reconnect_begins();                                          // runs the observers' begins
  void reconnected(const std::vector<proto::CreateLease>& regranted);  // and their done (reconnect thread)
  friend class Tree;
};

// File metadata in POSIX-friendly form.
struct FileStat {
  std::string name;
  uint64_t size = 0, allocation = 0;
  uint32_t attributes = 0;
  bool is_dir = false;
  uint64_t creation_time = 0, access_time = 0, write_time = 0, change_time = 0;  // FILETIME
  uint64_t file_id = 0;
  uint32_t links = 1;           // NumberOfLinks: the links not being deleted (MS-FSCC 2.4.41)
  bool delete_pending = false;  // DeletePending (MS-FSCC 2.4.41): unlinked, still open
};

struct FsStat {
  uint64_t total_bytes = 0, free_bytes = 0, avail_bytes = 0;
  uint32_t bytes_per_unit = 0;
  std::string fs_name;
  uint32_t fs_attributes = 0;
  uint32_t max_name = 0;
};

struct OpenParams {
  uint32_t access = 0;        // DesiredAccess
  uint32_t disposition = 1;   // FILE_OPEN
  uint32_t options = 0;       // CreateOptions
  uint32_t attributes = 0;    // FILE_ATTRIBUTE_*
  uint32_t share = 7;         // FILE_SHARE_READ|WRITE|DELETE
  // Ask for a durable handle (batch oplock + DH2Q on 3.x, DHnQ on 2.x) so
  // the open survives a lost connection (docs/design/reconnect.md). Any
  // open is reopened by name after a reconnect if the server lost it.
  bool durable = false;
};

// For callers that add to the CREATE: `lease` asks for a lease (the
// RqLs context, MS-SMB2 3.2.4.3.8; client/lease.h), and a reopen after a
// reconnect asks for it again; `response`, if set, receives the decoded
// response.
struct OpenExtras {
  std::optional<proto::CreateLease> lease;
  proto::CreateResponse* response = nullptr;
  // If set, a READ of the file's first bytes rides in the CREATE's frame.
  struct Prefetch* prefetch = nullptr;
};

// What rides along with an open's CREATE as related compound requests
// (MS-SMB2 3.2.4.1.4), open and all in one round trip:
// - when `into` is not empty, a READ at offset 0: `got` is the bytes read
//   into `into` (0: an empty file);
// - with `want_stat`, a QUERY_INFO of FileAllInformation (before the
//   READ): `stat` is the file's attributes after the open, under any lease
//   it was granted.
// Each stays empty when it was not sent (a durable open, or the frame
// could not be used and the open went step by step) or failed (the caller
// meets the error itself, or asks again).
struct Prefetch {
  MutableByteView into;
  std::optional<size_t> got;
  bool want_stat = false;
  std::optional<FileStat> stat;
};

struct OpenFile {
  proto::FileId id;
  uint64_t size = 0;
  uint32_t attributes = 0;
  uint32_t create_action = 0;
  // What the CREATE response said of the file (times, sizes, attributes,
  // on-disk id): its attributes when a query after the open fails.
  FileStat created;
  bool is_dir() const { return attributes & 0x10; }
};

class Tree {
 public:
  ~Tree();
  uint32_t id() const;
  bool encrypted() const;
  Client& client() { return *client_; }
  const std::string& share() const { return share_; }

  // Paths are relative to the share root, '/' or '\' separated.
  Result<OpenFile> open(const std::string& path, const OpenParams& p, const OpenExtras* extras = nullptr);
  Result<void> close(const proto::FileId& id);
  // One READ of up to max_read bytes at offset into buf; returns the
  // bytes read (0 at end of file).
  Result<size_t> read(const proto::FileId& id, uint64_t offset, MutableByteView buf);
  Result<size_t> write(const proto::FileId& id, uint64_t offset, ByteView data);
  Result<void> flush(const proto::FileId& id);

  // Asynchronous I/O: one READ or WRITE of at most max_read()/max_write()
  // bytes. `done` runs on the connection's receiver thread, or on the
  // caller's (inside this call) after an early failure or when the answer
  // came while a WRITE was still being sent from `src`; with the byte
  // count; a read at end of file gives 0.
  // READ data lands directly in `dest` when the response is not sealed.
  // dest/src, and the Tree, must stay valid until `done` runs (after a lost
  // connection the request is re-sent from the reconnect thread).
  using IoDone = std::function<void(Result<size_t>)>;
  // splice_into: a plain response's payload may be spliced into this pipe
  // (empty, alive until done runs) instead of copied into dest
  // (Connection::submit); its content then tells where the data went (all
  // in the pipe or none). A re-sent READ empties it first.
  void read_async(const proto::FileId& id, uint64_t offset, MutableByteView dest, IoDone done,
                  const transport::Pipe* splice_into = nullptr);
  void write_async(const proto::FileId& id, uint64_t offset, ByteView src, IoDone done);
  Result<void> set_end_of_file(const proto::FileId& id, uint64_t size);
  // An FSCTL on the open handle id (MS-SMB2 3.2.4.20, 2.2.31 with
  // SMB2_0_IOCTL_IS_FSCTL): returns the response's Status and Output, which
  // is never longer than max_output (3.3.5.15). Success, and the statuses
  // in also_ok, are answers; every other status is the error. A status in
  // also_ok whose answer is an ERROR body (not an IOCTL one) has no Output.
  struct FsctlAnswer {
    uint32_t status = 0;
    Bytes output;
  };
  Result<FsctlAnswer> fsctl(const proto::FileId& id, uint32_t ctl_code, ByteView input, uint32_t max_output,
                            const std::string& what, std::initializer_list<uint32_t> also_ok = {});

  // Space and holes (client/sparse.cc). FileAllocationInformation (MS-FSCC
  // 2.4.4): the server reserves `size` bytes; a size below the end of file
  // truncates the file to it (MS-FSA 2.1.5.14.1), so callers only grow it.
  Result<void> set_allocation_size(const proto::FileId& id, uint64_t size);
  // FSCTL_SET_SPARSE (MS-FSCC 2.3.64) with SetSparse TRUE.
  Result<void> set_sparse(const proto::FileId& id);
  // FSCTL_SET_ZERO_DATA (MS-FSCC 2.3.67): [offset, end) reads as zeros; on
  // a sparse file the server deallocates it.
  Result<void> zero_data(const proto::FileId& id, uint64_t offset, uint64_t end);
  // FSCTL_QUERY_ALLOCATED_RANGES (MS-FSCC 2.3.47/2.3.48) over
  // [offset, offset+length): the allocated ranges one answer of at most
  // max_output bytes holds, checked (proto::decode_allocated_ranges).
  // `complete` is false when the server had more (STATUS_BUFFER_OVERFLOW):
  // ask again from the end of the last range.
  struct AllocatedRanges {
    std::vector<proto::FileAllocatedRangeBuffer> ranges;
    bool complete = true;
  };
  Result<AllocatedRanges> allocated_ranges(const proto::FileId& id, uint64_t offset, uint64_t length,
                                           uint32_t max_output);

  Result<FileStat> stat(const std::string& path);
  Result<FileStat> stat_handle(const proto::FileId& id);
  // The entries of dir matching pattern, each handed to `each` as it
  // arrives: what the listing holds stays bounded whatever the directory's
  // size (one response, and the set of names seen: client/listing.h). An
  // error from `each` ends the listing with that error. A listing cut by a
  // reconnect starts over; entries already delivered are not delivered
  // again. Capped at ClientOptions::max_listing_entries.
  Result<void> list_each(const std::string& dir, const std::string& pattern,
                         const std::function<Result<void>(const FileStat&)>& each);
  // list_each collected.
  Result<std::vector<FileStat>> list(const std::string& dir, const std::string& pattern = "*");
  Result<FsStat> statfs();
  // SET_INFO of each buffer (in order) on the file at path, opened with
  // `access` for it, and the file's attributes after: one compound frame
  // (CREATE, SET_INFO..., QUERY_INFO, CLOSE), else step by step. The first
  // SET_INFO that fails is the error, named `what`.
  struct InfoToSet {
    uint8_t info_class;
    Bytes buffer;
  };
  Result<FileStat> set_info_on_path(const std::string& path, uint32_t access, const std::vector<InfoToSet>& infos,
                                    const std::string& what);
  // read_only: FILE_ATTRIBUTE_READONLY too, set by the server as it creates
  // the directory (MS-SMB2 2.2.13 FileAttributes). Returns the new
  // directory's attributes (from its CREATE response if the query riding
  // with it failed: the directory exists either way).
  Result<FileStat> mkdir(const std::string& path, bool read_only = false);
  Result<void> rmdir(const std::string& path);
  Result<void> unlink(const std::string& path);
  Result<void> rename(const std::string& from, const std::string& to, bool replace);

  // Builds a request on this tree (encryption and ids filled in). It is not
  // re-sent after a reconnect and FileIds in it are not translated: use
  // transact() for that.
  template <class F>
  Result<session::Request> request(uint16_t command, F&& encode) {
    auto rt = route(nullptr, nullptr);
    if (!rt) return rt.take_error();
    auto r = make_request(command, rt->session_id, rt->tree_id, std::forward<F>(encode));
    if (r.ok()) r->encrypt = rt->encrypt;
    return r;
  }
  // Sends and returns the response if its Status is success (or one of
  // `also_ok`), else the status as an error naming `what`.
  Result<session::Response> call(session::Request req, const std::string& what,
                                 std::initializer_list<uint32_t> also_ok = {});

  // Whether (and why) a failed request waits for the reconnect and is re-sent.
  enum class Retry { no, lost, unresponsive, expired };

  // One consistent view of where a request goes: connection, session, tree
  // and (if `id`) the handle's current FileId, written to *current.
  struct Route {
    Connection* conn = nullptr;
    uint64_t session_id = 0;
    uint32_t tree_id = 0;
    bool encrypt = false;
    // Client::gen_ (what the Reconnector waits past) and session_gen_
    // (what tree ids, handles and listings belong to).
    uint64_t gen = 0, session_gen = 0;
    uint16_t dialect = 0;
  };
  // With `any_channel` (a READ or WRITE): on any channel of the session.
  Result<Route> route(const proto::FileId* id, proto::FileId* current, bool any_channel = false);
  // Builds (with the handle's current FileId), sends, and after a lost
  // connection waits for the reconnect and sends again; returns like call().
  using Encode = std::function<Result<void>(ByteWriter&, const Route&, const proto::FileId&)>;
  // `on_sent(conn, message_id)`, if given, runs after each send that has
  // not been answered yet (a blocking LOCK: the id is what Connection::cancel
  // needs).
  using SentHook = std::function<void(Connection&, uint64_t message_id)>;
  Result<session::Response> transact(const proto::FileId* id, uint16_t command, const Encode& encode,
                                     const std::string& what, std::initializer_list<uint32_t> also_ok = {},
                                     uint64_t charge_bytes = 0, const SentHook& on_sent = {});
  // Byte-range locks granted (or, with SMB2_LOCKFLAG_UNLOCK, released) on a
  // handle, remembered so that a reconnect that has to reopen the handle
  // by name takes them again (client/lock.cc records them).
  void note_locks(const proto::FileId& id, std::span<const proto::LockElement> locks);
  Result<void> set_info(const proto::FileId& id, uint8_t info_class, Bytes buffer, const std::string& what);
  // One path operation in one compound frame: CREATE with p, the
  // `middle` requests on the file it opened, CLOSE. The result: the
  // responses of CREATE and of the middle requests (their Status for the
  // caller to check; a failed CREATE is the error), or nullopt when it
  // must be done step by step instead (connection lost, session expired:
  // that path waits for the reconnect).
  struct Related {
    uint16_t command;
    std::function<Result<void>(ByteWriter&, const proto::FileId&)> encode;  // gets the related FileId
    uint64_t charge_bytes = 0;
  };
  std::optional<Result<std::vector<session::Response>>> compound_on(const std::string& path, const OpenParams& p,
                                                                    const std::vector<Related>& middle);

  uint32_t max_read() const;
  uint32_t max_write() const;
  std::string url_of(const std::string& path) const;

 private:
  friend class Client;
  Tree() = default;
  Retry retry_kind(const Result<session::Response>& r, Connection* conn, int attempt) const;
  void read_attempt(proto::FileId id, uint64_t offset, MutableByteView dest, IoDone done, int attempt,
                    const transport::Pipe* pipe = nullptr);
  void write_attempt(proto::FileId id, uint64_t offset, ByteView src, IoDone done, int attempt);
  Client* client_ = nullptr;
  // A reconnect changes them.
  uint32_t tree_id_ GUARDED_BY(client_->state_mu_) = 0;
  bool encrypt_ GUARDED_BY(client_->state_mu_) = false;
  HandleTable handles_ GUARDED_BY(client_->state_mu_);
  std::string share_;
  bool connected_ = false;
};

// "a/b/c" -> "a\b\c" without leading or trailing separators.
std::string to_smb_path(const std::string& path);
// FILETIME now (for NTLM).
uint64_t filetime_now();

}  // namespace smbkit::client
