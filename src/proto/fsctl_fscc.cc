#include "proto/fsctl_fscc.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace smbkit::proto {

// MS-FSCC 2.3.64: SetSparse (1 byte); an empty buffer sets the file sparse.
Bytes encode_set_sparse(const FileSetSparseBuffer& v) {
  Bytes b;
  ByteWriter w(b);
  w.u8(v.SetSparse);
  return b;
}
Result<FileSetSparseBuffer> decode_set_sparse(ByteView buf) {
  FileSetSparseBuffer v;
  if (buf.empty()) return v;
  if (buf.size() != kFileSetSparseBufferSize)
    return protocol_error("FILE_SET_SPARSE_BUFFER of " + std::to_string(buf.size()) + " bytes");
  v.SetSparse = static_cast<uint8_t>(buf[0]);
  return v;
}

// MS-FSCC 2.3.67: FileOffset, BeyondFinalZero (signed 64-bit each).
static bool zero_data_ok(const FileZeroDataInformation& v) {
  return v.FileOffset <= v.BeyondFinalZero && v.BeyondFinalZero <= kMaxFileOffset;
}
Result<Bytes> encode_zero_data(const FileZeroDataInformation& v) {
  if (!zero_data_ok(v)) return sys_error(EINVAL, "FILE_ZERO_DATA_INFORMATION: range out of order or too large");
  Bytes b;
  ByteWriter w(b);
  w.u64(v.FileOffset);
  w.u64(v.BeyondFinalZero);
  return b;
}
Result<FileZeroDataInformation> decode_zero_data(ByteView buf) {
  if (buf.size() != kFileZeroDataInformationSize)
    return protocol_error("FILE_ZERO_DATA_INFORMATION of " + std::to_string(buf.size()) + " bytes");
  ByteReader r(buf);
  FileZeroDataInformation v;
  v.FileOffset = r.u64();
  v.BeyondFinalZero = r.u64();
  if (!zero_data_ok(v)) return protocol_error("FILE_ZERO_DATA_INFORMATION: range out of order or too large");
  return v;
}

// MS-FSCC 2.3.48: FileOffset, Length (signed 64-bit each).
static bool range_fits(const FileAllocatedRangeBuffer& v) {
  return v.FileOffset <= kMaxFileOffset && v.Length <= kMaxFileOffset - v.FileOffset;
}
Result<Bytes> encode_allocated_range(const FileAllocatedRangeBuffer& v) {
  if (!range_fits(v)) return sys_error(EINVAL, "FILE_ALLOCATED_RANGE_BUFFER: range past the largest offset");
  Bytes b;
  ByteWriter w(b);
  w.u64(v.FileOffset);
  w.u64(v.Length);
  return b;
}
Result<FileAllocatedRangeBuffer> decode_allocated_range(ByteView buf) {
  if (buf.size() != kFileAllocatedRangeBufferSize)
    return protocol_error("FILE_ALLOCATED_RANGE_BUFFER of " + std::to_string(buf.size()) + " bytes");
  ByteReader r(buf);
  FileAllocatedRangeBuffer v;
  v.FileOffset = r.u64();
  v.Length = r.u64();
  if (!range_fits(v)) return protocol_error("FILE_ALLOCATED_RANGE_BUFFER: range past the largest offset");
  return v;
}

// MS-FSCC 2.3.48: the element count is the output size over the element
// size; every element intersects the queried range.
Result<std::vector<FileAllocatedRangeBuffer>> decode_allocated_ranges(ByteView buf,
                                                                      const FileAllocatedRangeBuffer& asked) {
  if (buf.size() % kFileAllocatedRangeBufferSize != 0)
    return protocol_error("QUERY_ALLOCATED_RANGES output of " + std::to_string(buf.size()) +
                          " bytes is not a whole number of ranges");
  if (!range_fits(asked)) return sys_error(EINVAL, "QUERY_ALLOCATED_RANGES: asked range past the largest offset");
  std::vector<FileAllocatedRangeBuffer> out;
  out.reserve(buf.size() / kFileAllocatedRangeBufferSize);
  uint64_t prev_end = 0;
  for (size_t at = 0; at < buf.size(); at += kFileAllocatedRangeBufferSize) {
    SMBKIT_TRY(auto r, decode_allocated_range(buf.subspan(at, kFileAllocatedRangeBufferSize)));
    if (r.Length == 0) return protocol_error("QUERY_ALLOCATED_RANGES: an empty range");
    if (!out.empty() && r.FileOffset < prev_end)
      return protocol_error("QUERY_ALLOCATED_RANGES: ranges out of order or overlapping");
    if (r.FileOffset >= asked.end() || r.end() <= asked.FileOffset)
      return protocol_error("QUERY_ALLOCATED_RANGES: a range outside the one asked");
    prev_end = r.end();
    out.push_back(r);
  }
  return out;
}

Bytes encode_allocated_ranges(const std::vector<FileAllocatedRangeBuffer>& v) {
  Bytes b;
  ByteWriter w(b);
  for (const auto& r : v) {
    w.u64(r.FileOffset);
    w.u64(r.Length);
  }
  return b;
}

// MS-FSCC 2.1.3.1: ObjectId, BirthVolumeId, BirthObjectId, DomainId.
Bytes encode_object_id(const FileObjectIdBuffer& v) {
  // Copied into a buffer of its final size (appending to a vector here
  // trips GCC 12's -O3 -Wstringop-overflow).
  Bytes b(kFileObjectIdBufferSize);
  size_t off = 0;
  for (const auto* g : {&v.ObjectId, &v.BirthVolumeId, &v.BirthObjectId, &v.DomainId}) {
    std::memcpy(b.data() + off, g->data(), g->size());
    off += g->size();
  }
  return b;
}
Result<FileObjectIdBuffer> decode_object_id(ByteView buf) {
  if (buf.size() != kFileObjectIdBufferSize)
    return protocol_error("FILE_OBJECTID_BUFFER of " + std::to_string(buf.size()) + " bytes");
  FileObjectIdBuffer v;
  size_t off = 0;
  for (auto* g : {&v.ObjectId, &v.BirthVolumeId, &v.BirthObjectId, &v.DomainId}) {
    std::memcpy(g->data(), buf.data() + off, g->size());
    off += g->size();
  }
  return v;
}

}  // namespace smbkit::proto
