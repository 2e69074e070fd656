#include "proto/error_response.h"

#include "base/utf16.h"
#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kStructureSize = 9;
constexpr size_t kFixed = 8;              // body bytes before ErrorData
constexpr size_t kContextHeaderSize = 8;  // ErrorDataLength, ErrorId
constexpr size_t kSymlinkFixed = 28;      // 2.2.2.2.1 before PathBuffer

// MS-SMB2 2.2.2.1: contexts are 8-byte aligned; ErrorData itself starts
// 8-aligned (header offset 72), so alignment is relative to it.
Result<void> encode_contexts(const std::vector<ErrorContext>& list, ByteWriter& w) {
  size_t start = w.pos();
  for (const auto& c : list) {
    while ((w.pos() - start) % 8) w.u8(0);
    if (c.ErrorContextData.size() > 0xFFFFFFFFu)
      return nt_error(STATUS_INVALID_PARAMETER, "error context too large");
    w.u32(static_cast<uint32_t>(c.ErrorContextData.size()));
    w.u32(c.ErrorId);
    w.bytes(c.ErrorContextData);
  }
  return ok_result();
}

Result<std::vector<ErrorContext>> decode_contexts(ByteView data, uint8_t count) {
  std::vector<ErrorContext> list;
  // ErrorDataLength, ErrorId, ErrorContextData.
  auto read_context = [&](ByteReader& r) {
    uint32_t len = r.u32();
    ErrorContext c;
    c.ErrorId = r.u32();
    auto d = r.bytes(len);
    c.ErrorContextData.assign(d.begin(), d.end());
    list.push_back(std::move(c));
    return len;
  };
  SMBKIT_CHECK(walk_aligned_list(data, 0, count, kContextHeaderSize, "ERROR response context",
                                 "ByteCount", read_context));
  return list;
}

}  // namespace

// MS-SMB2 2.2.2: StructureSize, ErrorContextCount, Reserved, ByteCount,
// ErrorData.
Result<void> encode_error_response(const ErrorResponse& rsp, ByteWriter& w) {
  if (rsp.ErrorContexts.size() > 0xFF)
    return nt_error(STATUS_INVALID_PARAMETER, "too many error contexts");
  w.u16(kStructureSize);
  w.u8(static_cast<uint8_t>(rsp.ErrorContexts.size()));
  w.u8(0);  // Reserved
  size_t count_at = w.pos();
  w.u32(0);  // ByteCount, patched below
  size_t start = w.pos();
  if (!rsp.ErrorContexts.empty()) {
    SMBKIT_CHECK(encode_contexts(rsp.ErrorContexts, w));
  } else {
    w.bytes(rsp.ErrorData);
  }
  size_t n = w.pos() - start;
  if (n > 0xFFFFFFFFu) return nt_error(STATUS_INVALID_PARAMETER, "error data too large");
  w.patch_u32(count_at, static_cast<uint32_t>(n));
  if (n == 0) w.u8(0);  // "MUST supply an ErrorData field that is one byte"
  return ok_result();
}

// MS-SMB2 2.2.2. A missing pad byte when ByteCount is 0 is tolerated.
Result<ErrorResponse> decode_error_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  ErrorResponse rsp;
  uint16_t structure_size = r.u16();
  uint8_t context_count = r.u8();
  r.skip(1);  // Reserved
  uint32_t byte_count = r.u32();
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kStructureSize, "ERROR response"));
  if (!range_ok(kHeaderSize + kFixed, byte_count, msg.size()))
    return protocol_error("ERROR response ByteCount overruns the message");
  auto data = msg.subspan(kHeaderSize + kFixed, byte_count);
  rsp.ErrorData.assign(data.begin(), data.end());
  if (context_count) {
    SMBKIT_TRY(rsp.ErrorContexts, decode_contexts(data, context_count));
  }
  return rsp;
}

