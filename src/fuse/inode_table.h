// FUSE inode numbers <-> share paths. SMB opens by path, so every inode
// the kernel knows names a path relative to the mount's root ("" is the
// root, inode 1). The kernel's lookup count is kept per inode; an inode is
// dropped when forget brings it to zero. Unlink and rename-over detach an
// inode from its path (it lives on, pathless, until forgotten); rename
// moves an entry and every path below it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace smbkit::fuse {

class InodeTable {
 public:
  static constexpr uint64_t kRoot = 1;

  InodeTable();

  // The inode for path (created if new) with `lookups` added to its count.
  uint64_t lookup(const std::string& path, uint64_t lookups = 1);
  // Like lookup(), but only if the inode at path has held it since `since`
  // (a value of clock()): nullopt when another inode was created at or
  // renamed to path after that, i.e. when attributes fetched for path at
  // `since` may describe the previous occupant. Nothing is counted then.
  std::optional<uint64_t> lookup_if_unchanged(const std::string& path, uint64_t since, uint64_t lookups = 1);
  // True if ino still has a path and nothing was created at or renamed to
  // it (nor was ino moved) since `since`: a by-path open started then
  // reached ino's file.
  bool unchanged_since(uint64_t ino, uint64_t since) const;
  // Around a rename on the server: the inodes at from and to (and below)
  // count as changing from begin_rename until end_rename, because the
  // server's namespace moves before rename() updates this table. Returns
  // the marked inodes, to pass to end_rename (after rename() or a failure).
  std::vector<uint64_t> begin_rename(const std::string& from, const std::string& to);
  void end_rename(const std::vector<uint64_t>& marked);
  // Advances whenever an inode gets a path (creation, rename).
  uint64_t clock() const;
  // The inode for path if known, without counting.
  std::optional<uint64_t> find(const std::string& path) const;
  // The path of ino; nullopt if unknown or detached (unlinked).
  std::optional<std::string> path_of(uint64_t ino) const;
  // Drops n lookups; the inode goes away at zero (never the root).
  void forget(uint64_t ino, uint64_t n);
  // After unlink/rmdir of path: the inode there loses its path.
  void detach(const std::string& path);
  // After a rename: from (and everything below it) now lives at to; an
  // inode previously at to (replaced) is detached.
  void rename(const std::string& from, const std::string& to);

  size_t size() const;
  uint64_t lookups(uint64_t ino) const;  // for tests

  // "dir" + "name" -> "dir/name" ("" is the root).
  static std::string join(const std::string& dir, const std::string& name);

 private:
  uint64_t lookup_locked(const std::string& path, uint64_t lookups) REQUIRES(mu_);
  struct Node {
    std::string path;
    bool attached = true;
    uint64_t nlookup = 0;
    uint64_t since = 0;   // clock_ when the node got its current path
    uint32_t moving = 0;  // renames in flight that involve this node
  };
  // A leaf: no server call and no other lock while it is held.
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Node> nodes_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> by_path_ GUARDED_BY(mu_);  // attached nodes only; ordered for subtree moves
  uint64_t next_ GUARDED_BY(mu_) = 2;
  uint64_t clock_ GUARDED_BY(mu_) = 0;
};

}  // namespace smbkit::fuse
