// Oplocks and leases in the file layer: what a CREATE is granted (MS-SMB2
// 3.3.5.9, 3.3.5.9.8, 3.3.5.9.11; MS-FSA 2.1.5.17), what a new open, a
// write, a truncate, a byte-range lock or a rename breaks (MS-FSA
// 2.1.4.12-13), the acknowledgments (MS-SMB2 3.3.5.22) and the breaks they
// continue (3.3.4.7), and the CREATE that waits for a break to be
// acknowledged (a PendingCall, woken by the ack, a close or the timeout).
//
// Oplocks are held as the lease state they amount to (Caching), so one set
// of rules serves both: a new open takes W from every other holder, H
// instead when it meets a sharing violation, everything when it
// overwrites; a write takes everything from the other leases that read.
// Losing W or H needs the holder's acknowledgment; the CREATE that caused
// it waits while the holder still has what it conflicts with (or until
// break_timeout, after which the holder has no caching left). A conflict
// during a break lowers what that break requires; the ack goes on from
// there (in steps, as Windows).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "proto/create.h"
#include "proto/create_contexts.h"
#include "server/file_internal.h"

namespace smbkit::server {

// MS-SMB2 3.3.1.4 Lease: shared by every open one client makes with one
// key, on one file. Guarded by nodes_mu.
struct Lease {
  LeaseId id;
  proto::Guid16 parent{};
  bool v2 = false;
  bool has_parent = false;
  dev_t dev = 0;
  ino_t ino = 0;
  Caching caching;
  uint16_t epoch = 0;  // counts the state changes (sent on v2 only)
  size_t opens = 0;
  // The connection and session of its first open still there (its
  // breaks go to its client's first connection, oplock.cc).
  std::shared_ptr<const BreakSink> sink;
  uint64_t session_id = 0;
};

// The caching a CREATE asks for, and what decides the breaks it causes.
struct CacheRequest {
  uint8_t oplock_level = proto::SMB2_OPLOCK_LEVEL_NONE;  // RequestedOplockLevel
  std::optional<proto::CreateLease> lease;               // RqLs, when leasing applies
  std::array<std::byte, 16> client{};                    // ClientGuid
  bool overwrite = false;                                // an existing file superseded or overwritten
  bool stat_open = false;                                // attribute access only (is_stat_open)
  uint32_t granted = 0;                                  // the new open's GrantedAccess
  bool allowed = true;                                   // the share grants oplocks ("oplocks")
  bool retry = false;                                    // tried again after waiting for a break
};

// Breaks to send and CREATEs to wake once nodes_mu is released.
struct Breaks {
  struct Out {
    std::shared_ptr<const BreakSink> sink;
    BreakNotice notice;
  };
  std::vector<Out> notices;
  std::vector<std::shared_ptr<CreateWait>> wake;
  // Sends the notices and wakes the waiters; never under nodes_mu.
  void deliver();
};

// Whether an open with this GrantedAccess is a stat open (attributes,
// security, synchronize only), which does not count as another open when
// caching is granted (unless it holds caching itself).
bool is_stat_open(uint32_t granted);

// The CREATE response's lease context for `l` (MS-SMB2 2.2.14.2.10/11), as
// a v2 context when `v2`, with OplockLevel SMB2_OPLOCK_LEVEL_LEASE.
void answer_lease(proto::CreateResponse& resp, const Lease& l, const proto::Guid16& key, bool v2);

// The OplockLevel a state in lease bits amounts to.
uint8_t oplock_level_of(uint32_t state);

// The caching a CREATE request asks for on this connection and share.
CacheRequest cache_request(const proto::CreateRequest& req, const CallCtx& ctx, bool is_dir);

// STATUS_INVALID_PARAMETER when the request's lease key is the client's
// lease of another file (MS-SMB2 3.3.5.9.8), else 0.
uint32_t check_lease(FileService::Impl& impl, const FileNode& node, const CacheRequest& req) REQUIRES(impl.nodes_mu);

// The breaks a new open of `node` causes; true when one needs an
// acknowledgment first (the CREATE must wait).
bool break_for_open(FileService::Impl& impl, const std::shared_ptr<FileNode>& node, const CacheRequest& req,
                    bool sharing_violation, Breaks& out) REQUIRES(impl.nodes_mu);

// Grants the new open (already in node.opens) its oplock or lease and
// fills the CREATE response's OplockLevel and lease context.
void grant_caching(FileService::Impl& impl, FileNode& node, Open& o, const CacheRequest& req, uint16_t dialect,
                   proto::CreateResponse& resp) REQUIRES(impl.nodes_mu);

// An open goes: its lease loses it (and goes with its last open); the
// file's waiting CREATEs are woken.
void release_caching(FileService::Impl& impl, FileNode& node, Open& o, Breaks& out) REQUIRES(impl.nodes_mu);

// A write, truncate or byte-range lock through `writer`: level II
// oplocks (the writer's too) and other clients' R leases lose R, with no
// acknowledgment.
void break_for_write(FileService& svc, const Open& writer);

// A rename through `renamer`: the other leases of the file lose handle
// caching (their handles name the old path); the rename does not wait.
void break_for_rename(FileService& svc, const Open& renamer);

// Downgrades the breaks of `node` whose time is up and wakes its waiters.
void expire_breaks(FileService& svc, const std::shared_ptr<FileNode>& node);

// A CREATE waiting for a break's acknowledgment (file_service.h
// PendingCall). It keeps its own copy of the request and the tree; it is
// tried again (on the thread that woke it) when the file's holders change,
// and finishes with the CREATE's reply.
class CreateWait : public PendingCall, public std::enable_shared_from_this<CreateWait> {
 public:
  CreateWait(FileService& svc, std::weak_ptr<ConnOpens> opens, const CallCtx& ctx, ByteView msg);
  void start(std::function<void(FileReply)> done) override;
  void cancel() override;
  // An ack, a close or the timeout changed the file: try again.
  void wake();

 private:
  void drive();
  FileService& svc_;
  std::weak_ptr<ConnOpens> opens_;
  TreeCtx tree_;
  CallCtx ctx_;
  Bytes msg_;
  Mutex mu_;  // after nodes_mu, or alone
  std::function<void(FileReply)> done_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool running_ GUARDED_BY(mu_) = false;
  bool woken_ GUARDED_BY(mu_) = false;
  bool cancelled_ GUARDED_BY(mu_) = false;
  bool finished_ GUARDED_BY(mu_) = false;
};

}  // namespace smbkit::server
