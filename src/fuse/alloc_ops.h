// fallocate(2) and lseek(2) SEEK_DATA/SEEK_HOLE on the mount (alloc_ops.cc),
// and the walk through a file's allocated ranges that answers a seek.
// Private to src/fuse.
#pragma once

#include <cstdint>
#include <functional>

#include "base/result.h"
#include "client/client.h"

namespace smbkit::fuse {

// One FSCTL_QUERY_ALLOCATED_RANGES answer holds at most this many bytes
// (4,096 ranges; the smallest MaxTransactSize a server may offer is 64 KiB),
// and a seek asks at most kSeekPages times before it stops looking.
inline constexpr uint32_t kRangesPage = 64 * 1024;
inline constexpr int kSeekPages = 64;

// Where SEEK_DATA (data) or SEEK_HOLE (!data) from `offset` lands in a file
// of `size` bytes whose allocated ranges `query(from, length)` pages
// through. ENXIO at or past the end, and for SEEK_DATA with no data after
// offset. The end of the file is a hole. A walk that reaches kSeekPages
// answers SEEK_HOLE with the end of the file: counting a hole as data is
// allowed (lseek(2)), the other way round is not.
using RangeQuery = std::function<Result<client::Tree::AllocatedRanges>(uint64_t from, uint64_t length)>;
Result<uint64_t> seek_in_ranges(uint64_t offset, uint64_t size, bool data, const RangeQuery &query);

}  // namespace smbkit::fuse
