// MS-SMB2 2.2.21 / 2.2.22: SMB2 WRITE request and response.
//
// The request encoder writes only the 48-byte fixed part (DataOffset 0x70,
// Length from the struct): the caller appends or gathers the payload right
// after it, so large writes are never copied into the message buffer. The
// request decoder returns Data as a view into the message.
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/read.h"  // SMB2_CHANNEL_*
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.21: Flags.
inline constexpr uint32_t SMB2_WRITEFLAG_WRITE_THROUGH = 0x00000001;
inline constexpr uint32_t SMB2_WRITEFLAG_WRITE_UNBUFFERED = 0x00000002;

inline constexpr size_t kWriteRequestFixedSize = 48;   // StructureSize 49
inline constexpr size_t kWriteResponseFixedSize = 16;  // StructureSize 17
// DataOffset of a request without WriteChannelInfo: header + fixed part.
inline constexpr uint16_t kWriteRequestDataOffset = 64 + kWriteRequestFixedSize;  // 0x70

// MS-SMB2 2.2.21: SMB2 WRITE Request.
struct WriteRequest {
  uint16_t DataOffset = kWriteRequestDataOffset;  // set by the encoder/decoder
  uint32_t Length = 0;  // payload bytes the caller appends after the fixed part
  uint64_t Offset = 0;
  proto::FileId FileId;
  uint32_t Channel = SMB2_CHANNEL_NONE;
  uint32_t RemainingBytes = 0;
  Bytes WriteChannelInfo;  // RDMA descriptors; empty for TCP
  uint32_t Flags = 0;
  // Decoder only: the payload, a view into the decoded message.
  ByteView Data;
};

// MS-SMB2 2.2.22: SMB2 WRITE Response.
struct WriteResponse {
  uint32_t Count = 0;
  uint32_t Remaining = 0;  // reserved, 0
};

// MS-SMB2 2.2.21: appends the fixed part only. With WriteChannelInfo it is
// placed at 0x70 and DataOffset follows it. When Length is 0 (and no channel
// info) one zero Buffer byte is written, because the spec wants the Buffer
// to be at least one byte; otherwise the caller's payload is the Buffer.
Result<void> encode_write_request(const WriteRequest& req, ByteWriter& w);
// MS-SMB2 2.2.21: checks StructureSize and that [DataOffset, +Length) and
// the channel info lie inside msg after the fixed part.
Result<WriteRequest> decode_write_request(ByteView msg);
// MS-SMB2 2.2.22
Result<void> encode_write_response(const WriteResponse& resp, ByteWriter& w);
Result<WriteResponse> decode_write_response(ByteView msg);

}  // namespace smbkit::proto
