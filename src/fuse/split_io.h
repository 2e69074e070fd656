// One large read or write split into chunk-sized async requests that are
// all in flight at once, then waited for (cache=none/directio requests
// larger than rsize/wsize, and the synchronous fallbacks of readahead and
// write-behind).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/result.h"
#include "client/client.h"

namespace smbkit::fuse {

// Calls issue(at, len, done) for the pieces [at, at + len) of `size`
// bytes cut at `chunk`, and waits until every `done` ran. Returns each
// piece's result in order. The completions run on the connection's
// receiver thread; nothing they touch outlives this call.
std::vector<Result<size_t>> run_pieces(
    size_t size, uint32_t chunk,
    const std::function<void(size_t at, size_t len, client::Tree::IoDone done)>& issue);

}  // namespace smbkit::fuse
