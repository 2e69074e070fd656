#include "fuse/split_io.h"

#include <condition_variable>
#include <mutex>

namespace smbkit::fuse {

std::vector<Result<size_t>> run_pieces(
    size_t size, uint32_t chunk,
    const std::function<void(size_t at, size_t len, client::Tree::IoDone done)>& issue) {
  size_t pieces = (size + chunk - 1) / chunk;
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = 0;
    std::vector<Result<size_t>> results;
  };
  // Completions may outlive an early return only if we returned before
  // they all ran; we never do (the buffers are the caller's).
  Wait w;
  w.left = pieces;
  w.results.assign(pieces, Result<size_t>(size_t{0}));
  for (size_t i = 0; i < pieces; i++) {
    size_t at = i * chunk;
    issue(at, std::min<size_t>(chunk, size - at), [&w, i](Result<size_t> r) {
      std::lock_guard g(w.mu);
      w.results[i] = std::move(r);
      if (--w.left == 0) w.cv.notify_one();
    });
  }
  std::unique_lock lk(w.mu);
  w.cv.wait(lk, [&] { return w.left == 0; });
  return std::move(w.results);
}

}  // namespace smbkit::fuse
