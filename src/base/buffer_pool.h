// Recycles large byte buffers, so that the data path neither zero-fills nor
// page-faults fresh memory for every frame (measured without it: memset
// and page faults are a fifth of the client's CPU on a 1 GiB get).
#pragma once

#include <cstddef>
#include <map>
#include <memory>

#include "base/bytes.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace smbkit {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  // max_cached_bytes bounds what idle buffers may hold.
  static std::shared_ptr<BufferPool> create(size_t max_cached_bytes = 32u << 20);

  // A buffer whose size() is at least n (contents unspecified). It goes
  // back to the pool when the last reference drops.
  std::shared_ptr<Bytes> get(size_t n);

  size_t cached_bytes() const;
  ~BufferPool();

 private:
  explicit BufferPool(size_t max) : max_cached_(max) {}
  void put(Bytes* b);

  size_t max_cached_;
  // A leaf: taken under the data path's locks (WriteBehind's, a
  // Connection's); a buffer is created and freed without it.
  mutable Mutex mu_;
  std::multimap<size_t, Bytes*> free_ GUARDED_BY(mu_);  // by size
  size_t cached_ GUARDED_BY(mu_) = 0;
};

}  // namespace smbkit
