// The mount's memory budget for data held ahead of its readers: the bytes
// of every open file's readahead window count against one limit (mount
// option `rabudget`), so many files read at once cannot each take a full
// `rasize` window. See docs/design/fuse.md ("Memory budget").
//
// Sharing is fair: with n files holding readahead (or refused some), one
// file may take more only while it holds less than limit / n; a lone
// reader may use all of it. Bytes a reader needs for the request it is serving right now are
// always granted (forced), so the budget never stops progress; those put
// the total above the limit by at most one request per FUSE worker, and
// nothing more is granted until the total is back under it.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace smbkit::fuse {

class MemoryBudget {
 public:
  // limit 0: no limit (every charge is granted; usage is still counted).
  explicit MemoryBudget(uint64_t limit) : limit_(limit) {}

  // Charges n bytes to holder if the budget allows it; always when forced.
  bool try_charge(const void* holder, uint64_t n, bool forced = false);
  // Returns n bytes the holder was charged (a holder at 0 stops counting
  // towards the fair share).
  void release(const void* holder, uint64_t n);
  // The holder is gone (a refused holder counts towards the shares, with
  // nothing charged, until it releases or is forgotten).
  void forget(const void* holder);

  uint64_t limit() const { return limit_; }
  uint64_t used() const;
  uint64_t peak() const;  // the highest used() so far
  size_t holders() const;

 private:
  const uint64_t limit_;
  // A leaf: taken under a file's Readahead and WriteBehind locks.
  mutable Mutex mu_;
  uint64_t used_ GUARDED_BY(mu_) = 0;
  uint64_t peak_ GUARDED_BY(mu_) = 0;
  std::map<const void*, uint64_t> held_ GUARDED_BY(mu_);  // holders with bytes charged
};

}  // namespace smbkit::fuse
