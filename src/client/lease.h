// SMB2 leases (MS-SMB2 2.2.13.2.8/2.2.13.2.10, 3.2.4.3.8, 3.2.5.19.2): the
// client side bookkeeping. A LeaseManager belongs to one Tree; it opens files
// with a lease request, remembers per lease key what the server granted
// (READ/HANDLE/WRITE caching and, for lease v2 on SMB 3.x, the epoch), and
// handles break notifications: the owner's callback flushes dirty data and
// drops cached data first, then the manager sends the LEASE_BREAK
// acknowledgment when the server asked for one.
//
// Threading: the Connection's break handler only queues the notification;
// a thread owned by the manager runs the owner's callback and sends the
// acknowledgment, so the receiver thread never waits on a request.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "base/callback_slot.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "client/client.h"
#include "proto/create_contexts.h"
#include "proto/oplock_break.h"

namespace smbkit::client {

using LeaseKey = proto::Guid16;

// Lease states are SMB2_LEASE_{READ,HANDLE,WRITE}_CACHING bits.
inline constexpr uint32_t kLeaseRWH =
    proto::SMB2_LEASE_READ_CACHING | proto::SMB2_LEASE_HANDLE_CACHING | proto::SMB2_LEASE_WRITE_CACHING;
// "RWH" style text for logs and test messages.
std::string lease_state_name(uint32_t state);

struct LeasedOpen {
  OpenFile file;
  uint32_t lease_state = 0;  // what the server granted (0: no lease)
};

// One break as the owner sees it.
struct LeaseBreakEvent {
  LeaseKey key{};
  uint32_t old_state = 0, new_state = 0;
  bool ack_required = false;
};

struct LeaseStats {
  uint64_t breaks = 0;          // lease break notifications received for known keys
  uint64_t acks_sent = 0;       // acknowledgments the server accepted
  uint64_t ack_failures = 0;    // acknowledgments refused or not delivered
  uint64_t unknown_breaks = 0;  // notifications for keys we do not know (or oplock breaks)
  uint64_t regranted = 0;       // leases granted again to handles a reconnect reopened
};

class LeaseManager {
 public:
  // Registers itself as the Connection's break handler (one manager per
  // connection).
  explicit LeaseManager(Tree& tree);
  // Unregisters and joins the break thread (queued breaks still run).
  ~LeaseManager();
  LeaseManager(const LeaseManager&) = delete;
  LeaseManager& operator=(const LeaseManager&) = delete;

  // Whether the server can grant leases (SMB 2.1+ with SMB2_GLOBAL_CAP_LEASING).
  bool supported() const;
  // Lease v2 (epochs) on SMB 3.x.
  bool v2() const;

  // Called on the break thread before the acknowledgment: must write back
  // what the lost WRITE caching covered and drop what the lost READ caching
  // covered. It may send requests (it is not the receiver thread). Runs
  // with no lock of the manager held; once set_break_callback returns, the
  // callback it replaced has finished and will not run again.
  using BreakCallback = std::function<void(const LeaseBreakEvent&)>;
  void set_break_callback(BreakCallback cb);

  // Called on the reconnect thread after a reconnect, while state() is
  // still 0 for every key (it is from the reconnect's start): whatever was
  // cached under the old leases must be dropped. Right after it, the
  // leases the reopened handles were granted again take effect. Must not
  // send requests or wait for any. Runs with no lock of the manager held;
  // replacing it waits as set_break_callback does.
  void set_lost_callback(std::function<void()> cb);

  static LeaseKey new_key();

  // CREATE with an RqLs context for `key` asking for `want` (MS-SMB2
  // 3.2.4.3.8). Opens sharing one key share one lease. Without lease support
  // this is a plain open with lease_state 0. The handle is in the Tree's
  // handle table (Tree::close closes it; a reconnect reopens it and asks
  // for the lease again).
  // `prefetch`: a READ of the first bytes in the CREATE's frame (client.h).
  Result<LeasedOpen> open(const std::string& path, const OpenParams& p, const LeaseKey& key, uint32_t want = kLeaseRWH,
                          Prefetch* prefetch = nullptr);
  // The state we hold for key (0 when none or unknown).
  uint32_t state(const LeaseKey& key) const;
  // A handle open()ed with this key was closed (by Tree::close). Each open
  // counts; after the last close the server has dropped the lease and so
  // do we. (Counting per handle keeps a lease that a new open with the same
  // key was granted while the previous handle was being closed.)
  void closed(const LeaseKey& key);
  // Waits (bounded) until pred(state) holds for the state as of the last
  // break whose callback has finished; for tests and callers that want a
  // break to have been handled. pred runs under the manager's lock: it
  // may only look at the state it is given.
  bool wait_for(const LeaseKey& key, const std::function<bool(uint32_t)>& pred, std::chrono::milliseconds limit) const;
  LeaseStats stats() const;

 private:
  struct Entry {
    uint32_t state = 0;    // what may be used now (a break lowers it first)
    uint32_t settled = 0;  // state once the last break's callback has run (wait_for)
    int handles = 0;       // open handles with this key
    uint16_t epoch = 0;
    bool have_epoch = false;
    uint32_t cap = kLeaseRWH;  // what the breaks since the last reconnect began left
  };
  void on_notification(const session::Response& r);                       // receiver thread
  void on_reconnect_begins();                                             // reconnect thread
  void on_reconnected(const std::vector<proto::CreateLease>& regranted);  // reconnect thread
  void run();                                                             // break thread
  void handle(const proto::LeaseBreakNotification& n);
  Result<void> acknowledge(const LeaseKey& key, uint32_t state);

  Tree& tree_;
  // A leaf: requests (the acknowledgment, open's CREATE) and the callbacks
  // run without it. fuse::LeaseCache takes it (through state()) under its
  // own lock.
  mutable Mutex mu_;
  mutable CondVar cv_;  // queue_ changes, and state changes (wait_for)
  std::map<LeaseKey, Entry> leases_ GUARDED_BY(mu_);
  std::deque<proto::LeaseBreakNotification> queue_ GUARDED_BY(mu_);
  uint64_t reconnects_ GUARDED_BY(mu_) = 0;  // reconnects seen (an open spanning one gets no lease)
  LeaseStats stats_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  CallbackSlot<const LeaseBreakEvent&> callback_;
  CallbackSlot<> lost_callback_;
  uint64_t observer_ = 0;
  std::thread thread_;
};

}  // namespace smbkit::client
