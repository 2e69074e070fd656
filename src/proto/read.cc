#include "proto/read.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.19
Result<void> encode_read_request(const ReadRequest& req, ByteWriter& w) {
  if (req.ReadChannelInfo.size() > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "READ ReadChannelInfo too long");
  w.u16(49);  // StructureSize
  w.u8(req.Padding);
  w.u8(req.Flags);
  w.u32(req.Length);
  w.u64(req.Offset);
  encode_file_id(req.FileId, w);
  w.u32(req.MinimumCount);
  w.u32(req.Channel);
  w.u32(req.RemainingBytes);
  const size_t info_offset = w.pos() + 4;
  w.u16(req.ReadChannelInfo.empty() ? 0 : static_cast<uint16_t>(info_offset));
  w.u16(static_cast<uint16_t>(req.ReadChannelInfo.size()));
  encode_buffer_or_pad(req.ReadChannelInfo, w);  // "the Buffer field MUST be at least one byte"
  return ok_result();
}

// MS-SMB2 2.2.19
Result<ReadRequest> decode_read_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 49, kReadRequestFixedSize, "READ request"));
  ReadRequest req;
  req.Padding = r.u8();
  req.Flags = r.u8();
  req.Length = r.u32();
  req.Offset = r.u64();
  req.FileId = decode_file_id(r);
  req.MinimumCount = r.u32();
  req.Channel = r.u32();
  req.RemainingBytes = r.u32();
  uint16_t info_offset = r.u16();
  uint16_t info_length = r.u16();
  if (!r.ok()) return protocol_error("READ request truncated");
  SMBKIT_TRY(req.ReadChannelInfo,
             copy_body_buffer(msg, info_offset, info_length, kReadRequestFixedSize, "READ request",
                              "ReadChannelInfoOffset/Length"));
  return req;
}

// MS-SMB2 2.2.20
Result<void> encode_read_response(const ReadResponse& resp, ByteWriter& w) {
  w.u16(17);  // StructureSize
  w.u8(static_cast<uint8_t>(kReadResponseMinDataOffset));
  w.u8(0);  // Reserved
  w.u32(static_cast<uint32_t>(resp.Data.size()));
  w.u32(resp.DataRemaining);
  w.u32(resp.Flags);
  w.bytes(resp.Data);
  return ok_result();
}

namespace {

ReadResponseInfo read_fixed(ByteReader& r) {
  ReadResponseInfo info;
  info.DataOffset = r.u8();
  r.skip(1);  // Reserved
  info.DataLength = r.u32();
  info.DataRemaining = r.u32();
  info.Flags = r.u32();
  return info;
}

}  // namespace

// MS-SMB2 2.2.20
Result<ReadResponseInfo> decode_read_response_fixed(ByteView first_bytes) {
  SMBKIT_TRY(ByteReader r, body_reader(first_bytes, 17, kReadResponseFixedSize, "READ response"));
  ReadResponseInfo info = read_fixed(r);
  if (!r.ok()) return protocol_error("READ response truncated");
  if (info.DataLength && info.DataOffset < kReadResponseMinDataOffset)
    return protocol_error("READ response DataOffset inside the fixed part");
  return info;
}

// MS-SMB2 2.2.20
Result<ReadResponse> decode_read_response(ByteView msg) {
  SMBKIT_TRY(ReadResponseInfo info, decode_read_response_fixed(msg));
  if (!read_data_fits(info, msg.size()))
    return protocol_error("READ response DataOffset/DataLength out of range");
  ReadResponse resp;
  resp.DataOffset = info.DataOffset;
  resp.DataLength = info.DataLength;
  resp.DataRemaining = info.DataRemaining;
  resp.Flags = info.Flags;
  if (info.DataLength) resp.Data = msg.subspan(info.DataOffset, info.DataLength);
  return resp;
}

}  // namespace smbkit::proto
