#include "proto/set_info.h"

#include "proto/constants.h"
#include "proto/create.h"

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
  if (req.Buffer.empty())
    w.u8(0);
  else
    w.bytes(req.Buffer);
  return ok_result();
}

// MS-SMB2 2.2.39
Result<SetInfoRequest> decode_set_info_request(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 33, kSetInfoRequestFixedSize, "SET_INFO request"));
  ByteReader r(msg, kHeaderSize + 2);
  SetInfoRequest req;
  req.InfoType = r.u8();
  req.FileInfoClass = r.u8();
  uint32_t length = r.u32();
  uint16_t offset = r.u16();
  r.skip(2);  // Reserved
  req.AdditionalInformation = r.u32();
  req.FileId = decode_file_id(r);
  if (!r.ok()) return protocol_error("SET_INFO request truncated");
  if (length) {
    if (offset < kHeaderSize + kSetInfoRequestFixedSize || !range_ok(offset, length, msg.size()))
      return protocol_error("SET_INFO request BufferOffset/BufferLength out of range");
    auto b = msg.subspan(offset, length);
    req.Buffer.assign(b.begin(), b.end());
  }
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
