#include "fuse/memory_budget.h"

#include <algorithm>

namespace smbkit::fuse {

bool MemoryBudget::try_charge(const void* holder, uint64_t n, bool forced) {
  MutexLock g(mu_);
  auto it = held_.find(holder);
  uint64_t mine = it == held_.end() ? 0 : it->second;
  if (!forced && limit_ != 0) {
    uint64_t others = held_.size() - (it == held_.end() ? 0 : 1);
    uint64_t share = limit_ / (others + 1);
    if (used_ + n > limit_ || mine + n > std::max(share, n)) {
      // Refused: it still counts as a holder (with nothing), so room that
      // others free goes to it rather than back to them.
      held_.try_emplace(holder, 0);
      return false;
    }
  }
  held_[holder] = mine + n;
  used_ += n;
  peak_ = std::max(peak_, used_);
  return true;
}

void MemoryBudget::release(const void* holder, uint64_t n) {
  MutexLock g(mu_);
  auto it = held_.find(holder);
  if (it == held_.end()) return;
  n = std::min(n, it->second);
  it->second -= n;
  used_ -= n;
  if (it->second == 0) held_.erase(it);
}

void MemoryBudget::forget(const void* holder) {
  MutexLock g(mu_);
  auto it = held_.find(holder);
  if (it == held_.end()) return;
  used_ -= it->second;
  held_.erase(it);
}

uint64_t MemoryBudget::used() const {
  MutexLock g(mu_);
  return used_;
}

uint64_t MemoryBudget::peak() const {
  MutexLock g(mu_);
  return peak_;
}

size_t MemoryBudget::holders() const {
  MutexLock g(mu_);
  return held_.size();
}

}  // namespace smbkit::fuse
