#include "base/buffer_pool.h"

#include <sys/mman.h>

#include <cstdint>

namespace smbkit {

std::shared_ptr<BufferPool> BufferPool::create(size_t max_cached_bytes) {
  return std::shared_ptr<BufferPool>(new BufferPool(max_cached_bytes));
}

namespace {

// A buffer of n zero bytes. A large one is mapped by the allocator and
// would otherwise be faulted in a page at a time while it is zeroed (a
// trap per 4 KiB, dear under a hypervisor: a tenth of the mount's CPU on
// a fresh mount's first 1 GiB read); MADV_POPULATE_WRITE maps it in one
// call first. Where the kernel lacks it (before 5.14) the faults happen
// as before.
constexpr size_t kPopulateAtLeast = 256u << 10;  // smaller ones come from the heap, mostly mapped

Bytes* fresh(size_t n) {
  auto* b = new Bytes;
  b->reserve(n);
  constexpr uintptr_t kPage = 4096;
  auto lo = (reinterpret_cast<uintptr_t>(b->data()) + kPage - 1) & ~(kPage - 1);
  auto hi = (reinterpret_cast<uintptr_t>(b->data()) + n) & ~(kPage - 1);
  if (n >= kPopulateAtLeast && hi > lo)
    (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
  b->resize(n);
  return b;
}

}  // namespace

std::shared_ptr<Bytes> BufferPool::get(size_t n) {
  // Size classes of 64 KiB so that a 4 MiB READ frame (4 MiB + headers)
  // reuses the buffer of the previous one.
  size_t cls = (n + 0xFFFF) & ~size_t{0xFFFF};
  if (cls == 0) cls = 0x10000;
  Bytes* b = nullptr;
  {
    MutexLock g(mu_);
    auto it = free_.lower_bound(cls);
    if (it != free_.end() && it->first <= cls * 2) {
      b = it->second;
      cached_ -= it->first;
      free_.erase(it);
    }
  }
  if (!b) b = fresh(cls);
  std::weak_ptr<BufferPool> weak = weak_from_this();
  return std::shared_ptr<Bytes>(b, [weak](Bytes* p) {
    if (auto pool = weak.lock())
      pool->put(p);
    else
      delete p;
  });
}

void BufferPool::put(Bytes* b) {
  {
    MutexLock g(mu_);
    if (cached_ + b->size() <= max_cached_) {
      cached_ += b->size();
      free_.emplace(b->size(), b);
      return;
    }
  }
  delete b;
}

BufferPool::~BufferPool() {
  for (auto& [size, b] : free_) delete b;
}

size_t BufferPool::cached_bytes() const {
  MutexLock g(mu_);
  return cached_;
}

}  // namespace smbkit
