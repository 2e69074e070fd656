#include "proto/create.h"

#include "base/utf16.h"
#include "proto/constants.h"

namespace smbkit::proto {

Result<std::string> decode_utf16_name(ByteView utf16, std::string_view what) {
  if (utf16.size() % 2) return protocol_error(std::string(what) + ": odd-length UTF-16 name");
  auto r = utf16le_to_utf8(utf16);
  if (!r) return protocol_error(std::string(what) + ": invalid UTF-16 name");
  return r;
}

Result<void> check_body(ByteView msg, uint16_t expected, size_t fixed, std::string_view what) {
  if (msg.size() < kHeaderSize + fixed) return protocol_error(std::string(what) + ": truncated");
  if (load_le16(msg.data() + kHeaderSize) != expected)
    return protocol_error(std::string(what) + ": wrong StructureSize");
  return ok_result();
}

namespace {

// The contexts region at [offset, offset+length) of msg; `min_offset` is the
// end of the fixed body.
Result<std::vector<CreateContext>> contexts_at(ByteView msg, uint32_t offset, uint32_t length,
                                               size_t min_offset, const char* what) {
  if (length == 0) return std::vector<CreateContext>{};
  if (offset < min_offset || offset % 8 || !range_ok(offset, length, msg.size()))
    return protocol_error(std::string(what) + ": CreateContextsOffset/Length out of range");
  return decode_create_contexts(msg.subspan(offset, length));
}

}  // namespace

// MS-SMB2 2.2.13
Result<void> encode_create_request(const CreateRequest& req, ByteWriter& w) {
  Bytes name;
  if (!req.Name.empty()) {
    SMBKIT_TRY(name, utf8_to_utf16le(req.Name));
  }
  if (name.size() > 0xFFFF) return nt_error(STATUS_OBJECT_NAME_INVALID, "CREATE name too long");
  w.u16(57);  // StructureSize
  w.u8(req.SecurityFlags);
  w.u8(req.RequestedOplockLevel);
  w.u32(req.ImpersonationLevel);
  w.u64(req.SmbCreateFlags);
  w.u64(0);  // Reserved
  w.u32(req.DesiredAccess);
  w.u32(req.FileAttributes);
  w.u32(req.ShareAccess);
  w.u32(req.CreateDisposition);
  w.u32(req.CreateOptions);
  const size_t name_fields = w.pos();
  w.u16(0);  // NameOffset, patched
  w.u16(static_cast<uint16_t>(name.size()));
  const size_t ctx_fields = w.pos();
  w.u32(0);  // CreateContextsOffset, patched
  w.u32(0);  // CreateContextsLength, patched
  const size_t name_offset = w.pos();
  w.patch_u16(name_fields, static_cast<uint16_t>(name_offset));
  w.bytes(name);
  if (!req.CreateContexts.empty()) {
    w.pad_to(8);
    const size_t ctx_offset = w.pos();
    SMBKIT_CHECK(encode_create_contexts(req.CreateContexts, w));
    w.patch_u32(ctx_fields, static_cast<uint32_t>(ctx_offset));
    w.patch_u32(ctx_fields + 4, static_cast<uint32_t>(w.pos() - ctx_offset));
  } else if (name.empty()) {
    w.u8(0);  // "the Buffer field MUST be at least one byte in length"
  }
  return ok_result();
}

// MS-SMB2 2.2.13
Result<CreateRequest> decode_create_request(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 57, kCreateRequestFixedSize, "CREATE request"));
  ByteReader r(msg, kHeaderSize + 2);
  CreateRequest req;
  req.SecurityFlags = r.u8();
  req.RequestedOplockLevel = r.u8();
  req.ImpersonationLevel = r.u32();
  req.SmbCreateFlags = r.u64();
  r.skip(8);  // Reserved
  req.DesiredAccess = r.u32();
  req.FileAttributes = r.u32();
  req.ShareAccess = r.u32();
  req.CreateDisposition = r.u32();
  req.CreateOptions = r.u32();
  uint16_t name_offset = r.u16();
  uint16_t name_length = r.u16();
  uint32_t ctx_offset = r.u32();
  uint32_t ctx_length = r.u32();
  if (!r.ok()) return protocol_error("CREATE request truncated");
  const size_t body_end = kHeaderSize + kCreateRequestFixedSize;
  if (name_length) {
    if (name_offset < body_end || !range_ok(name_offset, name_length, msg.size()))
      return protocol_error("CREATE request NameOffset/NameLength out of range");
    SMBKIT_TRY(req.Name, decode_utf16_name(msg.subspan(name_offset, name_length), "CREATE request"));
  }
  SMBKIT_TRY(req.CreateContexts, contexts_at(msg, ctx_offset, ctx_length, body_end, "CREATE request"));
  return req;
}

// MS-SMB2 2.2.14
Result<void> encode_create_response(const CreateResponse& resp, ByteWriter& w) {
  w.u16(89);  // StructureSize
  w.u8(resp.OplockLevel);
  w.u8(resp.Flags);
  w.u32(resp.CreateAction);
  w.u64(resp.CreationTime);
  w.u64(resp.LastAccessTime);
  w.u64(resp.LastWriteTime);
  w.u64(resp.ChangeTime);
  w.u64(resp.AllocationSize);
  w.u64(resp.EndofFile);
  w.u32(resp.FileAttributes);
  w.u32(0);  // Reserved2
  encode_file_id(resp.FileId, w);
  const size_t ctx_fields = w.pos();
  w.u32(0);  // CreateContextsOffset, patched
  w.u32(0);  // CreateContextsLength, patched
  if (!resp.CreateContexts.empty()) {
    w.pad_to(8);
    const size_t ctx_offset = w.pos();
    SMBKIT_CHECK(encode_create_contexts(resp.CreateContexts, w));
    w.patch_u32(ctx_fields, static_cast<uint32_t>(ctx_offset));
    w.patch_u32(ctx_fields + 4, static_cast<uint32_t>(w.pos() - ctx_offset));
  }
  return ok_result();
}

// MS-SMB2 2.2.14
Result<CreateResponse> decode_create_response(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 89, kCreateResponseFixedSize, "CREATE response"));
  ByteReader r(msg, kHeaderSize + 2);
  CreateResponse resp;
  resp.OplockLevel = r.u8();
  resp.Flags = r.u8();
  resp.CreateAction = r.u32();
  resp.CreationTime = r.u64();
  resp.LastAccessTime = r.u64();
  resp.LastWriteTime = r.u64();
  resp.ChangeTime = r.u64();
  resp.AllocationSize = r.u64();
  resp.EndofFile = r.u64();
  resp.FileAttributes = r.u32();
  r.skip(4);  // Reserved2
  resp.FileId = decode_file_id(r);
  uint32_t ctx_offset = r.u32();
  uint32_t ctx_length = r.u32();
  if (!r.ok()) return protocol_error("CREATE response truncated");
  SMBKIT_TRY(resp.CreateContexts, contexts_at(msg, ctx_offset, ctx_length,
                                              kHeaderSize + kCreateResponseFixedSize,
                                              "CREATE response"));
  return resp;
}

}  // namespace smbkit::proto
