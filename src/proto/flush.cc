#include "proto/flush.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.17
Result<void> encode_flush_request(const FlushRequest& req, ByteWriter& w) {
  w.u16(24);  // StructureSize
  w.u16(0);   // Reserved1
  w.u32(0);   // Reserved2
  encode_file_id(req.FileId, w);
  return ok_result();
}

// MS-SMB2 2.2.17
Result<FlushRequest> decode_flush_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 24, 24, "FLUSH request"));
  r.skip(6);  // Reserved1, Reserved2
  FlushRequest req;
  req.FileId = decode_file_id(r);
  if (!r.ok()) return protocol_error("FLUSH request truncated");
  return req;
}

// MS-SMB2 2.2.18
Result<void> encode_flush_response(const FlushResponse&, ByteWriter& w) {
  return encode_empty_body(w);  // StructureSize, Reserved
}

// MS-SMB2 2.2.18
Result<FlushResponse> decode_flush_response(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 4, 4, "FLUSH response"));
  return FlushResponse{};
}

}  // namespace smbkit::proto
