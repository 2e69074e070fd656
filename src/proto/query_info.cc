#include "proto/query_info.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

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
  encode_buffer_or_pad(req.InputBuffer, w);  // the Buffer is at least one byte
  return ok_result();
}

// MS-SMB2 2.2.37
Result<QueryInfoRequest> decode_query_info_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 41, kQueryInfoRequestFixedSize, "QUERY_INFO request"));
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
  SMBKIT_TRY(req.InputBuffer,
             copy_body_buffer(msg, input_offset, input_length, kQueryInfoRequestFixedSize,
                              "QUERY_INFO request", "InputBufferOffset/Length"));
  return req;
}

static_assert(kQueryInfoResponseFixedSize == kOutputBufferResponseFixedSize);

// MS-SMB2 2.2.38: StructureSize, OutputBufferOffset, OutputBufferLength, Buffer.
Result<void> encode_query_info_response(const QueryInfoResponse& resp, ByteWriter& w) {
  return encode_output_buffer_response(resp.OutputBuffer, w, "QUERY_INFO OutputBuffer too large");
}

// MS-SMB2 2.2.38
Result<ByteView> query_info_output(ByteView msg) {
  return decode_output_buffer_response(msg, "QUERY_INFO response");
}

// MS-SMB2 2.2.38
Result<QueryInfoResponse> decode_query_info_response(ByteView msg) {
  SMBKIT_TRY(ByteView out, query_info_output(msg));
  QueryInfoResponse resp;
  resp.OutputBuffer.assign(out.begin(), out.end());
  return resp;
}

}  // namespace smbkit::proto
