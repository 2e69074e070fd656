#include "proto/query_info.h"

#include "proto/constants.h"
#include "proto/create.h"

namespace smbkit::proto {

// MS-SMB2 2.2.37
Result<void> encode_query_info_request(const QueryInfoRequest& req, ByteWriter& w) {
  if (req.InputBuffer.size() > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "QUERY_INFO InputBuffer too large");
  const size_t input_offset = w.pos() + kQueryInfoRequestFixedSize;
  w.u16(41);  // StructureSize
  w.u8(req.InfoType);
  w.u8(req.FileInfoClass);
  w.u32(req.OutputBufferLength);
  w.u16(req.InputBuffer.empty() ? 0 : static_cast<uint16_t>(input_offset));
  w.u16(0);  // Reserved
  w.u32(static_cast<uint32_t>(req.InputBuffer.size()));
  w.u32(req.AdditionalInformation);
  w.u32(req.Flags);
  encode_file_id(req.FileId, w);
  if (req.InputBuffer.empty())
    w.u8(0);  // the Buffer is at least one byte
  else
    w.bytes(req.InputBuffer);
  return ok_result();
}

// MS-SMB2 2.2.37
Result<QueryInfoRequest> decode_query_info_request(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 41, kQueryInfoRequestFixedSize, "QUERY_INFO request"));
  ByteReader r(msg, kHeaderSize + 2);
  QueryInfoRequest req;
  req.InfoType = r.u8();
  req.FileInfoClass = r.u8();
  req.OutputBufferLength = r.u32();
  uint16_t input_offset = r.u16();
  r.skip(2);  // Reserved
  uint32_t input_length = r.u32();
  req.AdditionalInformation = r.u32();
  req.Flags = r.u32();
  req.FileId = decode_file_id(r);
  if (!r.ok()) return protocol_error("QUERY_INFO request truncated");
  if (input_length) {
    if (input_offset < kHeaderSize + kQueryInfoRequestFixedSize ||
        !range_ok(input_offset, input_length, msg.size()))
      return protocol_error("QUERY_INFO request InputBufferOffset/Length out of range");
    auto in = msg.subspan(input_offset, input_length);
    req.InputBuffer.assign(in.begin(), in.end());
  }
  return req;
}

// MS-SMB2 2.2.38
Result<void> encode_query_info_response(const QueryInfoResponse& resp, ByteWriter& w) {
  if (resp.OutputBuffer.size() > 0xFFFFFFFFu)
    return nt_error(STATUS_INVALID_PARAMETER, "QUERY_INFO OutputBuffer too large");
  const size_t offset = w.pos() + kQueryInfoResponseFixedSize;
  w.u16(9);  // StructureSize
  w.u16(resp.OutputBuffer.empty() ? 0 : static_cast<uint16_t>(offset));
  w.u32(static_cast<uint32_t>(resp.OutputBuffer.size()));
  w.bytes(resp.OutputBuffer);
  return ok_result();
}

// MS-SMB2 2.2.38
Result<ByteView> query_info_output(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 9, kQueryInfoResponseFixedSize, "QUERY_INFO response"));
  ByteReader r(msg, kHeaderSize + 2);
  uint16_t offset = r.u16();
  uint32_t length = r.u32();
  if (!r.ok()) return protocol_error("QUERY_INFO response truncated");
  if (length == 0) return ByteView{};
  if (offset < kHeaderSize + kQueryInfoResponseFixedSize || !range_ok(offset, length, msg.size()))
    return protocol_error("QUERY_INFO response OutputBufferOffset/Length out of range");
  return msg.subspan(offset, length);
}

// MS-SMB2 2.2.38
Result<QueryInfoResponse> decode_query_info_response(ByteView msg) {
  SMBKIT_TRY(ByteView out, query_info_output(msg));
  QueryInfoResponse resp;
  resp.OutputBuffer.assign(out.begin(), out.end());
  return resp;
}

}  // namespace smbkit::proto
