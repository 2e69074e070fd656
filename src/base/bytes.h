// Byte buffers and bounds-checked little-endian readers and writers: every
// decoder goes through ByteReader so no length or offset is used unchecked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace smbkit {

using Bytes = std::vector<std::byte>;
using ByteView = std::span<const std::byte>;
using MutableByteView = std::span<std::byte>;

inline ByteView as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
inline Bytes to_bytes(std::string_view s) {
  auto v = as_bytes(s);
  return Bytes(v.begin(), v.end());
}
inline std::string_view as_chars(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
Bytes from_hex(std::string_view hex);  // ignores spaces; aborts on bad input (tests)
std::string to_hex(ByteView b);

// True when [offset, offset+length) lies inside [0, total). Overflow-safe.
constexpr bool range_ok(uint64_t offset, uint64_t length, uint64_t total) {
  return offset <= total && length <= total - offset;
}

// Reads little-endian fields. A read past the end returns zero and marks the
// reader failed; check ok() once after a group of reads.
class ByteReader {
 public:
  explicit ByteReader(ByteView buf, size_t pos = 0)
      : buf_(buf), pos_(pos), ok_(pos <= buf.size()) {}

  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  uint16_t be16() { return static_cast<uint16_t>(be(2)); }
  uint32_t be32() { return static_cast<uint32_t>(be(4)); }

  // A view of the next n bytes (empty and failed if not available).
  ByteView bytes(size_t n) {
    if (!take(n)) return {};
    return buf_.subspan(pos_ - n, n);
  }
  void copy(void* dst, size_t n) {
    auto v = bytes(n);
    if (!v.empty()) std::memcpy(dst, v.data(), n);
  }
  void skip(size_t n) { take(n); }
  void seek(size_t pos) {
    if (pos > buf_.size()) ok_ = false;
    else pos_ = pos;
  }

  size_t pos() const { return pos_; }
  size_t remaining() const { return ok_ ? buf_.size() - pos_ : 0; }
  size_t size() const { return buf_.size(); }
  ByteView buffer() const { return buf_; }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }

 private:
  bool take(size_t n) {
    if (!ok_ || n > buf_.size() - pos_) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  uint64_t le(size_t n) {
    if (!take(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
      v |= static_cast<uint64_t>(buf_[pos_ - n + i]) << (8 * i);
    return v;
  }
  uint64_t be(size_t n) {
    if (!take(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = (v << 8) | static_cast<uint64_t>(buf_[pos_ - n + i]);
    return v;
  }

  ByteView buf_;
  size_t pos_;
  bool ok_;
};

// Appends little-endian fields to a byte vector. Offsets in SMB2 messages
// are relative to the start of the SMB2 header, so a writer used for one
// message starts with the header at position 0.
class ByteWriter {
 public:
  explicit ByteWriter(Bytes& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(std::byte{v}); }
  void u16(uint16_t v) { put_le(v, 2); }
  void u32(uint32_t v) { put_le(v, 4); }
  void u64(uint64_t v) { put_le(v, 8); }
  void be16(uint16_t v) { put_be(v, 2); }
  void be32(uint32_t v) { put_be(v, 4); }
  void bytes(ByteView b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void zeros(size_t n) { out_.insert(out_.end(), n, std::byte{0}); }
  void pad_to(size_t align) {
    while (out_.size() % align) out_.push_back(std::byte{0});
  }
  void patch_u16(size_t at, uint16_t v) { patch_le(at, v, 2); }
  void patch_u32(size_t at, uint32_t v) { patch_le(at, v, 4); }
  void patch_u64(size_t at, uint64_t v) { patch_le(at, v, 8); }
  size_t pos() const { return out_.size(); }
  Bytes& buffer() { return out_; }

 private:
  void put_le(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; i++) out_.push_back(std::byte(static_cast<uint8_t>(v >> (8 * i))));
  }
  void put_be(uint64_t v, size_t n) {
    for (size_t i = n; i-- > 0;) out_.push_back(std::byte(static_cast<uint8_t>(v >> (8 * i))));
  }
  void patch_le(size_t at, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; i++) out_[at + i] = std::byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  Bytes& out_;
};

// Little-endian loads/stores on raw memory (for hot paths with checked sizes).
inline uint16_t load_le16(const std::byte* p) {
  return static_cast<uint16_t>(static_cast<uint16_t>(p[0]) | (static_cast<uint16_t>(p[1]) << 8));
}
inline uint32_t load_le32(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t load_le64(const std::byte* p) {
  return static_cast<uint64_t>(load_le32(p)) | (static_cast<uint64_t>(load_le32(p + 4)) << 32);
}
inline void store_le16(std::byte* p, uint16_t v) {
  p[0] = std::byte(v & 0xff);
  p[1] = std::byte(v >> 8);
}
inline void store_le32(std::byte* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = std::byte((v >> (8 * i)) & 0xff);
}
inline void store_le64(std::byte* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = std::byte((v >> (8 * i)) & 0xff);
}

}  // namespace smbkit
