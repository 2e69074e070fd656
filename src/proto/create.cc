#include "proto/create.h"

#include "base/utf16.h"
#include "proto/constants.h"

namespace smbkit::proto {

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

// Appends the contexts at the next 8-byte boundary and patches the
// CreateContextsOffset/Length pair at `fields`.
Result<void> encode_contexts_at(std::span<const CreateContext> contexts, size_t fields,
                                ByteWriter& w) {
  w.pad_to(8);
  const size_t offset = w.pos();
  SMBKIT_CHECK(encode_create_contexts(contexts, w));
  w.patch_u32(fields, static_cast<uint32_t>(offset));
  w.patch_u32(fields + 4, static_cast<uint32_t>(w.pos() - offset));
  return ok_result();
}

}  // namespace

// MS-SMB2 2.2.13
Result<void> encode_create_request(const CreateRequest& req, ByteWriter& w) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(req.Name));
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
    SMBKIT_CHECK(encode_contexts_at(req.CreateContexts, ctx_fields, w));
  } else if (name.empty()) {
    w.u8(0);  // "the Buffer field MUST be at least one byte in length"
  }
  return ok_result();
}

// MS-SMB2 2.2.13
Result<CreateRequest> decode_create_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 57, kCreateRequestFixedSize, "CREATE request"));
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
  SMBKIT_TRY(ByteView name, body_buffer(msg, name_offset, name_length, kCreateRequestFixedSize,
                                        "CREATE request", "NameOffset/NameLength"));
  SMBKIT_TRY(req.Name, decode_utf16_name(name, "CREATE request"));
  SMBKIT_TRY(req.CreateContexts,
             contexts_at(msg, ctx_offset, ctx_length, kHeaderSize + kCreateRequestFixedSize,
                         "CREATE request"));
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
    SMBKIT_CHECK(encode_contexts_at(resp.CreateContexts, ctx_fields, w));
  }
  return ok_result();
}

// MS-SMB2 2.2.14
Result<CreateResponse> decode_create_response(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 89, kCreateResponseFixedSize, "CREATE response"));
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
