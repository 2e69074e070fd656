#include "rpc/ndr.h"

#include <gtest/gtest.h>

namespace smbkit::rpc {
namespace {

TEST(Ndr, IntegersAreAlignedToTheirSize) {
  Bytes out;
  NdrWriter w(out);
  w.u8(1);
  w.u16(0x0203);
  w.u8(4);
  w.u32(0x05060708);
  w.u64(0x090a0b0c0d0e0f10);
  EXPECT_EQ(to_hex(out),
            "0100030204000000080706050000000010"
            "0f0e0d0c0b0a09");
  NdrReader r(out);
  EXPECT_EQ(*r.u8(), 1);
  EXPECT_EQ(*r.u16(), 0x0203);
  EXPECT_EQ(*r.u8(), 4);
  EXPECT_EQ(*r.u32(), 0x05060708u);
  EXPECT_EQ(*r.u64(), 0x090a0b0c0d0e0f10u);
  EXPECT_TRUE(r.at_end());
}

TEST(Ndr, AlignmentIsRelativeToTheStubStart) {
  Bytes out(3, std::byte{0xee});  // bytes before the stub: not counted
  NdrWriter w(out);
  w.u8(1);
  w.u32(2);
  EXPECT_EQ(out.size(), 3u + 8u);
}

TEST(Ndr, WideStringIsConformantVaryingWithNul) {
  Bytes out;
  NdrWriter w(out);
  ASSERT_TRUE(w.wstring("IPC$"));
  // max_count 5, offset 0, actual_count 5, "IPC$" and NUL in UTF-16LE.
  EXPECT_EQ(to_hex(out), "05000000000000000500000049005000430024000000");
  NdrReader r(out);
  auto s = r.wstring();
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(*s, "IPC$");
}

TEST(Ndr, NonAsciiStringsRoundTrip) {
  Bytes out;
  NdrWriter w(out);
  ASSERT_TRUE(w.wstring("Fr\xc3\xbchst\xc3\xbc\x63k \xf0\x9f\x93\x81"));
  NdrReader r(out);
  EXPECT_EQ(*r.wstring(), "Fr\xc3\xbchst\xc3\xbc\x63k \xf0\x9f\x93\x81");
}

TEST(Ndr, UniquePointersGetDistinctReferentIds) {
  Bytes out;
  NdrWriter w(out);
  ASSERT_TRUE(w.unique_wstring(std::string("a")));
  ASSERT_TRUE(w.unique_wstring(std::nullopt));
  ASSERT_TRUE(w.unique_wstring(std::string("b")));
  NdrReader r(out);
  EXPECT_EQ(**r.unique_wstring(), "a");
  EXPECT_FALSE(r.unique_wstring()->has_value());
  EXPECT_EQ(**r.unique_wstring(), "b");
  EXPECT_EQ(load_le32(out.data()), kFirstReferentId);
}

Bytes varying_header(uint32_t max_count, uint32_t offset, uint32_t actual) {
  Bytes out;
  ByteWriter w(out);
  w.u32(max_count);
  w.u32(offset);
  w.u32(actual);
  return out;
}

TEST(NdrHostile, StringCountLargerThanTheBuffer) {
  Bytes b = varying_header(0x7fffffff, 0, 0x7fffffff);
  b.resize(b.size() + 8);
  NdrReader r(b);
  EXPECT_FALSE(r.wstring());
}

TEST(NdrHostile, StringActualCountAboveMaxCount) {
  Bytes b = varying_header(1, 0, 2);
  b.resize(b.size() + 4);
  NdrReader r(b);
  EXPECT_FALSE(r.wstring());
}

TEST(NdrHostile, StringOffsetPastTheEnd) {
  Bytes b = varying_header(3, 0xfffffffe, 1);
  b.resize(b.size() + 2);
  NdrReader r(b);
  EXPECT_FALSE(r.wstring());
}

TEST(NdrHostile, StringWithoutNul) {
  Bytes b = varying_header(1, 0, 1);
  b.push_back(std::byte{'A'});
  b.push_back(std::byte{0});
  NdrReader r(b);
  EXPECT_FALSE(r.wstring());
  Bytes empty = varying_header(0, 0, 0);
  NdrReader r2(empty);
  EXPECT_FALSE(r2.wstring());
}

TEST(NdrHostile, StringWithEmbeddedNul) {
  Bytes b = varying_header(3, 0, 3);
  for (int c : {int{'A'}, 0, 0, 0, 0, 0}) b.push_back(std::byte(c));
  NdrReader r(b);
  EXPECT_FALSE(r.wstring());
}

TEST(NdrHostile, HugeArrayCountIsRefusedBeforeAllocating) {
  Bytes b;
  ByteWriter w(b);
  w.u32(0xffffffff);
  w.zeros(64);
  NdrReader r(b);
  EXPECT_FALSE(r.conformance(12, 64));
  // A count that fits the bytes but not the budget.
  Bytes c;
  ByteWriter wc(c);
  wc.u32(1000);
  wc.zeros(1000 * 4);
  NdrReader small(c, /*budget=*/1000);
  EXPECT_FALSE(small.conformance(4, 64));
  NdrReader big(c);
  EXPECT_EQ(*big.conformance(4, 64), 1000u);
}

TEST(NdrHostile, BudgetCoversAllStringsOfOneReader) {
  Bytes b;
  NdrWriter w(b);
  for (int i = 0; i < 4; i++) ASSERT_TRUE(w.wstring(std::string(100, 'x')));
  NdrReader r(b, /*budget=*/3 * 101 * 3);
  for (int i = 0; i < 3; i++) EXPECT_TRUE(r.wstring());
  EXPECT_FALSE(r.wstring());
}

TEST(NdrHostile, TruncatedIntegersAndPadding) {
  Bytes b{std::byte{1}, std::byte{2}, std::byte{3}};
  NdrReader r(b);
  EXPECT_FALSE(r.u32());
  NdrReader r2(b);
  ASSERT_TRUE(r2.u8());
  EXPECT_FALSE(r2.u32());  // padding to 4 passes the end
  NdrReader r3(b);
  EXPECT_FALSE(r3.u64());
}

}  // namespace
}  // namespace smbkit::rpc
