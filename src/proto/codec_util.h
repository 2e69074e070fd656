// Wire helpers shared by the command codecs. They hold the checks and
// layouts that docs/design/proto-codec.md asks of every command ("What a
// decoder checks", "What an encoder does"); each codec function still names
// its own fields in spec order and carries its own section citation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"
#include "proto/types.h"

namespace smbkit::proto {

// ---- fields shared by several structures ------------------------------------

// MS-SMB2 2.2.14.1: SMB2_FILEID (Persistent, Volatile).
inline void encode_file_id(const FileId& id, ByteWriter& w) {
  w.u64(id.Persistent);
  w.u64(id.Volatile);
}
inline FileId decode_file_id(ByteReader& r) {
  FileId id;
  id.Persistent = r.u64();
  id.Volatile = r.u64();
  return id;
}

// A UTF-16LE name from the peer as UTF-8; odd lengths and invalid UTF-16 are
// protocol errors naming `what`. An empty name is "".
Result<std::string> decode_utf16_name(ByteView utf16, std::string_view what);

// ---- decoders: the fixed part (rules 1 and 2) -------------------------------

// Checked before reading: error if msg is shorter than the header plus
// `fixed` body bytes ("<what>: truncated") or its StructureSize is not
// `expected` ("<what>: wrong StructureSize").
Result<void> check_body(ByteView msg, uint16_t expected, size_t fixed, std::string_view what);
// check_body(), then a reader at the field after StructureSize.
Result<ByteReader> body_reader(ByteView msg, uint16_t expected, size_t fixed,
                               std::string_view what);

// Checked after reading the fixed part with `r` (which started at
// kHeaderSize): "<what> truncated" when r ran out, else "<what>
// StructureSize is not <expected>" when `structure_size` differs.
Result<void> check_fixed_part(const ByteReader& r, uint16_t structure_size, uint16_t expected,
                              std::string_view what);

// ---- decoders: variable buffers (rule 3) ------------------------------------

// The buffer named by (offset, length) in msg. An empty buffer's offset is
// ignored (MS-SMB2 3.2.5.14); otherwise the offset must be at least
// kHeaderSize + `fixed` (the end of the fixed part) and the buffer must lie
// inside msg, else "<what> <fields> out of range" (fields: the spec names,
// e.g. "NameOffset/NameLength").
Result<ByteView> body_buffer(ByteView msg, uint64_t offset, uint64_t length, size_t fixed,
                             std::string_view what, std::string_view fields);
// The same buffer, copied.
Result<Bytes> copy_body_buffer(ByteView msg, uint64_t offset, uint64_t length, size_t fixed,
                               std::string_view what, std::string_view fields);

// ---- decoders: lists (rule 4) -----------------------------------------------

// Walks the `count` elements of a list in buf whose elements each start
// 8-byte aligned relative to buf[0] (negotiate contexts 2.2.3.1 in a
// message, error contexts 2.2.2.1 in ErrorData); the first at `start`, the
// last needs no trailing padding. Each has a `header_size`-byte header that
// must lie in buf ("<what> list overruns <bound>"). `read(r)` reads one
// element's header and data with r (positioned at the element) and returns
// the data length; r running out is "<what> data overruns <bound>".
template <class ReadElement>
Result<void> walk_aligned_list(ByteView buf, uint64_t start, size_t count, size_t header_size,
                               std::string_view what, std::string_view bound, ReadElement&& read) {
  uint64_t pos = start;
  for (size_t i = 0; i < count; i++) {
    pos = (pos + 7) & ~uint64_t{7};
    if (!range_ok(pos, header_size, buf.size()))
      return protocol_error(std::string(what) + " list overruns " + std::string(bound));
    ByteReader r(buf, static_cast<size_t>(pos));
    const uint64_t data_length = read(r);
    if (!r.ok())
      return protocol_error(std::string(what) + " data overruns " + std::string(bound));
    pos += header_size + data_length;
  }
  return ok_result();
}

// ---- encoders ---------------------------------------------------------------

// Appends a variable Buffer; an empty one becomes the one byte an odd
// StructureSize counts (Samba's dyn_pad).
inline void encode_buffer_or_pad(ByteView buffer, ByteWriter& w) {
  if (buffer.empty())
    w.u8(0);
  else
    w.bytes(buffer);
}

// ---- bodies of StructureSize (4) and Reserved only --------------------------
// ECHO (2.2.28 / 2.2.29), LOGOFF (2.2.7 / 2.2.8), TREE_DISCONNECT (2.2.11 /
// 2.2.12), CANCEL (2.2.30); the FLUSH (2.2.18) and LOCK (2.2.27) responses
// have the same bytes.

inline constexpr uint16_t kEmptyBodyStructureSize = 4;

// StructureSize, Reserved.
Result<void> encode_empty_body(ByteWriter& w);
// StructureSize, Reserved; errors name `what` as check_fixed_part() does.
Result<void> check_empty_body(ByteView msg, std::string_view what);
template <class Body>
Result<Body> decode_empty_body(ByteView msg, std::string_view what) {
  SMBKIT_CHECK(check_empty_body(msg, what));
  return Body{};
}

// ---- QUERY_DIRECTORY (2.2.34) and QUERY_INFO (2.2.38) responses -------------
// Both bodies are StructureSize (9), OutputBufferOffset, OutputBufferLength,
// Buffer.

inline constexpr uint16_t kOutputBufferResponseStructureSize = 9;
inline constexpr size_t kOutputBufferResponseFixedSize = 8;

// `too_large`: the error when the buffer does not fit OutputBufferLength.
Result<void> encode_output_buffer_response(ByteView output, ByteWriter& w, const char* too_large);
// The OutputBuffer, a view into msg; errors name `what`.
Result<ByteView> decode_output_buffer_response(ByteView msg, std::string_view what);

// ---- fixed layouts written and read by one field list -----------------------
// A fixed-size structure (MS-FSCC information classes, create context data)
// is described once, in spec order, as a generic lambda over an IO and the
// struct:
//   constexpr auto kFields = [](auto& io, auto& v) {
//     io.u64(v.EndOfFile);
//     io.reserved(4);
//   };
// write_fields() runs it with a FieldWriter over a const struct, read_fields()
// with a FieldReader, so the encoder and the decoder share one layout.

class FieldWriter {
 public:
  explicit FieldWriter(ByteWriter& w) : w_(w) {}
  void u8(uint8_t v) { w_.u8(v); }
  void u16(uint16_t v) { w_.u16(v); }
  void u32(uint32_t v) { w_.u32(v); }
  void u64(uint64_t v) { w_.u64(v); }
  void guid(const std::array<std::byte, 16>& g) { w_.bytes(g); }
  void file_id(const FileId& id) { encode_file_id(id, w_); }
  void reserved(size_t n) { w_.zeros(n); }

