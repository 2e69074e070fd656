// Deferred close (mount.cifs `closetimeo`): under cache=strict, a file
// opened read-only and released while its lease grants HANDLE caching keeps
// its SMB handle open for `closetimeo` seconds, and an open of the same
// inode with the same access in that time takes it back instead of sending
// CREATE (and the CLOSE before it): one round trip instead of three for the
// open/read/close patterns of builds, editors and scripts.
// docs/design/fuse.md "Deferred close".
//
// A deferred handle is closed for real:
// - when its time is up;
// - when the lease loses HANDLE caching (another client needs the file:
//   the break waits for it);
// - before this mount unlinks the file, renames another file over it or
//   renames a directory above it (an open handle would leave the name
//   delete-pending or make the server refuse the rename);
// - before this mount sets the file's times (Samba keeps explicitly set
//   times until the last close, so later writes would not move mtime);
// - after a reconnect, and at unmount.
// Handles that could write (the server sets mtime when the writer closes),
// hold byte-range locks or belong to an unlinked file are never deferred.
//
// RELEASE is asynchronous: close(2) returns before it arrives, so a
// program's unlink or rename right after close(2) may run on another
// worker at the same time. Unlink, rename and setting times therefore hold
// a Block: it closes the deferred handles it covers and refuses to defer
// any of them until the operation is over; put() checks, under the same
// lock, that the file still has a name.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "proto/types.h"

namespace smbkit::fuse {

class DeferredCloses {
 public:
  // `close` ends one handle for real (CLOSE, and the lease count it held);
  // it runs without this object's lock, on the timer thread or the caller's.
  using Closer = std::function<void(fuse_ino_t, const proto::FileId&)>;
  DeferredCloses(std::chrono::milliseconds timeout, Closer close);
  // Closes whatever is still deferred.
  ~DeferredCloses();
  DeferredCloses(const DeferredCloses&) = delete;
  DeferredCloses& operator=(const DeferredCloses&) = delete;

  // Keeps `id` (opened on ino with DesiredAccess `access`) open until the
  // timeout, unless a Block covers ino or `still_ok` (run under the lock
  // Blocks take) says no. False: not kept, the caller closes it.
  bool put(fuse_ino_t ino, const proto::FileId& id, uint32_t access,
           const std::function<bool()>& still_ok = {});

  // Closes the deferred handles of the inodes `pred` selects (on the
  // caller's thread) and refuses to defer any of them while it lives.
  class Block {
   public:
    Block(Block&& o) noexcept : owner_(o.owner_), it_(o.it_) { o.owner_ = nullptr; }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    Block& operator=(Block&&) = delete;
    ~Block();

   private:
    friend class DeferredCloses;
    using Pred = std::function<bool(fuse_ino_t)>;
    Block(DeferredCloses* owner, std::list<Pred>::iterator it) : owner_(owner), it_(it) {}
    DeferredCloses* owner_;
    std::list<Pred>::iterator it_;
  };
  [[nodiscard]] Block block(std::function<bool(fuse_ino_t)> pred);
  // A deferred handle of ino opened with exactly `access`, taken back.
  std::optional<proto::FileId> take(fuse_ino_t ino, uint32_t access);
  // Closes ino's deferred handles now (on the caller's thread).
  void close_inode(fuse_ino_t ino);
  // Closes now the deferred handles of the inodes `pred` selects.
  void close_if(const std::function<bool(fuse_ino_t)>& pred);
  void close_all();

  struct Stats {
    uint64_t deferred = 0;  // releases that kept their handle
    uint64_t reused = 0;    // opens that took one back
    uint64_t expired = 0;   // closed when their time was up
    uint64_t early = 0;     // closed before (break, unlink, rename, reconnect, unmount)
    uint64_t refused = 0;   // releases not deferred because a Block covered them
  };
  Stats stats() const;

 private:
  struct Entry {
    fuse_ino_t ino;
    proto::FileId id;
    uint32_t access;
    std::chrono::steady_clock::time_point deadline;
  };
  void run();
  // Removes the entries pred selects and closes them (counted as `early`).
  void close_where(const std::function<bool(const Entry&)>& pred);

  const std::chrono::milliseconds timeout_;
  const Closer close_;
  // A leaf: the closer runs without it.
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<Entry> entries_ GUARDED_BY(mu_);
  std::list<Block::Pred> blocks_ GUARDED_BY(mu_);  // live Blocks
  Stats stats_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace smbkit::fuse
