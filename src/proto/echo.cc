#include "proto/echo.h"

#include "proto/codec_util.h"

namespace smbkit::proto {

// MS-SMB2 2.2.28: StructureSize, Reserved.
Result<void> encode_echo_request(const EchoRequest&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<EchoRequest> decode_echo_request(ByteView msg) {
  return decode_empty_body<EchoRequest>(msg, "ECHO request");
}

// MS-SMB2 2.2.29: StructureSize, Reserved.
Result<void> encode_echo_response(const EchoResponse&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<EchoResponse> decode_echo_response(ByteView msg) {
  return decode_empty_body<EchoResponse>(msg, "ECHO response");
}

}  // namespace smbkit::proto
