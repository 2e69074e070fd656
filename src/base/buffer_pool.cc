#include "base/buffer_pool.h"

namespace smbkit {

std::shared_ptr<BufferPool> BufferPool::create(size_t max_cached_bytes) {
  return std::shared_ptr<BufferPool>(new BufferPool(max_cached_bytes));
}

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
  if (!b) b = new Bytes(cls);
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
