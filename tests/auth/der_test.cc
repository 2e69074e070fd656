#include "auth/der.h"

#include <gtest/gtest.h>

namespace smbkit::auth::der {
namespace {

bool rejected(const Error& e) { return e.is(STATUS_INVALID_NETWORK_RESPONSE); }

TEST(Der, LengthFormsRoundTrip) {
  for (size_t n : {0u, 1u, 127u, 128u, 255u, 256u, 65535u, 65536u}) {
    Bytes v(n, std::byte{0x5a});
    Bytes enc = tlv(kTagOctetString, v);
    size_t hdr = n < 128 ? 2 : n < 256 ? 3 : n < 65536 ? 4 : 5;  // X.690 8.1.3.5
    EXPECT_EQ(enc.size(), hdr + n) << n;
    Reader r(enc);
    auto t = r.expect(kTagOctetString);
    ASSERT_TRUE(t.ok()) << n;
    EXPECT_EQ(t->value.size(), n);
    EXPECT_EQ(t->encoding.size(), enc.size());
    EXPECT_TRUE(r.finish("x").ok());
  }
  EXPECT_EQ(to_hex(tlv(0x04, Bytes(200))).substr(0, 6), "0481c8");
  EXPECT_EQ(to_hex(tlv(0x04, Bytes(300))).substr(0, 8), "0482012c");
}

TEST(Der, RejectsMalformedLengths) {
  auto first = [](std::string_view h) { return Reader(from_hex(h)).next(); };
  EXPECT_TRUE(rejected(first("").error()));
  EXPECT_TRUE(rejected(first("30").error()));                // no length
  EXPECT_TRUE(rejected(first("3080 0000").error()));         // indefinite (BER only)
  EXPECT_TRUE(rejected(first("3003 0101").error()));         // past end
  EXPECT_TRUE(rejected(first("3082 01").error()));           // truncated long form
  EXPECT_TRUE(rejected(first("3085 0000000001 00").error()));// > 4 length octets
  EXPECT_TRUE(rejected(first("3084 ffffffff 00").error()));  // huge, past end
  EXPECT_TRUE(rejected(first("1f01 0100").error()));         // multi-octet tag
  EXPECT_TRUE(rejected(first("30ff").error()));              // reserved 0xff
  // Unambiguous non-minimal long form is tolerated (see der.cc).
  EXPECT_TRUE(first("308103 020100").ok());
}

TEST(Der, StructureChecks) {
  Bytes b = from_hex("3003 020105 0400");
  Reader r(b);
  EXPECT_TRUE(rejected(r.expect(kTagOctetString).error()));  // wrong tag
  auto seq = r.enter(kTagSequence);
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(seq->depth(), 1);
  auto none = seq->optional(context_tag(0));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_TRUE(seq->expect(kTagInteger).ok());
  EXPECT_TRUE(seq->finish("seq").ok());
  EXPECT_TRUE(rejected(r.finish("top").error()));  // 04 00 left over
  Bytes prim_bytes = from_hex("0400");  // must outlive the Reader (a view)
  Reader prim(prim_bytes);
  EXPECT_TRUE(rejected(prim.enter(0x04).error()));  // primitive is not enterable
}

TEST(Der, NestingDepthIsBounded) {
  // 30 len (30 len (... 0500)) nested `levels` deep.
  auto nested = [](int levels) {
    Bytes b = from_hex("0500");
    for (int i = 0; i < levels; i++) b = tlv(kTagSequence, b);
    return b;
  };
  auto walk = [](const Bytes& b, int levels) -> Result<void> {
    Reader r(b);
    for (int i = 0; i < levels; i++) {
      SMBKIT_TRY(r, r.enter(kTagSequence));
    }
    return ok_result();
  };
  Bytes ok = nested(kMaxDepth);
  EXPECT_TRUE(walk(ok, kMaxDepth).ok());
  Bytes deep = nested(kMaxDepth + 1);
  EXPECT_TRUE(rejected(walk(deep, kMaxDepth + 1).error()));
  Bytes very_deep = nested(1000);  // stays linear: no recursion in the reader
  EXPECT_FALSE(walk(very_deep, 1000).ok());
}

TEST(Der, Oids) {
  // RFC 4178 / RFC 2743 examples of these encodings.
  struct {
    const char* dotted;
    const char* der;
  } cases[] = {
      {"1.3.6.1.5.5.2", "2b0601050502"},
      {"1.3.6.1.4.1.311.2.2.10", "2b06010401823702020a"},
      {"1.2.840.113554.1.2.2", "2a864886f712010202"},
      {"1.2.840.48018.1.2.2", "2a864882f712010202"},
      {"2.999.3", "883703"},
  };
  for (auto& c : cases) {
    auto o = oid_from_string(c.dotted);
    ASSERT_TRUE(o.ok()) << c.dotted;
    EXPECT_EQ(to_hex(o->value), c.der);
    auto d = decode_oid(from_hex(c.der));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->to_string(), c.dotted);
  }
  EXPECT_EQ(to_hex(encode_oid(oid_from_string("1.3.6.1.5.5.2").value())), "06062b0601050502");
  for (const char* bad : {"", "1", "1.", ".1", "3.1", "1.40", "a.b", "1..2", "1.2.-3"})
    EXPECT_TRUE(oid_from_string(bad).error().is(STATUS_INVALID_PARAMETER)) << bad;
  EXPECT_TRUE(rejected(decode_oid({}).error()));
  EXPECT_TRUE(rejected(decode_oid(from_hex("2b86")).error()));     // unterminated arc
  EXPECT_TRUE(rejected(decode_oid(from_hex("2b8001")).error()));   // leading 0x80
  EXPECT_TRUE(rejected(decode_oid(from_hex("2b ffffffffffffffffff7f")).error()));  // > 64 bits
}

}  // namespace
}  // namespace smbkit::auth::der
