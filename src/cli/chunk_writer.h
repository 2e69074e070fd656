// A download's local writes on a thread of their own, so that a slow write
// (the page cache throttling a writer above its dirty limits, a slow disk,
// a FIFO read slowly) does not stop the thread that issues the next READs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "base/bytes.h"
#include "base/mutex.h"
#include "base/result.h"

namespace smbkit::cli {

// Writes chunks into fd in the order they are pushed: pwrite at each
// chunk's offset for a positional target (a part file), write for a stream
// (a device, FIFO or stdout). At most `bound` bytes wait or are being
// written; push() waits above it, which in turn holds back the READs, so
// a local side slower than the network costs `bound` bytes of memory, not
// what the page cache would take. After the first failed write nothing more
// is written: push() and finish() return that error (with `what`, the name
// messages give the file).
class ChunkWriter {
 public:
  // 8 MiB: eight 1 MiB chunks (client::TransferOptions), one being written. The READs
  // in flight (the window, 8 to 64 MiB) keep arriving while a push waits,
  // so the window is the buffer that covers a write's stall; a larger bound
  // measured no faster here and cost more CPU (the copy into the page
  // cache reads buffers that have left the CPU's caches) and 30 MiB more
  // RSS (docs/benchmarks.md, "get into a file on the local disk"). A disk
  // that stays slower than the network throttles the writes
  // (balance_dirty_pages) and, through this bound, the READs.
  static constexpr uint64_t kDefaultBound = 8ull << 20;

  ChunkWriter(int fd, bool positional, std::string what, uint64_t bound = kDefaultBound);
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;
  // Waits for what was pushed (finish()) if it was not called.
  ~ChunkWriter();

  // Queues [buf, buf + len) for offset `off`; the buffer is dropped once
  // written. Waits while `bound` bytes are held. The error of an earlier
  // write, if one failed.
  Result<void> push(uint64_t off, std::shared_ptr<const Bytes> buf, size_t len) EXCLUDES(mu_);
  // Waits until everything pushed is written (or a write failed) and stops
  // the thread; the first error. Called once; push() after it fails.
  Result<void> finish() EXCLUDES(mu_);

 private:
  struct Chunk {
    uint64_t off;
    std::shared_ptr<const Bytes> buf;
    size_t len;
  };
  void run() EXCLUDES(mu_);
  Result<void> write_chunk(const Chunk& c) const;

  const int fd_;
  const bool positional_;
  const std::string what_;
  const uint64_t bound_;
  // A leaf: no other lock is taken under it (a buffer goes back to its
  // pool only after mu_ is let go).
  Mutex mu_;
  CondVar changed_;  // a chunk queued or written, an error, closing
  std::deque<Chunk> queue_ GUARDED_BY(mu_);
  uint64_t held_ GUARDED_BY(mu_) = 0;  // bytes queued or being written
  bool closing_ GUARDED_BY(mu_) = false;
  Result<void> error_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace smbkit::cli
