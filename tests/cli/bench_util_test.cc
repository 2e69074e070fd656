#include "cli/bench_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace smbkit::cli::bench {
namespace {

TEST(BenchSize, Parses) {
  EXPECT_EQ(*parse_size("0"), 0u);
  EXPECT_EQ(*parse_size("4096"), 4096u);
  EXPECT_EQ(*parse_size("4k"), 4096u);
  EXPECT_EQ(*parse_size("4K"), 4096u);
  EXPECT_EQ(*parse_size("4KiB"), 4096u);
  EXPECT_EQ(*parse_size("4kb"), 4096u);
  EXPECT_EQ(*parse_size("1M"), 1u << 20);
  EXPECT_EQ(*parse_size("8M"), 8u << 20);
  EXPECT_EQ(*parse_size("8MB"), 8u << 20);
  EXPECT_EQ(*parse_size("1G"), 1ull << 30);
  EXPECT_EQ(*parse_size("2T"), 2ull << 40);
  EXPECT_EQ(*parse_size("1.5G"), 3ull << 29);
  EXPECT_EQ(*parse_size("0.5k"), 512u);
  EXPECT_EQ(*parse_size("512B"), 512u);
  EXPECT_EQ(*parse_size("16383T"), 16383ull << 40);
}

TEST(BenchSize, Rejects) {
  for (const char* s : {"", "k", "M", "-1", "1X", "1 M", " 1M", "1M ", "1.M.", "1Mi", "1iB", "1.3",
                        "0.1k", "99999999999999999999", "16777216T", "1.0000000000001k", "1e6"})
    EXPECT_FALSE(parse_size(s).ok()) << s;
  auto e = parse_size("12Q");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("12Q"), std::string::npos);
}

TEST(BenchSize, Formats) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(4096), "4k");
  EXPECT_EQ(format_size(1u << 20), "1M");
  EXPECT_EQ(format_size(3u << 29), "1536M");
  EXPECT_EQ(format_size(1ull << 30), "1G");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(6144), "6k");
  for (uint64_t v : std::initializer_list<uint64_t>{1, 4096, 65537, 8ull << 20, 5ull << 40})
    EXPECT_EQ(*parse_size(format_size(v)), v);
}

TEST(BenchModes, Parses) {
  auto m = parse_modes("seqwrite,seqread");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, (std::vector<Mode>{Mode::seqwrite, Mode::seqread}));
  m = parse_modes("randread");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, std::vector<Mode>{Mode::randread});
  m = parse_modes("randwrite,randwrite");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 2u);
  for (const char* bad : {"", "seq", "seqread,", ",seqread", "read", "SEQREAD", "seqread,,seqwrite"})
    EXPECT_FALSE(parse_modes(bad).ok()) << bad;
  EXPECT_TRUE(is_read(Mode::seqread));
  EXPECT_TRUE(is_read(Mode::randread));
  EXPECT_FALSE(is_read(Mode::seqwrite));
  EXPECT_TRUE(is_random(Mode::randwrite));
  EXPECT_FALSE(is_random(Mode::seqread));
  EXPECT_STREQ(mode_name(Mode::randwrite), "randwrite");
}

TEST(BenchPattern, WordsAreOffsetXorSeed) {
  const uint64_t seed = 0x0123456789abcdefull;
  Bytes b(32);
  fill_pattern(4096, b, seed);
  for (size_t w = 0; w < 4; w++) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | std::to_integer<uint64_t>(b[w * 8 + static_cast<size_t>(k)]);
    EXPECT_EQ(v, (4096 + w * 8) ^ seed);
  }
  EXPECT_FALSE(check_pattern(4096, b, seed).has_value());
  EXPECT_EQ(*check_pattern(4096, b, seed + 1), 4096u);  // low byte differs
}

TEST(BenchPattern, UnalignedPiecesMatchTheWhole) {
  const uint64_t seed = 0xfeedfacecafebeefull;
  Bytes whole(1000);
  fill_pattern(0, whole, seed);
  for (size_t start : {0u, 1u, 3u, 7u, 8u, 13u, 500u}) {
    for (size_t len : {0u, 1u, 5u, 8u, 9u, 31u, 400u}) {
      if (start + len > whole.size()) continue;
      Bytes piece(len);
      fill_pattern(start, piece, seed);
      EXPECT_TRUE(std::equal(piece.begin(), piece.end(), whole.begin() + static_cast<long>(start)))
          << start << "+" << len;
      EXPECT_FALSE(check_pattern(start, ByteView(whole).subspan(start, len), seed).has_value());
    }
  }
  for (uint64_t off = 0; off < 40; off++) EXPECT_EQ(std::byte{pattern_byte(off, seed)}, whole[off]);
}

