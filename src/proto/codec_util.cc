#include "proto/codec_util.h"

#include "base/utf16.h"

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

Result<ByteReader> body_reader(ByteView msg, uint16_t expected, size_t fixed,
                               std::string_view what) {
  SMBKIT_CHECK(check_body(msg, expected, fixed, what));
  return ByteReader(msg, kHeaderSize + 2);
}

Result<void> check_fixed_part(const ByteReader& r, uint16_t structure_size, uint16_t expected,
                              std::string_view what) {
  if (!r.ok()) return protocol_error(std::string(what) + " truncated");
  if (structure_size != expected)
    return protocol_error(std::string(what) + " StructureSize is not " + std::to_string(expected));
  return ok_result();
}

Result<ByteView> body_buffer(ByteView msg, uint64_t offset, uint64_t length, size_t fixed,
                             std::string_view what, std::string_view fields) {
  if (length == 0) return ByteView{};
  if (offset < kHeaderSize + fixed || !range_ok(offset, length, msg.size()))
    return protocol_error(std::string(what) + " " + std::string(fields) + " out of range");
  return msg.subspan(offset, length);
}

Result<Bytes> copy_body_buffer(ByteView msg, uint64_t offset, uint64_t length, size_t fixed,
                               std::string_view what, std::string_view fields) {
  SMBKIT_TRY(ByteView b, body_buffer(msg, offset, length, fixed, what, fields));
  return Bytes(b.begin(), b.end());
}

Result<void> encode_empty_body(ByteWriter& w) {
  w.u16(kEmptyBodyStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

Result<void> check_empty_body(ByteView msg, std::string_view what) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  return check_fixed_part(r, structure_size, kEmptyBodyStructureSize, what);
}

Result<void> encode_output_buffer_response(ByteView output, ByteWriter& w, const char* too_large) {
  if (output.size() > 0xFFFFFFFFu) return nt_error(STATUS_INVALID_PARAMETER, too_large);
  const size_t offset = w.pos() + kOutputBufferResponseFixedSize;
  w.u16(kOutputBufferResponseStructureSize);
  w.u16(output.empty() ? 0 : static_cast<uint16_t>(offset));  // OutputBufferOffset
  w.u32(static_cast<uint32_t>(output.size()));                 // OutputBufferLength
  w.bytes(output);
  return ok_result();
}

Result<ByteView> decode_output_buffer_response(ByteView msg, std::string_view what) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, kOutputBufferResponseStructureSize,
                                       kOutputBufferResponseFixedSize, what));
  uint16_t offset = r.u16();
  uint32_t length = r.u32();
  if (!r.ok()) return protocol_error(std::string(what) + " truncated");
  return body_buffer(msg, offset, length, kOutputBufferResponseFixedSize, what,
                     "OutputBufferOffset/Length");
}

Error fscc_too_short(std::string_view what) {
  return protocol_error(std::string(what) + ": buffer too short");
}

}  // namespace smbkit::proto
