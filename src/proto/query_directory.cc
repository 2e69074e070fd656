#include "proto/query_directory.h"

#include "base/utf16.h"
#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.33
Result<void> encode_query_directory_request(const QueryDirectoryRequest& req, ByteWriter& w) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(req.FileName));
  if (name.size() > 0xFFFF) return nt_error(STATUS_OBJECT_NAME_INVALID, "QUERY_DIRECTORY pattern");
  const size_t name_offset = w.pos() + kQueryDirectoryRequestFixedSize;
  w.u16(33);  // StructureSize
  w.u8(req.FileInformationClass);
  w.u8(req.Flags);
  w.u32(req.FileIndex);
  encode_file_id(req.FileId, w);
  w.u16(name.empty() ? 0 : static_cast<uint16_t>(name_offset));
  w.u16(static_cast<uint16_t>(name.size()));
  w.u32(req.OutputBufferLength);
  encode_buffer_or_pad(name, w);  // the Buffer is at least one byte
  return ok_result();
}

// MS-SMB2 2.2.33
Result<QueryDirectoryRequest> decode_query_directory_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r,
             body_reader(msg, 33, kQueryDirectoryRequestFixedSize, "QUERY_DIRECTORY request"));
  QueryDirectoryRequest req;
  req.FileInformationClass = r.u8();
  req.Flags = r.u8();
  req.FileIndex = r.u32();
  req.FileId = decode_file_id(r);
  uint16_t name_offset = r.u16();
  uint16_t name_length = r.u16();
  req.OutputBufferLength = r.u32();
  if (!r.ok()) return protocol_error("QUERY_DIRECTORY request truncated");
  SMBKIT_TRY(ByteView name,
             body_buffer(msg, name_offset, name_length, kQueryDirectoryRequestFixedSize,
                         "QUERY_DIRECTORY request", "FileNameOffset/Length"));
  SMBKIT_TRY(req.FileName, decode_utf16_name(name, "QUERY_DIRECTORY request"));
  return req;
}

static_assert(kQueryDirectoryResponseFixedSize == kOutputBufferResponseFixedSize);

// MS-SMB2 2.2.34: StructureSize, OutputBufferOffset, OutputBufferLength, Buffer.
Result<void> encode_query_directory_response(const QueryDirectoryResponse& resp, ByteWriter& w) {
  return encode_output_buffer_response(resp.OutputBuffer, w,
                                       "QUERY_DIRECTORY OutputBuffer too large");
}

// MS-SMB2 2.2.34
Result<ByteView> query_directory_output(ByteView msg) {
  return decode_output_buffer_response(msg, "QUERY_DIRECTORY response");
}

// MS-SMB2 2.2.34
Result<QueryDirectoryResponse> decode_query_directory_response(ByteView msg) {
  SMBKIT_TRY(ByteView out, query_directory_output(msg));
  QueryDirectoryResponse resp;
  resp.OutputBuffer.assign(out.begin(), out.end());
  return resp;
}

}  // namespace smbkit::proto