TEST(BenchPattern, FindsTheFirstBadByte) {
  const uint64_t seed = 42;
  Bytes b(4096);
  fill_pattern(1 << 20, b, seed);
  for (size_t bad : {0u, 1u, 7u, 8u, 9u, 1000u, 4095u}) {
    Bytes c = b;
    c[bad] ^= std::byte{0x10};
    auto at = check_pattern(1 << 20, c, seed);
    ASSERT_TRUE(at.has_value()) << bad;
    EXPECT_EQ(*at, (1u << 20) + bad);
    // Unaligned start.
    auto at2 = check_pattern((1 << 20) + 3, ByteView(c).subspan(3), seed);
    if (bad >= 3) {
      ASSERT_TRUE(at2.has_value());
      EXPECT_EQ(*at2, (1u << 20) + bad);
    }
  }
  // Data from another offset (a misplaced block) does not pass.
  Bytes other(4096);
  fill_pattern(0, other, seed);
  EXPECT_TRUE(check_pattern(4096, other, seed).has_value());
}

TEST(BenchHistogram, Buckets) {
  for (uint64_t v : std::initializer_list<uint64_t>{0, 1, 127, 128, 129, 255, 256, 1000, 123456789,
                     (1ull << 40) + 12345, UINT64_MAX}) {
    size_t b = LatencyHistogram::bucket_of(v);
    EXPECT_LE(LatencyHistogram::bucket_low(b), v) << v;
    EXPECT_GE(LatencyHistogram::bucket_high(b), v) << v;
    // Width stays under 1/128 of the value.
    EXPECT_LE(LatencyHistogram::bucket_high(b) - LatencyHistogram::bucket_low(b), v / 128) << v;
  }
  // Buckets tile the line without gaps.
  for (size_t b = 0; b + 1 < 2000; b++)
    EXPECT_EQ(LatencyHistogram::bucket_high(b) + 1, LatencyHistogram::bucket_low(b + 1)) << b;
}

TEST(BenchHistogram, Percentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_EQ(h.count(), 0u);
  // 1..100 µs: nearest-rank p50 = 50 µs, p90 = 90 µs, p99 = 99 µs.
  for (uint64_t i = 1; i <= 100; i++) h.record(i * 1000);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.min(), 1000u);
  EXPECT_EQ(h.max(), 100000u);
  EXPECT_DOUBLE_EQ(h.mean(), 50500.0);
  auto near = [](uint64_t got, uint64_t want) {
    return std::abs(static_cast<double>(got) - static_cast<double>(want)) <= static_cast<double>(want) / 128;
  };
  EXPECT_TRUE(near(h.percentile(50), 50000)) << h.percentile(50);
  EXPECT_TRUE(near(h.percentile(90), 90000)) << h.percentile(90);
  EXPECT_TRUE(near(h.percentile(99), 99000)) << h.percentile(99);
  EXPECT_EQ(h.percentile(100), 100000u);
  EXPECT_EQ(h.percentile(0), 1000u);
  // Small values are exact.
  LatencyHistogram s;
  for (uint64_t v : {5, 1, 4, 2, 3}) s.record(v);
  EXPECT_EQ(s.percentile(50), 3u);
  EXPECT_EQ(s.percentile(20), 1u);
  EXPECT_EQ(s.percentile(21), 2u);
  EXPECT_EQ(s.percentile(99), 5u);
  // One sample: every percentile is that sample.
  LatencyHistogram one;
  one.record(777777);
  for (double p : {1.0, 50.0, 99.0, 100.0}) EXPECT_EQ(one.percentile(p), 777777u);
}

TEST(BenchHistogram, Merge) {
  LatencyHistogram a, b;
  for (uint64_t i = 0; i < 10; i++) a.record(100);
  for (uint64_t i = 0; i < 10; i++) b.record(1000000);
  a.merge(b);
  EXPECT_EQ(a.count(), 20u);
  EXPECT_EQ(a.min(), 100u);
  EXPECT_EQ(a.max(), 1000000u);
  EXPECT_EQ(a.percentile(50), 100u);
  EXPECT_EQ(a.percentile(51), 1000000u);
}

TEST(BenchRng, DeterministicAndBounded) {
  SplitMix64 a(1), b(1), c(2);
  for (int i = 0; i < 100; i++) EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(SplitMix64(1).next(), c.next());
  // Known first output of splitmix64 with seed 0.
  SplitMix64 z(0);
  EXPECT_EQ(z.next(), 0xe220a8397b1dcdafull);
  SplitMix64 r(7);
  std::vector<int> seen(10, 0);
  for (int i = 0; i < 10000; i++) {
    uint64_t v = r.below(10);
    ASSERT_LT(v, 10u);
    seen[v]++;
  }
  for (int n : seen) EXPECT_GT(n, 0);
  EXPECT_EQ(r.below(1), 0u);
}

TEST(BenchJson, Escapes) {
  EXPECT_EQ(json_escape("smb://u@h/s/a b"), "smb://u@h/s/a b");
  EXPECT_EQ(json_escape("a\"b\\c\n\t\x01"), "a\\\"b\\\\c\\n\\t\\u0001");
  EXPECT_EQ(json_escape("é"), "é");
}

}  // namespace
}  // namespace smbkit::cli::bench
