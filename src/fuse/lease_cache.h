// cache=strict on leases: the kernel page cache is trusted only while the
// server grants READ caching on the file (docs/design/fuse.md "Leases").
//
// - Every open of an inode asks for an RWH lease with the inode's lease
//   key, so the mount's own opens of one file share one lease and never
//   break each other.
// - An open that got READ caching keeps the kernel's pages (keep_cache) if
//   READ caching was held without a gap since they were read; otherwise the
//   kernel drops them at open. An open without READ caching is direct_io:
//   every read goes to the server.
// - On a break the owner's dirty data is written back first if WRITE
//   caching is lost (the flush hook sends its pending write-behind), the
//   inode's pages and attributes are invalidated with
//   fuse_lowlevel_notify_inval_inode if READ caching is lost, and only then
//   is the break acknowledged. This runs on the LeaseManager's thread, never
//   on a FUSE worker.
// - A handle opened with READ caching that lost it cannot switch to
//   direct_io; its reads are followed by an invalidation of the inode
//   (queued to the invalidation thread) so later reads ask the server again.
// - A reconnect ends every lease while it runs: as if each had been broken
//   to none, except that there is nothing to acknowledge and dirty data
//   stays queued (it is written through the reopened handles). When it is
//   done the readahead windows are dropped and the kernel's pages
//   invalidated (the file may have changed meanwhile), and then the leases
//   the reopened handles were granted again take effect: a long-lived open
//   caches again without being reopened.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "client/lease.h"

namespace smbkit::fuse {

class LeaseCache {
 public:
  explicit LeaseCache(client::Tree& tree);
  ~LeaseCache();

  // The session the invalidations go to; nullptr before it exists and
  // before it is destroyed (stops the invalidation thread's notifications).
  void set_session(fuse_session* se);
  // Called before a break is acknowledged when WRITE caching is lost: write
  // back the inode's dirty data.
  void set_flush_hook(std::function<void(fuse_ino_t)> hook);
  // Called when READ caching is lost, before the kernel's pages are
  // invalidated: drop the inode's readahead windows.
  void set_drop_hook(std::function<void(fuse_ino_t)> hook);
  // Called on the reconnect thread after a reconnect, before the regranted
  // leases take effect: mark every readahead window stale. Must not block.
  void set_drop_all_hook(std::function<void()> hook);
  // Called when HANDLE caching is lost (before the acknowledgment) and
  // after a reconnect: close the inode's deferred handles.
  void set_handle_lost_hook(std::function<void(fuse_ino_t)> hook);

  struct Opened {
    client::OpenFile file;
    client::LeaseKey key{};
    uint32_t lease_state = 0;
  };
  // CREATE with the lease key of `ino` (0: a new file whose inode is not
  // known yet: a fresh key, bound by attach()).
  // `prefetch`: a READ of the first bytes in the CREATE's frame.
  Result<Opened> open(fuse_ino_t ino, const std::string& smb_path, const client::OpenParams& p,
                      client::Prefetch* prefetch = nullptr);
  // Binds the open to ino and sets fi->keep_cache / fi->direct_io.
  // `writable`: opened for writing (see cached_attrs).
  void attach(fuse_ino_t ino, const Opened& o, fuse_file_info* fi, bool writable = false);
  // A deferred handle of ino taken back by an open: it still counts as
  // open; sets fi's flags from the lease held now.
  void reattach(fuse_ino_t ino, fuse_file_info* fi);
  // The open was released (or never handed to the kernel); `writable` as
  // given to attach().
  void closed(fuse_ino_t ino, bool writable = false);
  // An open() that is closed again before attach() (the caller closes the
  // handle).
  void discard(const Opened& o);
  // A read was served from the server: without READ caching, drop what the
  // kernel just cached.
  void after_read(fuse_ino_t ino);
  // The lease state the server grants now for ino's key (SMB2_LEASE_*
  // bits; 0 without a lease). cache=strict buffers writes (write-behind)
  // only under WRITE caching and serves readahead only under READ caching.
  uint32_t state(fuse_ino_t ino);

  // Attributes under a lease, as cifs.ko trusts them: while READ caching
  // is held on ino and no handle of ours can write it, its data cannot
  // change without a break, so a stat past actimeo is answered from the
  // attributes last read (no round trip). Take a token before the stat and
  // hand the result to keep_attrs(): it is kept only if nothing ended the
  // trust meanwhile. Trust ends when READ caching is lost (a break, a
  // reconnect), when a writer of ours opens the file, with our last handle
  // of it (the lease goes), and on drop_attrs() (this mount changed the
  // file's attributes or name).
  std::optional<uint64_t> attr_token(fuse_ino_t ino);
  void keep_attrs(fuse_ino_t ino, uint64_t token, const client::FileStat& s);
  std::optional<client::FileStat> cached_attrs(fuse_ino_t ino);
  void drop_attrs(fuse_ino_t ino);

  client::LeaseManager& manager() { return mgr_; }

 private:
  struct Node {
    client::LeaseKey key{};
    int opens = 0;
    bool cache_valid = false;               // READ caching held since the pages were read
    int writers = 0;                        // attached opens that can write
    uint64_t attrs_gen = 0;                 // a fresh number whenever attribute trust ends
    std::optional<client::FileStat> attrs;  // read under attrs_gen
  };
  // READ caching held, no writer: attributes read now may be kept.
  bool trusted_locked(const Node& n) REQUIRES(mu_);
  void untrust_locked(Node& n) REQUIRES(mu_) {
    n.attrs_gen = ++attr_gens_;
    n.attrs.reset();
  }
  void on_break(const client::LeaseBreakEvent& e);
  void on_all_lost();  // a reconnect: no lease survived
  void invalidate_now(fuse_ino_t ino);
  void inval_loop();

  client::LeaseManager mgr_;
  // Before the LeaseManager's lock (state() is asked under it); the hooks,
  // the invalidations and every request run without it.
  Mutex mu_;
  CondVar cv_;
  std::map<fuse_ino_t, Node> nodes_ GUARDED_BY(mu_);
  std::map<client::LeaseKey, fuse_ino_t> by_key_ GUARDED_BY(mu_);
  uint64_t attr_gens_ GUARDED_BY(mu_) = 0;
  std::function<void(fuse_ino_t)> flush_hook_ GUARDED_BY(mu_), drop_hook_ GUARDED_BY(mu_),
      handle_lost_hook_ GUARDED_BY(mu_);
  std::function<void()> drop_all_hook_ GUARDED_BY(mu_);
  fuse_session* se_ GUARDED_BY(mu_) = nullptr;
  struct Inval {
    fuse_ino_t ino;
    bool drop;  // a reconnect: close deferred handles and drop the readahead windows first
  };
  std::deque<Inval> inval_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread inval_thread_;
};

}  // namespace smbkit::fuse
