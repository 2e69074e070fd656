// MS-SMB2 server-side copy buffers, carried in IOCTL Input/Output:
// SRV_REQUEST_RESUME_KEY response (2.2.32.3), SRV_COPYCHUNK_COPY with its
// SRV_COPYCHUNK ranges (2.2.31.1, 2.2.31.1.1) and SRV_COPYCHUNK_RESPONSE
// (2.2.32.1).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::proto {

// MS-SMB2 2.2.32.3: ResumeKey is 24 opaque bytes.
inline constexpr size_t kResumeKeySize = 24;
// MS-SMB2 2.2.32.3: ResumeKey + ContextLength (Context follows, unused).
inline constexpr size_t kResumeKeyResponseSize = kResumeKeySize + 4;
// MS-SMB2 2.2.31.1: SourceKey + ChunkCount + Reserved, then the chunks.
inline constexpr size_t kCopychunkCopyHeaderSize = kResumeKeySize + 4 + 4;
// MS-SMB2 2.2.31.1.1: SourceOffset, TargetOffset, Length, Reserved.
inline constexpr size_t kCopychunkSize = 8 + 8 + 4 + 4;
// MS-SMB2 2.2.32.1: ChunksWritten, ChunkBytesWritten, TotalBytesWritten.
inline constexpr size_t kCopychunkResponseSize = 4 + 4 + 4;
// Most chunks a SRV_COPYCHUNK_COPY we decode may hold: far above any
// server's ServerSideCopyMaxNumberofChunks (Windows and Samba: 256), so a
// hostile ChunkCount cannot make the decoder allocate without bound.
inline constexpr uint32_t kCopychunkMaxChunksDecoded = 65536;

using CopychunkKey = std::array<std::byte, kResumeKeySize>;

// MS-SMB2 2.2.32.3 SRV_REQUEST_RESUME_KEY Response.
struct SrvRequestResumeKeyResponse {
  CopychunkKey ResumeKey{};
  Bytes Context;  // ContextLength bytes; unused by the protocol
  bool operator==(const SrvRequestResumeKeyResponse&) const = default;
};

// MS-SMB2 2.2.31.1.1 SRV_COPYCHUNK.
struct SrvCopychunk {
  uint64_t SourceOffset = 0;
  uint64_t TargetOffset = 0;
  uint32_t Length = 0;
  bool operator==(const SrvCopychunk&) const = default;
};

// MS-SMB2 2.2.31.1 SRV_COPYCHUNK_COPY.
struct SrvCopychunkCopy {
  CopychunkKey SourceKey{};
  std::vector<SrvCopychunk> Chunks;  // ChunkCount
  bool operator==(const SrvCopychunkCopy&) const = default;
};

// MS-SMB2 2.2.32.1 SRV_COPYCHUNK_RESPONSE. With STATUS_INVALID_PARAMETER
// the three fields are the server's limits instead (3.3.5.15.6.2):
// ServerSideCopyMaxNumberofChunks, ServerSideCopyMaxChunkSize,
// ServerSideCopyMaxDataSize.
struct SrvCopychunkResponse {
  uint32_t ChunksWritten = 0;
  uint32_t ChunkBytesWritten = 0;
  uint32_t TotalBytesWritten = 0;
  bool operator==(const SrvCopychunkResponse&) const = default;
};

// MS-SMB2 2.2.32.3.
Result<Bytes> encode_resume_key_response(const SrvRequestResumeKeyResponse& v);
// MS-SMB2 2.2.32.3: ContextLength must fit in what the output holds.
Result<SrvRequestResumeKeyResponse> decode_resume_key_response(ByteView output);
// MS-SMB2 2.2.31.1.
Result<Bytes> encode_copychunk_copy(const SrvCopychunkCopy& v);
// MS-SMB2 2.2.31.1: ChunkCount chunks must be in the input (at most
// kCopychunkMaxChunksDecoded).
Result<SrvCopychunkCopy> decode_copychunk_copy(ByteView input);
// MS-SMB2 2.2.32.1.
Result<Bytes> encode_copychunk_response(const SrvCopychunkResponse& v);
// MS-SMB2 2.2.32.1: exactly 12 bytes (OutputCount MUST be 12,
// 3.3.5.15.6.1 / 3.3.5.15.6.2).
Result<SrvCopychunkResponse> decode_copychunk_response(ByteView output);

}  // namespace smbkit::proto
