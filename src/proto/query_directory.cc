#include "proto/query_directory.h"

#include "base/utf16.h"
#include "proto/constants.h"
#include "proto/create.h"

namespace smbkit::proto {

// MS-SMB2 2.2.33
Result<void> encode_query_directory_request(const QueryDirectoryRequest& req, ByteWriter& w) {
  Bytes name;
  if (!req.FileName.empty()) {
    SMBKIT_TRY(name, utf8_to_utf16le(req.FileName));
  }
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
  if (name.empty())
    w.u8(0);  // the Buffer is at least one byte
  else
    w.bytes(name);
  return ok_result();
}

// MS-SMB2 2.2.33
Result<QueryDirectoryRequest> decode_query_directory_request(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 33, kQueryDirectoryRequestFixedSize, "QUERY_DIRECTORY request"));
  ByteReader r(msg, kHeaderSize + 2);
  QueryDirectoryRequest req;
  req.FileInformationClass = r.u8();
  req.Flags = r.u8();
  req.FileIndex = r.u32();
  req.FileId = decode_file_id(r);
  uint16_t name_offset = r.u16();
  uint16_t name_length = r.u16();
  req.OutputBufferLength = r.u32();
  if (!r.ok()) return protocol_error("QUERY_DIRECTORY request truncated");
  if (name_length) {
    if (name_offset < kHeaderSize + kQueryDirectoryRequestFixedSize ||
        !range_ok(name_offset, name_length, msg.size()))
      return protocol_error("QUERY_DIRECTORY request FileNameOffset/Length out of range");
    SMBKIT_TRY(req.FileName, decode_utf16_name(msg.subspan(name_offset, name_length),
                                               "QUERY_DIRECTORY request"));
  }
  return req;
}

// MS-SMB2 2.2.34
Result<void> encode_query_directory_response(const QueryDirectoryResponse& resp, ByteWriter& w) {
  if (resp.OutputBuffer.size() > 0xFFFFFFFFu)
    return nt_error(STATUS_INVALID_PARAMETER, "QUERY_DIRECTORY OutputBuffer too large");
  const size_t offset = w.pos() + kQueryDirectoryResponseFixedSize;
  w.u16(9);  // StructureSize
  w.u16(resp.OutputBuffer.empty() ? 0 : static_cast<uint16_t>(offset));
  w.u32(static_cast<uint32_t>(resp.OutputBuffer.size()));
  w.bytes(resp.OutputBuffer);
  return ok_result();
}

// MS-SMB2 2.2.34
Result<ByteView> query_directory_output(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 9, kQueryDirectoryResponseFixedSize, "QUERY_DIRECTORY response"));
  ByteReader r(msg, kHeaderSize + 2);
  uint16_t offset = r.u16();
  uint32_t length = r.u32();
  if (!r.ok()) return protocol_error("QUERY_DIRECTORY response truncated");
  if (length == 0) return ByteView{};
  if (offset < kHeaderSize + kQueryDirectoryResponseFixedSize || !range_ok(offset, length, msg.size()))
    return protocol_error("QUERY_DIRECTORY response OutputBufferOffset/Length out of range");
  return msg.subspan(offset, length);
}

// MS-SMB2 2.2.34
Result<QueryDirectoryResponse> decode_query_directory_response(ByteView msg) {
  SMBKIT_TRY(ByteView out, query_directory_output(msg));
  QueryDirectoryResponse resp;
  resp.OutputBuffer.assign(out.begin(), out.end());
  return resp;
}

}  // namespace smbkit::proto
