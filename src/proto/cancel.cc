#include "proto/cancel.h"

#include "proto/codec_util.h"

namespace smbkit::proto {

// MS-SMB2 2.2.30: StructureSize, Reserved.
Result<void> encode_cancel_request(const CancelRequest&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<CancelRequest> decode_cancel_request(ByteView msg) {
  return decode_empty_body<CancelRequest>(msg, "CANCEL request");
}

}  // namespace smbkit::proto
