// The opens of one Tree, kept so that reconnect can reopen them and callers'
// FileIds stay valid: a caller keeps the FileId the server gave at open (the
// "stable" id); after a reconnect the table maps it to the FileId of the
// reopened handle. Not thread-safe: the owning Client's state lock guards it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "proto/create_contexts.h"
#include "proto/lock.h"
#include "proto/types.h"

namespace smbkit::client {

enum class Durability : uint8_t {
  none,  // reopen by path only
  v1,    // DHnQ granted: reconnect with DHnC (MS-SMB2 2.2.13.2.4)
  v2,    // DH2Q granted: reconnect with DH2C (MS-SMB2 2.2.13.2.12)
};

struct HandleEntry {
  proto::FileId stable;   // what the caller holds
  proto::FileId current;  // what the server knows now
  std::string path;       // as given to Tree::open
  // The CREATE as first sent (OpenParams fields), for reopen by path.
  uint32_t access = 0, disposition = 0, options = 0, attributes = 0, share = 0;
  bool want_durable = false;
  // The lease asked for at open (key and state; nullopt: none), asked for
  // again by every reopen after a reconnect.
  std::optional<proto::CreateLease> lease;
  Durability durable = Durability::none;
  proto::Guid16 create_guid{};
  // Identity of the file at the first open, checked when the handle has to
  // be reopened by name: the server's on-disk id (QFid; 0 if not given)
  // and, for handles that cannot write, size and LastWriteTime. (Samba's
  // CreationTime is not stable: without a stored one it is computed from
  // the Unix times, atime included.)
  uint64_t disk_file_id = 0;
  uint64_t end_of_file = 0, last_write_time = 0;
  // Byte-range locks this handle holds on the server (Offset, Length and
  // the shared/exclusive flag), to take again when it is reopened by name.
  std::vector<proto::LockElement> locks;
  // Set when a reconnect could not bring the handle back; every later use
  // fails with it.
  std::optional<Error> lost;
};

class HandleTable {
 public:
  // Registers a new open. Fails if `stable` is already in use (a reopened
  // handle's new id can collide with a stable id only by chance).
  Result<void> add(HandleEntry e);
  // The FileId to put on the wire for a caller's id; ids the table does not
  // know pass through unchanged. A lost handle gives its error.
  Result<proto::FileId> resolve(const proto::FileId& stable) const;
  void remove(const proto::FileId& stable);
  bool contains(const proto::FileId& stable) const { return by_stable_.count(key(stable)) != 0; }
  size_t size() const { return by_stable_.size(); }

  std::vector<HandleEntry> entries() const;
  // After a reconnect: the handle now lives under `current` (and its
  // durability may have changed), or it is lost.
  // Returns false if the handle was closed meanwhile (the reopened one is
  // then the caller's to close).
  bool reopened(const proto::FileId& stable, const proto::FileId& current, Durability d,
                const proto::Guid16& create_guid);
  void mark_lost(const proto::FileId& stable, Error why);
  // Granted locks are added; unlocks remove the lock with exactly that
  // range (SMB unlocks name exact ranges).
  void note_locks(const proto::FileId& stable, std::span<const proto::LockElement> locks);

  // Disposition for reopening a handle by path: never create or truncate
  // again (the data written before the disconnect must survive).
  static uint32_t reopen_disposition(uint32_t disposition);
  // Whether a handle reopened by name (as `reopened`, with its on-disk id,
  // size and LastWriteTime) is plausibly the same file as `e`.
  static bool same_file(const HandleEntry& e, uint64_t disk_file_id, uint64_t end_of_file,
                        uint64_t last_write_time);

 private:
  using Key = std::pair<uint64_t, uint64_t>;
  static Key key(const proto::FileId& f) { return {f.Persistent, f.Volatile}; }
  std::map<Key, HandleEntry> by_stable_;
};

}  // namespace smbkit::client
