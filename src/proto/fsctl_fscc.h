// MS-FSCC 2.3: the input and output buffers of the FSCTLs behind
// fallocate(2) and lseek(2) SEEK_DATA/SEEK_HOLE on a mount:
// FSCTL_SET_SPARSE, FSCTL_SET_ZERO_DATA and FSCTL_QUERY_ALLOCATED_RANGES,
// and the object id FSCTLs' FILE_OBJECTID_BUFFER (carried by SMB2 IOCTL,
// proto/ioctl.h). Decoders check every length and the order of what the
// server lists.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::proto {

// File offsets are signed 64-bit on the wire (LARGE_INTEGER): nothing at or
// past 2^63 is a valid position.
inline constexpr uint64_t kMaxFileOffset = 0x7FFFFFFFFFFFFFFFull;

// MS-FSCC 2.3.64: FILE_SET_SPARSE_BUFFER, the input of FSCTL_SET_SPARSE.
// An empty input also means "set sparse" (2.3.64: the buffer is optional).
struct FileSetSparseBuffer {
  uint8_t SetSparse = 1;  // BOOLEAN
  bool operator==(const FileSetSparseBuffer&) const = default;
};
inline constexpr size_t kFileSetSparseBufferSize = 1;
Bytes encode_set_sparse(const FileSetSparseBuffer& v);
Result<FileSetSparseBuffer> decode_set_sparse(ByteView buf);

// MS-FSCC 2.3.67: FILE_ZERO_DATA_INFORMATION, the input of
// FSCTL_SET_ZERO_DATA: bytes [FileOffset, BeyondFinalZero) read as zeros
// afterwards (deallocated on a sparse file).
struct FileZeroDataInformation {
  uint64_t FileOffset = 0;
  uint64_t BeyondFinalZero = 0;
  bool operator==(const FileZeroDataInformation&) const = default;
};
inline constexpr size_t kFileZeroDataInformationSize = 16;
// Error unless FileOffset <= BeyondFinalZero <= kMaxFileOffset.
Result<Bytes> encode_zero_data(const FileZeroDataInformation& v);
Result<FileZeroDataInformation> decode_zero_data(ByteView buf);

// MS-FSCC 2.3.47 / 2.3.48: FILE_ALLOCATED_RANGE_BUFFER, the input of
// FSCTL_QUERY_ALLOCATED_RANGES (the range asked about) and the elements of
// its output (the allocated ranges inside it).
struct FileAllocatedRangeBuffer {
  uint64_t FileOffset = 0;
  uint64_t Length = 0;
  uint64_t end() const { return FileOffset + Length; }
  bool operator==(const FileAllocatedRangeBuffer&) const = default;
};
inline constexpr size_t kFileAllocatedRangeBufferSize = 16;
// Error unless FileOffset + Length <= kMaxFileOffset.
Result<Bytes> encode_allocated_range(const FileAllocatedRangeBuffer& v);
Result<FileAllocatedRangeBuffer> decode_allocated_range(ByteView buf);
// The reply to a query of `asked` (2.3.48): a whole number of elements,
// each non-empty, inside the file's offsets, in ascending order without
// overlap, and each intersecting `asked`. Anything else is a protocol
// error: a wrong list would give a wrong SEEK_DATA/SEEK_HOLE answer.
Result<std::vector<FileAllocatedRangeBuffer>> decode_allocated_ranges(ByteView buf,
                                                                      const FileAllocatedRangeBuffer& asked);
Bytes encode_allocated_ranges(const std::vector<FileAllocatedRangeBuffer>& v);

// MS-FSCC 2.1.3.1: FILE_OBJECTID_BUFFER Type 1, the output of
// FSCTL_GET_OBJECT_ID and FSCTL_CREATE_OR_GET_OBJECT_ID: four GUIDs.
struct FileObjectIdBuffer {
  std::array<std::byte, 16> ObjectId{};
  std::array<std::byte, 16> BirthVolumeId{};
  std::array<std::byte, 16> BirthObjectId{};
  std::array<std::byte, 16> DomainId{};
  bool operator==(const FileObjectIdBuffer&) const = default;
};
inline constexpr size_t kFileObjectIdBufferSize = 64;
Bytes encode_object_id(const FileObjectIdBuffer& v);
Result<FileObjectIdBuffer> decode_object_id(ByteView buf);

}  // namespace smbkit::proto