// MS-SMB2 2.2.2.2.1: SymLinkLength, SymLinkErrorTag, ReparseTag,
// ReparseDataLength, UnparsedPathLength, SubstituteNameOffset/Length,
// PrintNameOffset/Length, Flags, PathBuffer.
Result<Bytes> encode_symbolic_link_error_response(const SymbolicLinkErrorResponse& s) {
  SMBKIT_TRY(Bytes sub, utf8_to_utf16le(s.SubstituteName));
  SMBKIT_TRY(Bytes print, utf8_to_utf16le(s.PrintName));
  size_t path_len = sub.size() + print.size();
  if (sub.size() > 0xFFFF || print.size() > 0xFFFF || path_len + 12 > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "symbolic link error response: names too long");
  Bytes out;
  ByteWriter w(out);
  w.u32(static_cast<uint32_t>(kSymlinkFixed - 4 + path_len));  // excludes itself
  w.u32(SymbolicLinkErrorResponse::SYMLINK_ERROR_TAG);
  w.u32(SymbolicLinkErrorResponse::IO_REPARSE_TAG_SYMLINK);
  w.u16(static_cast<uint16_t>(12 + path_len));  // ReparseDataLength: from SubstituteNameOffset on
  w.u16(s.UnparsedPathLength);
  w.u16(0);  // SubstituteNameOffset (relative to PathBuffer)
  w.u16(static_cast<uint16_t>(sub.size()));
  w.u16(static_cast<uint16_t>(sub.size()));  // PrintNameOffset
  w.u16(static_cast<uint16_t>(print.size()));
  w.u32(s.Flags);
  w.bytes(sub);
  w.bytes(print);
  return out;
}

// MS-SMB2 2.2.2.2.1. Name offsets are relative to PathBuffer and bounded by
// SymLinkLength.
Result<SymbolicLinkErrorResponse> decode_symbolic_link_error_response(ByteView data) {
  ByteReader r(data);
  SymbolicLinkErrorResponse s;
  uint32_t symlink_length = r.u32();
  uint32_t tag = r.u32();
  uint32_t reparse_tag = r.u32();
  r.skip(2);  // ReparseDataLength
  s.UnparsedPathLength = r.u16();
  uint16_t sub_offset = r.u16();
  uint16_t sub_length = r.u16();
  uint16_t print_offset = r.u16();
  uint16_t print_length = r.u16();
  s.Flags = r.u32();
  if (!r.ok()) return protocol_error("symbolic link error response truncated");
  if (tag != SymbolicLinkErrorResponse::SYMLINK_ERROR_TAG)
    return protocol_error("symbolic link error response: bad SymLinkErrorTag");
  if (reparse_tag != SymbolicLinkErrorResponse::IO_REPARSE_TAG_SYMLINK)
    return protocol_error("symbolic link error response: bad ReparseTag");
  if (symlink_length < kSymlinkFixed - 4 || !range_ok(4, symlink_length, data.size()))
    return protocol_error("symbolic link error response: SymLinkLength out of range");
  ByteView path = data.subspan(kSymlinkFixed, symlink_length - (kSymlinkFixed - 4));
  if (!range_ok(sub_offset, sub_length, path.size()) ||
      !range_ok(print_offset, print_length, path.size()))
    return protocol_error("symbolic link error response: name out of range");
  auto sub = utf16le_to_utf8(path.subspan(sub_offset, sub_length));
  auto print = utf16le_to_utf8(path.subspan(print_offset, print_length));
  if (!sub.ok() || !print.ok())
    return protocol_error("symbolic link error response: name is not valid UTF-16");
  s.SubstituteName = std::move(sub.value());
  s.PrintName = std::move(print.value());
  return s;
}

Result<ByteView> default_error_data(const ErrorResponse& rsp) {
  if (rsp.ErrorContexts.empty()) return ByteView(rsp.ErrorData);
  for (const auto& c : rsp.ErrorContexts)
    if (c.ErrorId == SMB2_ERROR_ID_DEFAULT) return ByteView(c.ErrorContextData);
  return protocol_error("ERROR response has no SMB2_ERROR_ID_DEFAULT context");
}

Result<SymbolicLinkErrorResponse> symbolic_link_error(const ErrorResponse& rsp) {
  SMBKIT_TRY(ByteView data, default_error_data(rsp));
  return decode_symbolic_link_error_response(data);
}

Result<uint32_t> buffer_too_small_length(const ErrorResponse& rsp) {
  SMBKIT_TRY(ByteView data, default_error_data(rsp));
  ByteReader r(data);
  uint32_t n = r.u32();
  if (!r.ok()) return protocol_error("STATUS_BUFFER_TOO_SMALL ErrorData shorter than 4 bytes");
  return n;
}

}  // namespace smbkit::proto
