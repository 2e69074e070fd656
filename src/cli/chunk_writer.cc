#include "cli/chunk_writer.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace smbkit::cli {

ChunkWriter::ChunkWriter(int fd, bool positional, std::string what, uint64_t bound)
    : fd_(fd), positional_(positional), what_(std::move(what)), bound_(bound), thread_([this] { run(); }) {}

ChunkWriter::~ChunkWriter() {
  if (thread_.joinable()) (void)finish();
}

Result<void> ChunkWriter::push(uint64_t off, std::shared_ptr<const Bytes> buf, size_t len) {
  MutexLock g(mu_);
  if (closing_) return sys_error(EINVAL, what_ + ": written after the end");
  // One chunk larger than the bound still goes through, alone.
  while (error_ && held_ != 0 && held_ + len > bound_) changed_.wait(mu_);
  if (!error_) return error_;
  held_ += len;
  queue_.push_back(Chunk{off, std::move(buf), len});
  changed_.notify_all();
  return {};
}

Result<void> ChunkWriter::finish() {
  {
    MutexLock g(mu_);
    closing_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  MutexLock g(mu_);
  return error_;
}

Result<void> ChunkWriter::write_chunk(const Chunk& c) const {
  const std::byte* p = c.buf->data();
  size_t done = 0;
  while (done < c.len) {
    ssize_t w = positional_ ? ::pwrite(fd_, p + done, c.len - done, static_cast<off_t>(c.off + done))
                            : ::write(fd_, p + done, c.len - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, what_);
    }
    done += static_cast<size_t>(w);
  }
  return {};
}

void ChunkWriter::run() {
  for (;;) {
    Chunk c{};
    {
      MutexLock g(mu_);
      while (queue_.empty() && !closing_) changed_.wait(mu_);
      if (queue_.empty()) return;
      c = std::move(queue_.front());
      queue_.pop_front();
    }
    Result<void> w = write_chunk(c);
    const size_t len = c.len;
    c.buf.reset();  // back to the pool outside mu_
    std::deque<Chunk> dropped;
    {
      MutexLock g(mu_);
      held_ -= len;
      if (!w && error_) {
        // The first error stays; what waits is not written (push() refuses more).
        error_ = std::move(w);
        dropped.swap(queue_);
        held_ = 0;
      }
      changed_.notify_all();
    }
  }
}

}  // namespace smbkit::cli