 private:
  ByteWriter& w_;
};

// Reads past the end yield zeros and fail the underlying ByteReader, as
// ByteReader itself does.
class FieldReader {
 public:
  explicit FieldReader(ByteReader& r) : r_(r) {}
  void u8(uint8_t& v) { v = r_.u8(); }
  void u16(uint16_t& v) { v = r_.u16(); }
  void u32(uint32_t& v) { v = r_.u32(); }
  void u64(uint64_t& v) { v = r_.u64(); }
  void guid(std::array<std::byte, 16>& g) { r_.copy(g.data(), g.size()); }
  void file_id(FileId& id) { id = decode_file_id(r_); }
  void reserved(size_t n) { r_.skip(n); }

 private:
  ByteReader& r_;
};

// `size`: the bytes the fields take (reserved up front).
template <class T, class Fields>
Bytes write_fields(const T& v, size_t size, const Fields& fields) {
  Bytes b;
  b.reserve(size);
  ByteWriter w(b);
  FieldWriter io(w);
  fields(io, v);
  return b;
}

// Reads `fields` from the start of buf; the caller has checked the size.
template <class T, class Fields>
void read_fields(ByteView buf, T& out, const Fields& fields) {
  ByteReader r(buf);
  FieldReader io(r);
  fields(io, out);
}

// MS-FSCC structures: the error for a buffer shorter than the structure.
Error fscc_too_short(std::string_view what);

// An MS-FSCC structure of `size` fixed bytes: a shorter buffer is
// fscc_too_short(what); trailing bytes are ignored.
template <class T, class Fields>
Result<void> decode_fixed_info(ByteView buf, size_t size, std::string_view what, T& out,
                               const Fields& fields) {
  if (buf.size() < size) return fscc_too_short(what);
  read_fields(buf, out, fields);
  return ok_result();
}

}  // namespace smbkit::proto
