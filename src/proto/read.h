// MS-SMB2 2.2.19 / 2.2.20: SMB2 READ request and response.
//
// The response decoders are zero-copy: ReadResponse::Data points into the
// message buffer passed to decode_read_response and is valid only as long as
// that buffer is. decode_read_response_fixed reads just the header and the
// 16-byte fixed part, so the transport can learn where the payload is and
// receive it straight into the caller's buffer.
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.19: Flags.
inline constexpr uint8_t SMB2_READFLAG_READ_UNBUFFERED = 0x01;
inline constexpr uint8_t SMB2_READFLAG_REQUEST_COMPRESSED = 0x02;
// MS-SMB2 2.2.20: Flags (3.1.1; Reserved2 before).
inline constexpr uint32_t SMB2_READFLAG_RESPONSE_NONE = 0x00000000;
inline constexpr uint32_t SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM = 0x00000001;

// MS-SMB2 2.2.19 / 2.2.21: Channel.
inline constexpr uint32_t SMB2_CHANNEL_NONE = 0x00000000;
inline constexpr uint32_t SMB2_CHANNEL_RDMA_V1 = 0x00000001;
inline constexpr uint32_t SMB2_CHANNEL_RDMA_V1_INVALIDATE = 0x00000002;
inline constexpr uint32_t SMB2_CHANNEL_RDMA_TRANSFORM = 0x00000003;

// Body sizes without the variable Buffer.
inline constexpr size_t kReadRequestFixedSize = 48;   // StructureSize 49
inline constexpr size_t kReadResponseFixedSize = 16;  // StructureSize 17
// Where the fixed part of a READ response ends and where servers put Data.
inline constexpr size_t kReadResponseMinDataOffset = 64 + kReadResponseFixedSize;  // 0x50

// MS-SMB2 2.2.19: SMB2 READ Request.
struct ReadRequest {
  uint8_t Padding = 0x50;  // requested DataOffset of the response
  uint8_t Flags = 0;
  uint32_t Length = 0;
  uint64_t Offset = 0;
  proto::FileId FileId;
  uint32_t MinimumCount = 0;
  uint32_t Channel = SMB2_CHANNEL_NONE;
  uint32_t RemainingBytes = 0;
  Bytes ReadChannelInfo;  // RDMA descriptors; empty for TCP
};

// MS-SMB2 2.2.20: the fixed part of an SMB2 READ Response.
struct ReadResponseInfo {
  uint8_t DataOffset = 0;  // from the header start; 0 or >= 0x50
  uint32_t DataLength = 0;
  uint32_t DataRemaining = 0;
  uint32_t Flags = 0;
};

// MS-SMB2 2.2.20: SMB2 READ Response. Data points into the decoded message.
struct ReadResponse {
  uint8_t DataOffset = 0;
  uint32_t DataLength = 0;
  uint32_t DataRemaining = 0;
  uint32_t Flags = 0;
  ByteView Data;
};

// MS-SMB2 2.2.19: ReadChannelInfo (if any) at 0x70; otherwise the one Buffer
// byte the spec requires.
Result<void> encode_read_request(const ReadRequest& req, ByteWriter& w);
Result<ReadRequest> decode_read_request(ByteView msg);

// MS-SMB2 2.2.20: writes DataOffset 0x50, the lengths and Flags from `resp`
// (DataLength is resp.Data.size()), then Data.
Result<void> encode_read_response(const ReadResponse& resp, ByteWriter& w);
// MS-SMB2 2.2.20: checks StructureSize and that [DataOffset, +DataLength)
// lies inside msg and after the fixed part. Data views msg.
Result<ReadResponse> decode_read_response(ByteView msg);
// MS-SMB2 2.2.20: from the first 80 bytes (header + fixed part) of a READ
// response. Checks StructureSize and, when DataLength > 0, DataOffset >= 0x50;
// the caller must still check DataOffset + DataLength against the message
// length it got from the transport (read_data_fits below).
Result<ReadResponseInfo> decode_read_response_fixed(ByteView first_bytes);
// True when the payload described by `info` fits in a message of msg_size.
constexpr bool read_data_fits(const ReadResponseInfo& info, uint64_t msg_size) {
  return info.DataLength == 0 || range_ok(info.DataOffset, info.DataLength, msg_size);
}

}  // namespace smbkit::proto
