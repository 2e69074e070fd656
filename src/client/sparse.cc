// Space reservation and holes on an open file: FileAllocationInformation,
// FSCTL_SET_SPARSE, FSCTL_SET_ZERO_DATA and FSCTL_QUERY_ALLOCATED_RANGES
// (what fallocate(2) and SEEK_DATA/SEEK_HOLE on a mount are made of).
#include "base/ntstatus.h"
#include "client/client.h"
#include "proto/fscc_file_info.h"
#include "proto/fsctl_fscc.h"
#include "proto/ioctl.h"

namespace smbkit::client {

using namespace proto;

Result<void> Tree::set_allocation_size(const FileId &id, uint64_t size) {
  FileAllocationInformation a;
  a.AllocationSize = size;
  SMBKIT_TRY(Bytes b, encode_info(a));
  return set_info(id, FileAllocationInformation::kInfoClass, std::move(b), "set allocation size");
}

Result<void> Tree::set_sparse(const FileId &id) {
  Bytes in = encode_set_sparse({});
  SMBKIT_TRY(auto a, fsctl(id, FSCTL_SET_SPARSE, in, 0, "set sparse"));
  (void)a;
  return {};
}

Result<void> Tree::zero_data(const FileId &id, uint64_t offset, uint64_t end) {
  SMBKIT_TRY(Bytes in, encode_zero_data({offset, end}));
  SMBKIT_TRY(auto a, fsctl(id, FSCTL_SET_ZERO_DATA, in, 0, "set zero data"));
  (void)a;
  return {};
}

Result<Tree::AllocatedRanges> Tree::allocated_ranges(const FileId &id, uint64_t offset, uint64_t length,
                                                     uint32_t max_output) {
  const FileAllocatedRangeBuffer asked{offset, length};
  SMBKIT_TRY(Bytes in, encode_allocated_range(asked));
  SMBKIT_TRY(auto a, fsctl(id, FSCTL_QUERY_ALLOCATED_RANGES, in, max_output, "query allocated ranges",
                           {STATUS_BUFFER_OVERFLOW}));
  AllocatedRanges out;
  SMBKIT_TRY(out.ranges, decode_allocated_ranges(a.output, asked));
  out.complete = a.status != STATUS_BUFFER_OVERFLOW;
  // MS-FSCC 2.3.48: an overflow still returns what fits; one with nothing
  // in it could never be paged through.
  if (!out.complete && out.ranges.empty())
    return protocol_error("query allocated ranges: STATUS_BUFFER_OVERFLOW without a range");
  return out;
}

}  // namespace smbkit::client
