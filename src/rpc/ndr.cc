#include "rpc/ndr.h"

#include "base/utf16.h"

namespace smbkit::rpc {

namespace {
constexpr size_t kWcharSize = 2;
// max_count, offset, actual_count of a conformant varying array.
constexpr size_t kVaryingHeaderSize = 12;
}  // namespace

Error ndr_error(std::string context) { return Error{STATUS_INVALID_PARAMETER, 0, "NDR: " + std::move(context)}; }

void NdrWriter::align(size_t n) {
  while ((w_.pos() - base_) % n) w_.u8(0);
}

bool NdrWriter::pointer(bool present) {
  if (!present) {
    u32(0);
    return false;
  }
  u32(next_referent_);
  next_referent_ += kReferentIdStep;
  return true;
}

// C706 14.3.4.2: a [string] array is conformant and varying; its counts
// include the terminating NUL.
Result<void> NdrWriter::wstring(std::string_view utf8) {
  SMBKIT_TRY(Bytes units, utf8_to_utf16le(utf8));
  uint32_t count = static_cast<uint32_t>(units.size() / kWcharSize + 1);
  u32(count);  // max_count
  u32(0);      // offset
  u32(count);  // actual_count
  w_.bytes(units);
  w_.u16(0);
  return ok_result();
}

Result<void> NdrWriter::unique_wstring(const std::optional<std::string>& s) {
  if (!pointer(s.has_value())) return ok_result();
  return wstring(*s);
}

Result<void> NdrReader::align(size_t n) {
  size_t pad = (n - r_.pos() % n) % n;
  if (pad > r_.remaining()) return ndr_error("padding past the end");
  r_.skip(pad);
  return ok_result();
}

Result<uint8_t> NdrReader::u8() {
  if (r_.remaining() < 1) return ndr_error("uint8 past the end");
  return r_.u8();
}

Result<uint16_t> NdrReader::u16() {
  SMBKIT_CHECK(align(2));
  if (r_.remaining() < 2) return ndr_error("uint16 past the end");
  return r_.u16();
}

Result<uint32_t> NdrReader::u32() {
  SMBKIT_CHECK(align(4));
  if (r_.remaining() < 4) return ndr_error("uint32 past the end");
  return r_.u32();
}

Result<uint64_t> NdrReader::u64() {
  SMBKIT_CHECK(align(8));
  if (r_.remaining() < 8) return ndr_error("uint64 past the end");
  return r_.u64();
}

Result<void> NdrReader::charge(size_t n) {
  if (n > budget_) return ndr_error("allocation budget exhausted");
  budget_ -= n;
  return ok_result();
}

Result<std::string> NdrReader::wstring() {
  SMBKIT_CHECK(align(4));
  if (r_.remaining() < kVaryingHeaderSize) return ndr_error("string header past the end");
  uint32_t max_count = r_.u32();
  uint32_t offset = r_.u32();
  uint32_t actual_count = r_.u32();
  // The offset of a [string] is 0; a non-zero one (or an actual count past
  // the conformance) describes elements that were never transmitted.
  if (offset != 0) return ndr_error("string offset is not 0");
  if (actual_count > max_count) return ndr_error("string actual_count exceeds max_count");
  if (actual_count == 0) return ndr_error("string without its terminating NUL");
  if (actual_count > r_.remaining() / kWcharSize) return ndr_error("string past the end");
  size_t nbytes = size_t{actual_count} * kWcharSize;
  // The UTF-8 form takes at most 3 bytes per UTF-16 unit.
  SMBKIT_CHECK(charge(size_t{actual_count} * 3));
  ByteView units = r_.bytes(nbytes);
  if (load_le16(units.data() + nbytes - kWcharSize) != 0) return ndr_error("string not NUL-terminated");
  auto s = utf16le_to_utf8(units.first(nbytes - kWcharSize));
  if (!s) return ndr_error("string is not valid UTF-16");
  if (s->find('\0') != std::string::npos) return ndr_error("string holds a NUL");
  return std::move(*s);
}

Result<std::optional<std::string>> NdrReader::unique_wstring() {
  SMBKIT_TRY(uint32_t referent, pointer());
  if (referent == 0) return std::optional<std::string>{};
  SMBKIT_TRY(std::string s, wstring());
  return std::optional<std::string>{std::move(s)};
}

Result<uint32_t> NdrReader::conformance(size_t min_element_size, size_t element_alloc) {
  SMBKIT_TRY(uint32_t count, u32());
  if (min_element_size && count > r_.remaining() / min_element_size)
    return ndr_error("array count larger than the buffer");
  if (element_alloc && count > budget_ / element_alloc) return ndr_error("array count exceeds the allocation budget");
  SMBKIT_CHECK(charge(size_t{count} * element_alloc));
  return count;
}

}  // namespace smbkit::rpc
