#include "client/handle_table.h"

#include <algorithm>

#include "proto/constants.h"
#include "proto/create.h"

namespace smbkit::client {

Result<void> HandleTable::add(HandleEntry e) {
  auto k = key(e.stable);
  if (by_stable_.count(k))
    return nt_error(STATUS_INVALID_NETWORK_RESPONSE, "server reused a FileId still held by this client");
  by_stable_.emplace(k, std::move(e));
  return {};
}

Result<proto::FileId> HandleTable::resolve(const proto::FileId& stable) const {
  auto it = by_stable_.find(key(stable));
  if (it == by_stable_.end()) return stable;
  if (it->second.lost) return *it->second.lost;
  return it->second.current;
}

void HandleTable::remove(const proto::FileId& stable) { by_stable_.erase(key(stable)); }

std::vector<HandleEntry> HandleTable::entries() const {
  std::vector<HandleEntry> v;
  v.reserve(by_stable_.size());
  for (auto& [k, e] : by_stable_) v.push_back(e);
  return v;
}

bool HandleTable::reopened(const proto::FileId& stable, const proto::FileId& current, Durability d,
                           const proto::Guid16& create_guid) {
  auto it = by_stable_.find(key(stable));
  if (it == by_stable_.end()) return false;
  it->second.current = current;
  it->second.durable = d;
  it->second.create_guid = create_guid;
  it->second.lost.reset();
  return true;
}

void HandleTable::mark_lost(const proto::FileId& stable, Error why) {
  auto it = by_stable_.find(key(stable));
  if (it != by_stable_.end()) it->second.lost = std::move(why);
}

void HandleTable::note_locks(const proto::FileId& stable, std::span<const proto::LockElement> locks) {
  auto it = by_stable_.find(key(stable));
  if (it == by_stable_.end()) return;
  auto& held = it->second.locks;
  for (const auto& l : locks) {
    if (l.Flags & proto::SMB2_LOCKFLAG_UNLOCK) {
      auto h = std::find_if(held.begin(), held.end(),
                            [&](const proto::LockElement& x) { return x.Offset == l.Offset && x.Length == l.Length; });
      if (h != held.end()) held.erase(h);
    } else {
      // Kept as a FAIL_IMMEDIATELY request: that is how it is taken again.
      held.push_back({l.Offset, l.Length,
                      (l.Flags & proto::SMB2_LOCKFLAG_EXCLUSIVE_LOCK ? proto::SMB2_LOCKFLAG_EXCLUSIVE_LOCK
                                                                     : proto::SMB2_LOCKFLAG_SHARED_LOCK) |
                          proto::SMB2_LOCKFLAG_FAIL_IMMEDIATELY});
    }
  }
}

bool HandleTable::same_file(const HandleEntry& e, uint64_t disk_file_id, uint64_t end_of_file,
                            uint64_t last_write_time) {
  if (e.disk_file_id != 0 && disk_file_id != 0 && e.disk_file_id != disk_file_id) return false;
  constexpr uint32_t kMayChange = proto::FILE_WRITE_DATA | proto::FILE_APPEND_DATA | proto::GENERIC_WRITE |
                                  proto::GENERIC_ALL | proto::MAXIMUM_ALLOWED;
  // Our own writes change size and times; a read-only handle's file must
  // look exactly as it did (a reader never mixes two versions).
  if (!(e.access & kMayChange))
    return e.end_of_file == end_of_file && e.last_write_time == last_write_time;
  return true;
}

uint32_t HandleTable::reopen_disposition(uint32_t) {
  // Whatever the first CREATE asked, the file existed when it succeeded:
  // FILE_CREATE would now collide, and SUPERSEDE/OVERWRITE would throw away
  // what was written before the disconnect.
  return proto::FILE_OPEN;
}

}  // namespace smbkit::client
