// NDR, the transfer syntax of DCE/RPC (C706 chapter 14, MS-RPCE 2.2.5),
// in its NDR20 form: little-endian integers aligned to their size, [string]
// wide strings as conformant varying arrays of UTF-16 code units with a
// terminating NUL, unique and full pointers as 32-bit referent ids (0 is
// NULL) with the pointee deferred behind the structure that holds it.
//
// The reader faces hostile input: every count, offset and length is checked
// against the bytes that remain before anything is allocated, padding must
// stay inside the buffer, and one reader allocates at most its budget in
// total (a stub of a few KiB cannot make us reserve gigabytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::rpc {

// The first referent id a writer hands out. Any non-zero value is valid
// (C706 14.3.12.3); Windows and Samba start at 0x00020000 and count up by 4.
inline constexpr uint32_t kFirstReferentId = 0x00020000;
inline constexpr uint32_t kReferentIdStep = 4;
// What one NdrReader may allocate (strings and arrays) by default.
inline constexpr size_t kDefaultNdrBudget = 1 << 20;

class NdrWriter {
 public:
  explicit NdrWriter(Bytes& out) : w_(out), base_(out.size()) {}

  // Alignment is relative to the start of the stub (where the writer began).
  void align(size_t n);
  void u8(uint8_t v) { w_.u8(v); }
  void u16(uint16_t v) {
    align(2);
    w_.u16(v);
  }
  void u32(uint32_t v) {
    align(4);
    w_.u32(v);
  }
  void u64(uint64_t v) {
    align(8);
    w_.u64(v);
  }
  // A unique/full pointer: a fresh referent id, or 0 for NULL. Returns
  // whether the pointee follows (the caller writes it when deferred).
  bool pointer(bool present);
  // The conformant varying string of a [string] wchar_t* (C706 14.3.4.2):
  // max_count, offset 0, actual_count (both counting the NUL), UTF-16LE
  // code units. Invalid UTF-8 is an error.
  Result<void> wstring(std::string_view utf8);
  // A unique [string] pointer and its pointee written in place (a top-level
  // parameter: nothing is deferred).
  Result<void> unique_wstring(const std::optional<std::string>& s);
  // A conformant array's max_count (C706 14.3.3.2), written before the
  // structure or array that holds it.
  void conformance(uint32_t count) { u32(count); }

  size_t size() const { return w_.pos() - base_; }

 private:
  ByteWriter w_;
  size_t base_;
  uint32_t next_referent_ = kFirstReferentId;
};

class NdrReader {
 public:
  explicit NdrReader(ByteView stub, size_t budget = kDefaultNdrBudget) : r_(stub), budget_(budget) {}

  // Skips padding to an n-byte boundary; fails when it passes the end.
  Result<void> align(size_t n);
  Result<uint8_t> u8();
  Result<uint16_t> u16();
  Result<uint32_t> u32();
  Result<uint64_t> u64();
  // A unique/full pointer's referent id (0: NULL).
  Result<uint32_t> pointer() { return u32(); }
  // A [string] wchar_t conformant varying array, converted to UTF-8. The
  // offset must be 0 and actual_count <= max_count; the last unit must be
  // the NUL (C706 14.3.4.2), which is dropped.
  Result<std::string> wstring();
  // A unique [string] pointer and its pointee read in place (nullopt: NULL).
  Result<std::optional<std::string>> unique_wstring();
  // A conformant array's max_count, checked against what remains: each of
  // the `count` elements takes at least `min_element_size` bytes, and
  // `element_alloc` bytes each are charged to the budget.
  Result<uint32_t> conformance(size_t min_element_size, size_t element_alloc);
  // Charges n bytes of allocation to the budget.
  Result<void> charge(size_t n);

  size_t pos() const { return r_.pos(); }
  size_t remaining() const { return r_.remaining(); }
  bool at_end() const { return r_.remaining() == 0; }

 private:
  ByteReader r_;
  size_t budget_;
};

// The error every decoder returns for malformed NDR.
Error ndr_error(std::string context);

}  // namespace smbkit::rpc
