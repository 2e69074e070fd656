#include "proto/tree_connect.h"

#include "base/utf16.h"
#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kRequestStructureSize = 9;
constexpr size_t kRequestFixed = 8;
constexpr size_t kExtensionFixed = 16;  // 2.2.9.1 before PathName
constexpr uint16_t kResponseStructureSize = 16;

}  // namespace

// MS-SMB2 2.2.9: StructureSize, Flags, PathOffset, PathLength, Buffer.
Result<void> encode_tree_connect_request(const TreeConnectRequest& req, ByteWriter& w) {
  if (req.Flags & SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT)
    return nt_error(STATUS_NOT_SUPPORTED, "tree connect: request extension not supported");
  SMBKIT_TRY(Bytes path, utf8_to_utf16le(req.Path));
  size_t path_offset = w.pos() + kRequestFixed;
  if (path.size() > 0xFFFF || path_offset > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "tree connect: path too long");
  w.u16(kRequestStructureSize);
  w.u16(req.Flags);
  w.u16(static_cast<uint16_t>(path_offset));
  w.u16(static_cast<uint16_t>(path.size()));
  encode_buffer_or_pad(path, w);  // StructureSize counts one Buffer byte
  return ok_result();
}

// MS-SMB2 2.2.9.
Result<TreeConnectRequest> decode_tree_connect_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  TreeConnectRequest req;
  uint16_t structure_size = r.u16();
  req.Flags = r.u16();
  uint16_t path_offset = r.u16();
  uint16_t path_length = r.u16();
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kRequestStructureSize, "TREE_CONNECT request"));
  size_t fixed = kRequestFixed;
  if (req.Flags & SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT) {
    fixed += kExtensionFixed;
    if (!range_ok(kHeaderSize + kRequestFixed, kExtensionFixed, msg.size()))
      return protocol_error("TREE_CONNECT request extension truncated");
  }
  if (path_length == 0) return req;
  if (path_length % 2) return protocol_error("TREE_CONNECT request path has odd length");
  SMBKIT_TRY(ByteView utf16,
             body_buffer(msg, path_offset, path_length, fixed, "TREE_CONNECT request", "path"));
  auto path = utf16le_to_utf8(utf16);
  if (!path.ok()) return protocol_error("TREE_CONNECT request path is not valid UTF-16");
  req.Path = std::move(path.value());
  return req;
}

// MS-SMB2 2.2.10: StructureSize, ShareType, Reserved, ShareFlags,
// Capabilities, MaximalAccess.
Result<void> encode_tree_connect_response(const TreeConnectResponse& rsp, ByteWriter& w) {
  w.u16(kResponseStructureSize);
  w.u8(rsp.ShareType);
  w.u8(0);  // Reserved
  w.u32(rsp.ShareFlags);
  w.u32(rsp.Capabilities);
  w.u32(rsp.MaximalAccess);
  return ok_result();
}

// MS-SMB2 2.2.10.
Result<TreeConnectResponse> decode_tree_connect_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  TreeConnectResponse rsp;
  uint16_t structure_size = r.u16();
  rsp.ShareType = r.u8();
  r.skip(1);  // Reserved
  rsp.ShareFlags = r.u32();
  rsp.Capabilities = r.u32();
  rsp.MaximalAccess = r.u32();
  SMBKIT_CHECK(
      check_fixed_part(r, structure_size, kResponseStructureSize, "TREE_CONNECT response"));
  return rsp;
}

}  // namespace smbkit::proto
