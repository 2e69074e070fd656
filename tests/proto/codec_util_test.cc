#include "proto/codec_util.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Rules 1 and 2, both forms, with the error texts the codecs have always
// produced.
TEST(CodecUtil, FixedPartChecks) {
  Bytes msg = with_body(header_bytes(), "0400 0000");
  EXPECT_TRUE(check_body(msg, 4, 4, "X").ok());
  EXPECT_EQ(check_body(ByteView(msg).first(67), 4, 4, "X").error().context, "X: truncated");
  EXPECT_EQ(check_body(msg, 5, 4, "X").error().context, "X: wrong StructureSize");
  auto r = body_reader(msg, 4, 4, "X");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pos(), kHeaderSize + 2);

  EXPECT_TRUE(check_empty_body(msg, "X").ok());
  EXPECT_EQ(check_empty_body(ByteView(msg).first(67), "X").error().context, "X truncated");
  EXPECT_EQ(check_empty_body(patched(msg, 64, "0500"), "X").error().context,
            "X StructureSize is not 4");
  EXPECT_EQ(check_empty_body(ByteView(msg).first(67), "X").error().status,
            STATUS_INVALID_NETWORK_RESPONSE);
}

// Rule 3: an empty buffer's offset is ignored; otherwise after the fixed
// part and inside the message.
TEST(CodecUtil, BodyBuffer) {
  Bytes msg = with_body(header_bytes(), "0900 4800 0300 0000 aabbcc");  // fixed part: 8 bytes
  auto b = body_buffer(msg, 72, 3, 8, "X", "Offset/Length");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(to_hex(*b), "aabbcc");
  EXPECT_EQ(b->data(), msg.data() + 72);  // a view
  EXPECT_EQ(to_hex(*copy_body_buffer(msg, 73, 2, 8, "X", "Offset/Length")), "bbcc");
  EXPECT_TRUE(body_buffer(msg, 0xFFFF, 0, 8, "X", "Offset/Length")->empty());
  EXPECT_EQ(body_buffer(msg, 71, 1, 8, "X", "Offset/Length").error().context,
            "X Offset/Length out of range");
  EXPECT_FALSE(body_buffer(msg, 72, 4, 8, "X", "Offset/Length").ok());
  EXPECT_FALSE(body_buffer(msg, ~0ull, ~0ull, 8, "X", "Offset/Length").ok());
}

// Rule 4: elements start 8-aligned; header and data must fit.
TEST(CodecUtil, WalkAlignedList) {
  // Two elements of a 2-byte header (length) and that many data bytes.
  Bytes buf = from_hex("0100 aa 0000000000 0200 bbcc");
  std::vector<std::string> seen;
  auto read = [&](ByteReader& r) {
    uint16_t len = r.u16();
    seen.push_back(to_hex(r.bytes(len)));
    return len;
  };
  ASSERT_TRUE(walk_aligned_list(buf, 0, 2, 2, "x", "the buffer", read).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"aa", "bbcc"}));
  EXPECT_EQ(walk_aligned_list(buf, 0, 3, 2, "x", "the buffer", read).error().context,
            "x list overruns the buffer");
  EXPECT_EQ(walk_aligned_list(patched(buf, 8, "0300"), 0, 2, 2, "x", "the buffer", read)
                .error()
                .context,
            "x data overruns the buffer");
  EXPECT_TRUE(walk_aligned_list(buf, 3, 0, 2, "x", "the buffer", read).ok());  // count 0
}

struct Sample {
  uint8_t A = 0;
  uint16_t B = 0;
  uint32_t C = 0;
  uint64_t D = 0;
  std::array<std::byte, 16> G{};
  FileId F;
  bool operator==(const Sample&) const = default;
};
constexpr auto kSampleFields = [](auto& io, auto& v) {
  io.u8(v.A);
  io.reserved(1);
  io.u16(v.B);
  io.u32(v.C);
  io.u64(v.D);
  io.guid(v.G);
  io.file_id(v.F);
};

// One field list writes and reads the same layout.
TEST(CodecUtil, FieldLists) {
  Sample s{1, 0x0302, 0x07060504, 0x0f0e0d0c0b0a0908, {}, FileId{0x11, 0x22}};
  s.G[0] = std::byte{0xab};
  Bytes b = write_fields(s, 48, kSampleFields);
  EXPECT_EQ(to_hex(b),
            "01" "00" "0203" "04050607" "08090a0b0c0d0e0f"
            "ab000000000000000000000000000000"
            "1100000000000000" "2200000000000000");
  Sample back;
  read_fields(b, back, kSampleFields);
  EXPECT_EQ(back, s);
  EXPECT_TRUE(decode_fixed_info(b, 48, "Sample", back, kSampleFields).ok());
  EXPECT_EQ(decode_fixed_info(ByteView(b).first(47), 48, "Sample", back, kSampleFields)
                .error()
                .context,
            "Sample: buffer too short");
}

}  // namespace
}  // namespace smbkit::proto
