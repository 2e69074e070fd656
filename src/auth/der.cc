#include "auth/der.h"

#include <charconv>

namespace smbkit::auth::der {

std::optional<uint8_t> Reader::peek_tag() const {
  if (empty()) return std::nullopt;
  return static_cast<uint8_t>(buf_[pos_]);
}

// X.690 8.1.2 (identifier) and 8.1.3 (length). Long-form lengths that are
// not minimal (a BER-ism: 81 05 instead of 05) are accepted because they are
// unambiguous and some GSS stacks emit them; everything else DER forbids or
// SPNEGO never needs is rejected.
Result<Tlv> Reader::next() {
  size_t start = pos_;
  size_t left = buf_.size() - pos_;
  if (pos_ >= buf_.size()) return protocol_error("DER: element missing");
  uint8_t tag = static_cast<uint8_t>(buf_[pos_]);
  if ((tag & 0x1f) == 0x1f) return protocol_error("DER: multi-octet tag not supported");
  if (left < 2) return protocol_error("DER: truncated length");
  uint8_t l0 = static_cast<uint8_t>(buf_[pos_ + 1]);
  size_t hdr = 2;
  uint64_t len = 0;
  if (l0 < 0x80) {
    len = l0;
  } else if (l0 == 0x80) {
    return protocol_error("DER: indefinite length");
  } else {
    size_t n = l0 & 0x7f;
    if (n > 4) return protocol_error("DER: length too long");
    if (left - 2 < n) return protocol_error("DER: truncated length");
    for (size_t i = 0; i < n; i++) len = (len << 8) | static_cast<uint8_t>(buf_[pos_ + 2 + i]);
    hdr += n;
  }
  if (len > left - hdr) return protocol_error("DER: length past end of buffer");
  pos_ += hdr + static_cast<size_t>(len);
  Tlv t;
  t.tag = tag;
  t.value = buf_.subspan(start + hdr, static_cast<size_t>(len));
  t.encoding = buf_.subspan(start, hdr + static_cast<size_t>(len));
  return t;
}

Result<Tlv> Reader::expect(uint8_t tag) {
  auto p = peek_tag();
  if (!p) return protocol_error("DER: element missing");
  if (*p != tag) return protocol_error("DER: unexpected tag");
  return next();
}

Result<std::optional<Tlv>> Reader::optional(uint8_t tag) {
  if (peek_tag() != tag) return std::optional<Tlv>{};
  SMBKIT_TRY(Tlv t, next());
  return std::optional<Tlv>{t};
}

Result<Reader> Reader::enter(const Tlv& tlv) const {
  if (!tlv.constructed()) return protocol_error("DER: primitive where constructed expected");
  if (depth_ + 1 > kMaxDepth) return protocol_error("DER: nesting too deep");
  return Reader(tlv.value, depth_ + 1);
}

Result<Reader> Reader::enter(uint8_t tag) {
  SMBKIT_TRY(Tlv t, expect(tag));
  return enter(t);
}

Result<void> Reader::finish(const char* what) const {
  if (!empty()) return protocol_error(std::string("DER: trailing data in ") + what);
  return ok_result();
}

void put_tlv(Bytes& out, uint8_t tag, ByteView value) {
  out.push_back(std::byte{tag});
  size_t n = value.size();
  if (n < 0x80) {
    out.push_back(std::byte(static_cast<uint8_t>(n)));
  } else {
    int octets = 0;
    for (size_t v = n; v; v >>= 8) octets++;
    out.push_back(std::byte(static_cast<uint8_t>(0x80 | octets)));
    for (int i = octets; i-- > 0;) out.push_back(std::byte(static_cast<uint8_t>(n >> (8 * i))));
  }
  out.insert(out.end(), value.begin(), value.end());
}

Bytes tlv(uint8_t tag, ByteView value) {
  Bytes out;
  out.reserve(value.size() + 6);
  put_tlv(out, tag, value);
  return out;
}

// X.690 8.19: each subidentifier is base-128, high bit set on all but the
// last octet; the first subidentifier packs the first two arcs as 40*X+Y.
Result<Oid> decode_oid(ByteView c) {
  if (c.empty()) return protocol_error("DER: empty OID");
  if ((static_cast<uint8_t>(c.back()) & 0x80) != 0) return protocol_error("DER: truncated OID");
  bool at_start = true;
  int septets = 0;
  for (auto b : c) {
    uint8_t v = static_cast<uint8_t>(b);
    if (at_start && v == 0x80) return protocol_error("DER: non-minimal OID arc");
    if (++septets > 9) return protocol_error("DER: OID arc too large");
    at_start = (v & 0x80) == 0;
    if (at_start) septets = 0;
  }
  return Oid{Bytes(c.begin(), c.end())};
}

std::string Oid::to_string() const {
  std::string s;
  uint64_t v = 0;
  bool first = true;
  for (auto b : value) {
    uint8_t o = static_cast<uint8_t>(b);
    v = (v << 7) | (o & 0x7f);
    if (o & 0x80) continue;
    if (first) {
      uint64_t x = v < 40 ? 0 : v < 80 ? 1 : 2;
      s += std::to_string(x);
      s += '.';
      s += std::to_string(v - 40 * x);
      first = false;
    } else {
      // Appended piece by piece: "." + std::string trips GCC 12's
      // -Wrestrict at -O3 (a false positive in basic_string::insert).
      s += '.';
      s += std::to_string(v);
    }
    v = 0;
  }
  return s;
}

Result<Oid> oid_from_string(std::string_view dotted) {
  std::vector<uint64_t> arcs;
  size_t i = 0;
  while (i <= dotted.size()) {
    size_t j = dotted.find('.', i);
    if (j == std::string_view::npos) j = dotted.size();
    uint64_t v = 0;
    auto part = dotted.substr(i, j - i);
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc{} || p != part.data() + part.size())
      return nt_error(STATUS_INVALID_PARAMETER, "malformed OID string");
    arcs.push_back(v);
    i = j + 1;
  }
  if (arcs.size() < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) ||
      arcs[1] > UINT64_MAX - 80)
    return nt_error(STATUS_INVALID_PARAMETER, "malformed OID string");
  Oid oid;
  auto put = [&](uint64_t v) {
    std::byte tmp[10];
    int n = 0;
    do {
      tmp[n++] = std::byte(static_cast<uint8_t>(v & 0x7f));
      v >>= 7;
    } while (v);
    for (int k = n; k-- > 0;)
      oid.value.push_back(k ? (tmp[k] | std::byte{0x80}) : tmp[k]);
  };
  put(arcs[0] * 40 + arcs[1]);
  for (size_t k = 2; k < arcs.size(); k++) put(arcs[k]);
  return oid;
}

Bytes encode_oid(const Oid& oid) { return tlv(kTagOid, oid.value); }

}  // namespace smbkit::auth::der
