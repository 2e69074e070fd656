#include "proto/logoff.h"

#include "proto/codec_util.h"

namespace smbkit::proto {

// MS-SMB2 2.2.7: StructureSize, Reserved.
Result<void> encode_logoff_request(const LogoffRequest&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<LogoffRequest> decode_logoff_request(ByteView msg) {
  return decode_empty_body<LogoffRequest>(msg, "LOGOFF request");
}

// MS-SMB2 2.2.8: StructureSize, Reserved.
Result<void> encode_logoff_response(const LogoffResponse&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<LogoffResponse> decode_logoff_response(ByteView msg) {
  return decode_empty_body<LogoffResponse>(msg, "LOGOFF response");
}

}  // namespace smbkit::proto
