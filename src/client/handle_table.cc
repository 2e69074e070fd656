#include "client/handle_table.h"

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

void HandleTable::reopened(const proto::FileId& stable, const proto::FileId& current, Durability d,
                           const proto::Guid16& create_guid) {
  auto it = by_stable_.find(key(stable));
  if (it == by_stable_.end()) return;
  it->second.current = current;
  it->second.durable = d;
  it->second.create_guid = create_guid;
  it->second.lost.reset();
}

void HandleTable::mark_lost(const proto::FileId& stable, Error why) {
  auto it = by_stable_.find(key(stable));
  if (it != by_stable_.end()) it->second.lost = std::move(why);
}

uint32_t HandleTable::reopen_disposition(uint32_t) {
  // Whatever the first CREATE asked, the file existed when it succeeded:
  // FILE_CREATE would now collide, and SUPERSEDE/OVERWRITE would throw away
  // what was written before the disconnect.
  return proto::FILE_OPEN;
}

}  // namespace smbkit::client
