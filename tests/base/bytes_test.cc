#include "base/bytes.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/utf16.h"

namespace smbkit {
namespace {

TEST(Bytes, WriterReaderRoundTrip) {
  Bytes b;
  ByteWriter w(b);
  w.u8(0x12);
  w.u16(0x3456);
  w.u32(0x789abcde);
  w.u64(0x0102030405060708ull);
  w.be16(0xA1B2);
  EXPECT_EQ(to_hex(b), "125634debc9a780807060504030201a1b2");
  ByteReader r(b);
  EXPECT_EQ(r.u8(), 0x12);
  EXPECT_EQ(r.u16(), 0x3456);
  EXPECT_EQ(r.u32(), 0x789abcdeu);
  EXPECT_EQ(r.u64(), 0x0102030405060708ull);
  EXPECT_EQ(r.be16(), 0xA1B2);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(r.u8(), 0);  // past the end
  EXPECT_FALSE(r.ok());
}

TEST(Bytes, ReaderRejectsOverlongViews) {
  Bytes b(10);
  ByteReader r(b);
  r.skip(4);
  EXPECT_TRUE(r.bytes(7).empty());
  EXPECT_FALSE(r.ok());
  ByteReader r2(b);
  r2.seek(11);
  EXPECT_FALSE(r2.ok());
}

TEST(Bytes, RangeOk) {
  EXPECT_TRUE(range_ok(0, 10, 10));
  EXPECT_TRUE(range_ok(10, 0, 10));
  EXPECT_FALSE(range_ok(11, 0, 10));
  EXPECT_FALSE(range_ok(5, 6, 10));
  EXPECT_FALSE(range_ok(1, UINT64_MAX, 10));
}

TEST(Bytes, PatchAndPad) {
  Bytes b;
  ByteWriter w(b);
  w.u16(0);
  w.u8(1);
  w.pad_to(8);
  w.patch_u16(0, 0xBEEF);
  EXPECT_EQ(to_hex(b), "efbe010000000000");
}

TEST(Utf16, RoundTripsBmpAndSupplementary) {
  std::string name = "caf\xC3\xA9 \xE6\x96\x87\xE4\xBB\xB6 \xF0\x9F\x98\x80.txt";  // café 文件 😀
  auto u = utf8_to_utf16le(name);
  ASSERT_TRUE(u.ok());
  // 😀 is a surrogate pair: D83D DE00.
  EXPECT_NE(to_hex(*u).find("3dd800de"), std::string::npos);
  auto back = utf16le_to_utf8(*u);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, name);
}

TEST(Utf16, RejectsInvalid) {
  EXPECT_FALSE(utf8_to_utf16le("\xC3(").ok());
  Bytes odd = from_hex("410042");
  EXPECT_FALSE(utf16le_to_utf8(odd).ok());
  Bytes lone = from_hex("00d8");  // lone high surrogate
  EXPECT_FALSE(utf16le_to_utf8(lone).ok());
  EXPECT_TRUE(utf8_to_utf16le("").ok());
}

TEST(Utf16, AsciiIsWidenedAndNarrowed) {
  auto u = utf8_to_utf16le(std::string("a.B~\x7f\0z", 7));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(to_hex(*u), "61002e0042007e007f0000007a00");
  auto back = utf16le_to_utf8(*u);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, std::string("a.B~\x7f\0z", 7));
  // A code unit with a high byte is not ASCII: U+0141 is not 'A'.
  auto l = utf16le_to_utf8(from_hex("4101"));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, "\xC5\x81");
}

TEST(Utf16, ConvertsAfterAFailureAndOnEveryThread) {
  // The converters are kept per thread: a failed conversion must not leave
  // state that spoils the next one.
  auto check = [] {
    for (int i = 0; i < 3; i++) {
      EXPECT_FALSE(utf8_to_utf16le("\xE6\x96").ok());  // cut in the middle of a character
      auto u = utf8_to_utf16le("\xE6\x96\x87");
      ASSERT_TRUE(u.ok());
      EXPECT_EQ(to_hex(*u), "8765");
      EXPECT_FALSE(utf16le_to_utf8(from_hex("00d8")).ok());
      auto b = utf16le_to_utf8(from_hex("8765"));
      ASSERT_TRUE(b.ok());
      EXPECT_EQ(*b, "\xE6\x96\x87");
    }
  };
  check();
  std::thread t(check);
  t.join();
}

}  // namespace
}  // namespace smbkit
