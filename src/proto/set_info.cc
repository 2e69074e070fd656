#include "proto/set_info.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.39
Result<void> encode_set_info_request(const SetInfoRequest& req, ByteWriter& w) {
  if (req.Buffer.size() > 0xFFFFFFFFu)
    return nt_error(STATUS_INVALID_PARAMETER, "SET_INFO Buffer too large");
  const size_t offset = w.pos() + kSetInfoRequestFixedSize;
  w.u16(33);  // StructureSize
  w.u8(req.InfoType);
  w.u8(req.FileInfoClass);
  w.u32(static_cast<uint32_t>(req.Buffer.size()));  // BufferLength
  w.u16(static_cast<uint16_t>(offset));             // BufferOffset
  w.u16(0);                                         // Reserved
  w.u32(req.AdditionalInformation);
  encode_file_id(req.FileId, w);
  encode_buffer_or_pad(req.Buffer, w);
  return ok_result();
}

// MS-SMB2 2.2.39
Result<SetInfoRequest> decode_set_info_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 33, kSetInfoRequestFixedSize, "SET_INFO request"));
  SetInfoRequest req;
  req.InfoType = r.u8();
  req.FileInfoClass = r.u8();
  uint32_t length = r.u32();
  uint16_t offset = r.u16();
  r.skip(2);  // Reserved
  req.AdditionalInformation = r.u32();
  req.FileId = decode_file_id(r);
  if (!r.ok()) return protocol_error("SET_INFO request truncated");
  SMBKIT_TRY(req.Buffer, copy_body_buffer(msg, offset, length, kSetInfoRequestFixedSize,
                                          "SET_INFO request", "BufferOffset/BufferLength"));
  return req;
}

// MS-SMB2 2.2.40
Result<void> encode_set_info_response(const SetInfoResponse&, ByteWriter& w) {
  w.u16(2);  // StructureSize
  return ok_result();
}

// MS-SMB2 2.2.40
Result<SetInfoResponse> decode_set_info_response(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 2, 2, "SET_INFO response"));
  return SetInfoResponse{};
}

}  // namespace smbkit::proto
