// A minimal, strict DER (X.690) reader and writer for the few ASN.1 shapes
// SPNEGO needs (RFC 4178, MS-SPNG). Only what GSS/SPNEGO tokens use:
// low-tag-number identifiers (one octet), definite lengths (short form, or
// long form with at most 4 length octets), no indefinite lengths (0x80), and
// a bounded nesting depth. Every length is checked against what remains of
// the enclosing value before it is used. Peer input that breaks any rule is
// STATUS_INVALID_NETWORK_RESPONSE.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth::der {

// Identifier octets used by GSS-API and SPNEGO (X.690 8.1.2).
inline constexpr uint8_t kTagBoolean = 0x01;
inline constexpr uint8_t kTagInteger = 0x02;
inline constexpr uint8_t kTagBitString = 0x03;
inline constexpr uint8_t kTagOctetString = 0x04;
inline constexpr uint8_t kTagOid = 0x06;
inline constexpr uint8_t kTagEnumerated = 0x0a;
inline constexpr uint8_t kTagGeneralString = 0x1b;
inline constexpr uint8_t kTagSequence = 0x30;     // constructed
inline constexpr uint8_t kTagApplication0 = 0x60; // [APPLICATION 0], constructed
// [n] context-specific, constructed (EXPLICIT tagging, as SPNEGO uses).
constexpr uint8_t context_tag(unsigned n) { return static_cast<uint8_t>(0xa0 | n); }

// Deepest nesting a reader accepts. SPNEGO needs 5 levels (wrapper, choice,
// sequence, field, hints sequence); the bound stops stack-depth attacks.
inline constexpr int kMaxDepth = 8;
// Longest value accepted (long form with up to 4 length octets).
inline constexpr uint64_t kMaxLength = 0xffffffffu;

// One decoded element: its tag, its contents, and the whole encoding
// (identifier + length + contents), which the mechListMIC needs.
struct Tlv {
  uint8_t tag = 0;
  ByteView value;
  ByteView encoding;
  bool constructed() const { return (tag & 0x20) != 0; }
};

// Reads consecutive TLVs from a buffer; enter() descends into a constructed
// value with depth + 1.
class Reader {
 public:
  explicit Reader(ByteView buf, int depth = 0) : buf_(buf), depth_(depth) {}

  bool empty() const { return pos_ >= buf_.size(); }
  // Tag of the next element without consuming it (nullopt at the end).
  std::optional<uint8_t> peek_tag() const;
  // The next element, whatever its tag.
  Result<Tlv> next();
  // The next element, which must carry `tag`.
  Result<Tlv> expect(uint8_t tag);
  // If the next element carries `tag`, consume it; otherwise nullopt.
  Result<std::optional<Tlv>> optional(uint8_t tag);
  // A reader over the contents of the next element, which must carry the
  // constructed `tag`. Fails past kMaxDepth.
  Result<Reader> enter(uint8_t tag);
  // A reader over the contents of a TLV already read.
  Result<Reader> enter(const Tlv& tlv) const;
  // Succeeds when every byte has been consumed.
  Result<void> finish(const char* what) const;
  int depth() const { return depth_; }

 private:
  ByteView buf_;
  size_t pos_ = 0;
  int depth_;
};

// Appends identifier, minimal length and contents.
void put_tlv(Bytes& out, uint8_t tag, ByteView value);
Bytes tlv(uint8_t tag, ByteView value);

// An OBJECT IDENTIFIER as its DER contents (X.690 8.19), e.g. 2b 06 01 05
// 05 02 for 1.3.6.1.5.5.2. Comparable; to_string() gives dotted form.
struct Oid {
  Bytes value;
  bool operator==(const Oid&) const = default;
  std::string to_string() const;
};
// Validates OID contents: non-empty, no non-minimal subidentifier (leading
// 0x80), last octet terminates, every arc fits 64 bits.
Result<Oid> decode_oid(ByteView contents);
// "1.3.6.1.5.5.2" -> Oid. STATUS_INVALID_PARAMETER on a malformed string.
Result<Oid> oid_from_string(std::string_view dotted);
// TLV-encoded (06 len contents).
Bytes encode_oid(const Oid& oid);

}  // namespace smbkit::auth::der
