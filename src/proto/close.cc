#include "proto/close.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.15
Result<void> encode_close_request(const CloseRequest& req, ByteWriter& w) {
  w.u16(24);  // StructureSize
  w.u16(req.Flags);
  w.u32(0);  // Reserved
  encode_file_id(req.FileId, w);
  return ok_result();
}

// MS-SMB2 2.2.15
Result<CloseRequest> decode_close_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 24, 24, "CLOSE request"));
  CloseRequest req;
  req.Flags = r.u16();
  r.skip(4);  // Reserved
  req.FileId = decode_file_id(r);
  if (!r.ok()) return protocol_error("CLOSE request truncated");
  return req;
}

// MS-SMB2 2.2.16
Result<void> encode_close_response(const CloseResponse& resp, ByteWriter& w) {
  w.u16(60);  // StructureSize
  w.u16(resp.Flags);
  w.u32(0);  // Reserved
  w.u64(resp.CreationTime);
  w.u64(resp.LastAccessTime);
  w.u64(resp.LastWriteTime);
  w.u64(resp.ChangeTime);
  w.u64(resp.AllocationSize);
  w.u64(resp.EndofFile);
  w.u32(resp.FileAttributes);
  return ok_result();
}

// MS-SMB2 2.2.16
Result<CloseResponse> decode_close_response(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 60, 60, "CLOSE response"));
  CloseResponse resp;
  resp.Flags = r.u16();
  r.skip(4);  // Reserved
  resp.CreationTime = r.u64();
  resp.LastAccessTime = r.u64();
  resp.LastWriteTime = r.u64();
  resp.ChangeTime = r.u64();
  resp.AllocationSize = r.u64();
  resp.EndofFile = r.u64();
  resp.FileAttributes = r.u32();
  if (!r.ok()) return protocol_error("CLOSE response truncated");
  return resp;
}

}  // namespace smbkit::proto
