#include "fuse/inode_table.h"

#include <vector>

namespace smbkit::fuse {

InodeTable::InodeTable() {
  nodes_[kRoot] = Node{"", true, 1};
  by_path_[""] = kRoot;
}

std::string InodeTable::join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

uint64_t InodeTable::lookup(const std::string& path, uint64_t lookups) {
  MutexLock lk(mu_);
  return lookup_locked(path, lookups);
}

uint64_t InodeTable::lookup_locked(const std::string& path, uint64_t lookups) {
  auto it = by_path_.find(path);
  if (it != by_path_.end()) {
    nodes_[it->second].nlookup += lookups;
    return it->second;
  }
  uint64_t ino = next_++;
  nodes_[ino] = Node{path, true, lookups, ++clock_};
  by_path_[path] = ino;
  return ino;
}

std::optional<uint64_t> InodeTable::lookup_if_unchanged(const std::string& path, uint64_t since, uint64_t lookups) {
  MutexLock lk(mu_);
  auto it = by_path_.find(path);
  if (it != by_path_.end() && (nodes_[it->second].since > since || nodes_[it->second].moving)) return std::nullopt;
  return lookup_locked(path, lookups);
}

bool InodeTable::unchanged_since(uint64_t ino, uint64_t since) const {
  MutexLock lk(mu_);
  auto it = nodes_.find(ino);
  return it != nodes_.end() && it->second.attached && !it->second.moving && it->second.since <= since;
}

std::vector<uint64_t> InodeTable::begin_rename(const std::string& from, const std::string& to) {
  MutexLock lk(mu_);
  std::vector<uint64_t> marked;
  for (const std::string* p : {&from, &to}) {
    if (auto it = by_path_.find(*p); it != by_path_.end()) marked.push_back(it->second);
    std::string prefix = *p + "/";
    for (auto c = by_path_.lower_bound(prefix); c != by_path_.end() && c->first.rfind(prefix, 0) == 0; ++c)
      marked.push_back(c->second);
  }
  for (uint64_t ino : marked) {
    nodes_[ino].moving++;
    nodes_[ino].since = ++clock_;
  }
  return marked;
}

void InodeTable::end_rename(const std::vector<uint64_t>& marked) {
  MutexLock lk(mu_);
  for (uint64_t ino : marked) {
    auto it = nodes_.find(ino);
    if (it == nodes_.end()) continue;
    if (it->second.moving) it->second.moving--;
    it->second.since = ++clock_;
  }
}

uint64_t InodeTable::clock() const {
  MutexLock lk(mu_);
  return clock_;
}

std::optional<uint64_t> InodeTable::find(const std::string& path) const {
  MutexLock lk(mu_);
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> InodeTable::path_of(uint64_t ino) const {
  MutexLock lk(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || !it->second.attached) return std::nullopt;
  return it->second.path;
}

void InodeTable::forget(uint64_t ino, uint64_t n) {
  if (ino == kRoot) return;
  MutexLock lk(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return;
  Node& nd = it->second;
  nd.nlookup = nd.nlookup > n ? nd.nlookup - n : 0;
  if (nd.nlookup) return;
  if (nd.attached) {
    auto p = by_path_.find(nd.path);
    if (p != by_path_.end() && p->second == ino) by_path_.erase(p);
  }
  nodes_.erase(it);
}

void InodeTable::detach(const std::string& path) {
  if (path.empty()) return;
  MutexLock lk(mu_);
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return;
  nodes_[it->second].attached = false;
  by_path_.erase(it);
  // Entries below a removed directory (rmdir only succeeds when empty,
  // but the kernel may still hold stale children) go too.
  std::string prefix = path + "/";
  for (auto c = by_path_.lower_bound(prefix); c != by_path_.end() && c->first.rfind(prefix, 0) == 0;) {
    nodes_[c->second].attached = false;
    c = by_path_.erase(c);
  }
}

void InodeTable::rename(const std::string& from, const std::string& to) {
  if (from == to || from.empty()) return;
  MutexLock lk(mu_);
  // Whatever was at `to` (and below it) is replaced.
  auto detach_locked = [&](const std::string& p) REQUIRES(mu_) {
    auto it = by_path_.find(p);
    if (it != by_path_.end()) {
      nodes_[it->second].attached = false;
      by_path_.erase(it);
    }
    std::string prefix = p + "/";
    for (auto c = by_path_.lower_bound(prefix); c != by_path_.end() && c->first.rfind(prefix, 0) == 0;) {
      nodes_[c->second].attached = false;
      c = by_path_.erase(c);
    }
  };
  // Collect the moving subtree first (to may lie below from only if the
  // server accepted a move into itself, which it does not).
  std::vector<std::pair<std::string, uint64_t>> moving;
  if (auto it = by_path_.find(from); it != by_path_.end()) moving.emplace_back(it->first, it->second);
  std::string prefix = from + "/";
  for (auto c = by_path_.lower_bound(prefix); c != by_path_.end() && c->first.rfind(prefix, 0) == 0; ++c)
    moving.emplace_back(c->first, c->second);
  for (auto& [p, ino] : moving) by_path_.erase(p);
  detach_locked(to);
  for (auto& [p, ino] : moving) {
    std::string np = to + p.substr(from.size());
    nodes_[ino].path = np;
    nodes_[ino].since = ++clock_;
    by_path_[np] = ino;
  }
}

size_t InodeTable::size() const {
  MutexLock lk(mu_);
  return nodes_.size();
}

uint64_t InodeTable::lookups(uint64_t ino) const {
  MutexLock lk(mu_);
  auto it = nodes_.find(ino);
  return it == nodes_.end() ? 0 : it->second.nlookup;
}

}  // namespace smbkit::fuse
