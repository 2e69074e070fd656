#include "proto/write.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.21
Result<void> encode_write_request(const WriteRequest& req, ByteWriter& w) {
  if (req.WriteChannelInfo.size() > 0x1000)
    return nt_error(STATUS_INVALID_PARAMETER, "WRITE WriteChannelInfo too long");
  const size_t start = w.pos();
  const size_t buffer = start + kWriteRequestFixedSize;
  const size_t data_offset = buffer + req.WriteChannelInfo.size();
  if (data_offset > 0xFFFF) return nt_error(STATUS_INVALID_PARAMETER, "WRITE DataOffset");
  w.u16(49);  // StructureSize
  w.u16(static_cast<uint16_t>(data_offset));
  w.u32(req.Length);
  w.u64(req.Offset);
  encode_file_id(req.FileId, w);
  w.u32(req.Channel);
  w.u32(req.RemainingBytes);
  w.u16(req.WriteChannelInfo.empty() ? 0 : static_cast<uint16_t>(buffer));
  w.u16(static_cast<uint16_t>(req.WriteChannelInfo.size()));
  w.u32(req.Flags);
  w.bytes(req.WriteChannelInfo);
  if (req.Length == 0 && req.WriteChannelInfo.empty()) w.u8(0);
  return ok_result();
}

// MS-SMB2 2.2.21
Result<WriteRequest> decode_write_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 49, kWriteRequestFixedSize, "WRITE request"));
  WriteRequest req;
  req.DataOffset = r.u16();
  req.Length = r.u32();
  req.Offset = r.u64();
  req.FileId = decode_file_id(r);
  req.Channel = r.u32();
  req.RemainingBytes = r.u32();
  uint16_t info_offset = r.u16();
  uint16_t info_length = r.u16();
  req.Flags = r.u32();
  if (!r.ok()) return protocol_error("WRITE request truncated");
  SMBKIT_TRY(req.Data, body_buffer(msg, req.DataOffset, req.Length, kWriteRequestFixedSize,
                                   "WRITE request", "DataOffset/Length"));
  SMBKIT_TRY(req.WriteChannelInfo,
             copy_body_buffer(msg, info_offset, info_length, kWriteRequestFixedSize,
                              "WRITE request", "WriteChannelInfoOffset/Length"));
  return req;
}

// MS-SMB2 2.2.22
Result<void> encode_write_response(const WriteResponse& resp, ByteWriter& w) {
  w.u16(17);  // StructureSize
  w.u16(0);   // Reserved
  w.u32(resp.Count);
  w.u32(resp.Remaining);
  w.u16(0);  // WriteChannelInfoOffset
  w.u16(0);  // WriteChannelInfoLength
  return ok_result();
}

// MS-SMB2 2.2.22
Result<WriteResponse> decode_write_response(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 17, kWriteResponseFixedSize, "WRITE response"));
  r.skip(2);  // Reserved
  WriteResponse resp;
  resp.Count = r.u32();
  resp.Remaining = r.u32();
  if (!r.ok()) return protocol_error("WRITE response truncated");
  return resp;
}

}  // namespace smbkit::proto
