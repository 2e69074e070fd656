// The FUSE low-level file system over one connected share (client::Tree).
// Metadata operations are synchronous SMB exchanges on the calling FUSE
// worker thread; file data goes through readahead.h / write_behind.h
// (asynchronous READ/WRITE windows). See docs/design/fuse.md.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/buffer_pool.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "client/client.h"
#include "client/server_copy.h"
#include "fuse/deferred_close.h"
#include "fuse/inode_table.h"
#include "fuse/lease_cache.h"
#include "fuse/locks.h"
#include "fuse/open_files.h"
#include "fuse/open_handles.h"
#include "fuse/options.h"

namespace smbkit::fuse {

// What the file system needs from the options.
struct FsConfig {
  std::string prefix;  // path inside the share used as the root
  CacheMode cache = CacheMode::strict;
  bool direct = false;  // fi->direct_io on every open
  double attr_timeout_file = 1, attr_timeout_dir = 1, entry_timeout = 1;
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t file_mode = 0755, dir_mode = 0755;
  bool ro = false;
  uint32_t rsize = 4u << 20, wsize = 4u << 20;  // bytes per SMB READ / WRITE (also capped by the server)
  uint32_t fuse_max_io = 1u << 20;              // max_read / max_write asked of the kernel
  uint32_t rasize = 64u << 20;                  // readahead window cap (0: no readahead)
  uint64_t rabudget = 256ull << 20;             // all readahead windows together (0: no limit)
  uint64_t wbbudget = 256ull << 20;             // all write-behind WRITEs in flight together (0: no limit)
  uint32_t closetimeo = 1;                      // seconds a released handle may stay open (deferred close)
  // Readahead payloads spliced socket -> pipe -> /dev/fuse (MountOptions::splice;
  // off when the mount asks for signing or sealing: those payloads must be read).
  bool splice = false;
  // The kernel's writeback cache (FUSE_CAP_WRITEBACK_CACHE): cache=loose only.
  bool writeback_cache() const { return cache == CacheMode::loose && !direct; }

  static FsConfig from(const MountOptions& o);
};

// Handles handed to the kernel as fi->fh and not released yet. The kernel
// drops RELEASEs still queued when an unmount ends the connection; those
// handles are freed at unmount from here.
template <class T>
class KernelHandles {
 public:
  uint64_t adopt(std::unique_ptr<T> h) {
    MutexLock g(mu_);
    live_.insert(h.get());
    return reinterpret_cast<uint64_t>(h.release());
  }
  std::unique_ptr<T> take(uint64_t fh) {
    T* h = reinterpret_cast<T*>(fh);
    MutexLock g(mu_);
    live_.erase(h);
    return std::unique_ptr<T>(h);
  }
  std::vector<std::unique_ptr<T>> take_all() {
    MutexLock g(mu_);
    std::vector<std::unique_ptr<T>> out;
    for (T* h : live_) out.emplace_back(h);
    live_.clear();
    return out;
  }

 private:
  // A leaf; the handles are freed without it.
  Mutex mu_;
  std::set<T*> live_ GUARDED_BY(mu_);
};
struct FileHandle;  // filesystem.cc
struct DirHandle;

class SmbFs {
 public:
  SmbFs(client::Tree& tree, FsConfig cfg);
  ~SmbFs();
  static const fuse_lowlevel_ops& ops();

  client::Tree& tree() { return tree_; }
  const FsConfig& config() const { return cfg_; }
  InodeTable& inodes() { return inodes_; }
  // Open SMB handles by inode (fstat of a file unlinked while open).
  OpenHandles& open_handles() { return open_handles_; }
  // Open files' readahead and write-behind state (see open_files.h).
  OpenFiles& files() { return files_; }
  LockTable& locks() { return locks_; }
  // The lease-backed page cache (cache=strict without directio), else null.
  LeaseCache* leases() { return leases_.get(); }
  // Deferred closes (cache=strict with closetimeo > 0), else null.
  DeferredCloses* deferred() { return deferred_.get(); }
  // The FUSE session (for cache invalidation); nullptr before destroying it.
  void set_session(fuse_session* se) {
    if (leases_) leases_->set_session(se);
  }
  // Closes deferred handles and ends lease handling (joins their threads);
  // the tree must outlive it.
  void stop_leases() {
    deferred_.reset();
    leases_.reset();
  }

  // The share path for a path relative to the mount root.
  std::string smb_path(const std::string& p) const;
  // FileStat -> struct stat as mount.cifs presents it without unix
  // extensions (owner and modes from the options, write bits cleared for
  // FILE_ATTRIBUTE_READONLY).
  struct stat to_stat(const client::FileStat& s, uint64_t ino) const;
  double attr_timeout(bool dir) const { return dir ? cfg_.attr_timeout_dir : cfg_.attr_timeout_file; }
  uint32_t read_chunk() const;
  uint32_t write_chunk() const;

  // Reads answered from the connection's completion (not on the FUSE
  // worker that received them) count here, so the session is not
  // destroyed under a reply still to come.
  void begin_async_reply() { async_replies_.fetch_add(1, std::memory_order_relaxed); }
  void end_async_reply() { async_replies_.fetch_sub(1, std::memory_order_release); }
  // Waits until every reply begun has been sent (after the session loop,
  // before fuse_session_destroy).
  void wait_async_replies();
  // Buffers of those reads (they outlive the worker's call).
  BufferPool& read_buffers() { return *read_buffers_; }

  // What FSCTL_SRV_COPYCHUNK_WRITE may ask of this server, as learned
  // (copy_range.cc).
  client::CopychunkLimits copy_limits() {
    MutexLock g(copy_mu_);
    return copy_limits_;
  }
  void set_copy_limits(const client::CopychunkLimits& l) {
    MutexLock g(copy_mu_);
    copy_limits_ = l;
  }

  KernelHandles<FileHandle>& file_handles() { return file_handles_; }
  KernelHandles<DirHandle>& dir_handles() { return dir_handles_; }
  // At unmount, after the session is gone: files the kernel never
  // released are closed (write-behind flushed, readahead stopped) and
  // every handle left is freed. The tree must still be there.
  void close_unreleased();

 private:
  client::Tree& tree_;
  FsConfig cfg_;
  InodeTable inodes_;
  OpenHandles open_handles_;
  OpenFiles files_;
  LockTable locks_;
  std::unique_ptr<LeaseCache> leases_;
  std::unique_ptr<DeferredCloses> deferred_;  // uses leases_: goes first
  std::atomic<int64_t> async_replies_{0};
  std::shared_ptr<BufferPool> read_buffers_ = BufferPool::create(16u << 20);
  KernelHandles<FileHandle> file_handles_;
  KernelHandles<DirHandle> dir_handles_;
  Mutex copy_mu_;  // a leaf
  client::CopychunkLimits copy_limits_ GUARDED_BY(copy_mu_);
};

}  // namespace smbkit::fuse
