// POSIX (fcntl) and flock locks of the mount, kept coherent across clients
// by SMB2 byte-range locks on the server (client/lock.h).
//
// Mapping and its limits (docs/design/fuse.md "Locks"):
// - SMB locks belong to a handle; POSIX locks to a process (the kernel's
//   lock_owner). A POSIX lock is taken on the server through the handle the
//   request came through; the table remembers (inode, owner, handle, range,
//   type) so that a later unlock or re-lock by the same owner through any of
//   its handles on that inode finds it, and flush(owner) (close of any of
//   the owner's descriptors) releases all of the owner's locks on the inode.
// - SMB unlocks must name exactly a locked range: an unlock or a change of
//   type over part of a held range unlocks the held range and locks the
//   parts that remain (two round trips; between them another client could
//   take the remainder: then the remainder is lost and logged).
// - Ranges are not merged; adjacent locks stay separate server locks.
// - flock locks are whole-file SMB locks of the handle (an open file
//   description, which is what flock locks belong to). Unlike on a local
//   file system they conflict with POSIX locks over the file.
// - F_GETLK probes the server with a FAIL_IMMEDIATELY lock and unlocks it.
//   The conflicting lock's owner is not known: l_pid is 0 and the range
//   reported is the one asked about; its type is found by a second, shared
//   probe. A range overlapping the caller's own locks is answered from the
//   table for the part held by the caller.
#pragma once

#define FUSE_USE_VERSION 312
#include <fcntl.h>
#include <fuse_lowlevel.h>

#include <cstdint>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "client/client.h"

namespace smbkit::fuse {

class LockTable {
 public:
  explicit LockTable(client::Tree& tree) : tree_(tree) {}

  // fcntl F_SETLK/F_SETLKW (wait) and F_GETLK. Return 0 or an errno
  // (EAGAIN for a conflict, EINTR when a wait was interrupted).
  int setlk(fuse_req_t req, fuse_ino_t ino, const proto::FileId& id, uint64_t owner, const struct flock& l, bool wait);
  int getlk(fuse_ino_t ino, const proto::FileId& id, uint64_t owner, struct flock& l);
  // flock(2): op is LOCK_SH/LOCK_EX/LOCK_UN, possibly | LOCK_NB.
  int flock(fuse_req_t req, fuse_ino_t ino, const proto::FileId& id, int op);
  // close(2) of one of owner's descriptors: POSIX drops all its locks.
  void release_owner(fuse_ino_t ino, uint64_t owner);
  // The handle is being closed (CLOSE drops its locks on the server).
  void handle_closed(const proto::FileId& id);
  // Whether the handle holds any lock (such a handle is not kept open by a
  // deferred close: its locks would outlive close(2)).
  bool holds(const proto::FileId& id);

  // Inclusive end of "to end of file" (OFFSET_MAX, as the kernel uses).
  static constexpr uint64_t kMaxEnd = 0x7fffffffffffffffull;

 private:
  struct Held {
    fuse_ino_t ino;
    uint64_t owner;  // lock_owner; 0 for flock entries
    bool flock;
    proto::FileId id;
    uint64_t start, end;  // inclusive
    bool exclusive;
  };
  int lock_on_server(fuse_req_t req, const proto::FileId& id, uint64_t start, uint64_t end, bool exclusive, bool wait);
  Result<void> unlock_on_server(const Held& h);

  client::Tree& tree_;
  // A leaf: never held across a server call.
  Mutex mu_;
  std::vector<Held> held_ GUARDED_BY(mu_);
};

}  // namespace smbkit::fuse
