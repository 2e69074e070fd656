#include "fuse/split_io.h"

#include "base/completion.h"

namespace smbkit::fuse {

std::vector<Result<size_t>> run_pieces(
    size_t size, uint32_t chunk, const std::function<void(size_t at, size_t len, client::Tree::IoDone done)>& issue) {
  size_t pieces = (size + chunk - 1) / chunk;
  // Every completion has run when wait() returns, so none outlives `done`
  // (nor the caller's buffers).
  Completions<Result<size_t>> done(pieces);
  for (size_t i = 0; i < pieces; i++) {
    size_t at = i * chunk;
    issue(at, std::min<size_t>(chunk, size - at), done.callback(i));
  }
  return done.wait();
}

}  // namespace smbkit::fuse
