// Pure helpers behind `smbkit bench`: size parsing, the verification data
// pattern, a bounded latency histogram with percentiles, a small PRNG for
// random offsets, and JSON string escaping. No I/O; unit tested in
// tests/cli/bench_util_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::cli::bench {

// "4096", "4k", "4K", "4KiB", "1M", "8MB", "1G", "2T": binary units
// (k = 1024). A fraction is allowed with a unit ("1.5G") as long as the
// result is a whole number of bytes. Errors name the input.
Result<uint64_t> parse_size(std::string_view s);
// The shortest exact form: 4096 -> "4k", 1048576 -> "1M", 1000 -> "1000".
std::string format_size(uint64_t bytes);

enum class Mode { seqread, seqwrite, randread, randwrite };
const char* mode_name(Mode m);
bool is_read(Mode m);
bool is_random(Mode m);
// One name or a comma-separated list ("seqwrite,seqread"); repeats are kept
// (they run again). Empty items are refused.
Result<std::vector<Mode>> parse_modes(std::string_view s);

// The verification pattern: the little-endian 8-byte word at every
// 8-aligned file offset o is o ^ seed. Works for any offset and length
// (a buffer may start or end mid-word).
void fill_pattern(uint64_t file_offset, MutableByteView buf, uint64_t seed);
// The file offset of the first byte of buf that differs from the pattern,
// or nothing if all match.
std::optional<uint64_t> check_pattern(uint64_t file_offset, ByteView buf, uint64_t seed);
// The pattern byte at a file offset (for error messages).
uint8_t pattern_byte(uint64_t file_offset, uint64_t seed);

// Latencies in nanoseconds in a log-linear histogram: exact below 128 ns,
// then 128 sub-buckets per power of two (relative error under 0.8%), so
// memory stays fixed however long a run lasts. The maximum, minimum, count
// and mean are exact.
class LatencyHistogram {
 public:
  LatencyHistogram();
  void record(uint64_t ns);
  void merge(const LatencyHistogram& o);
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // Nearest-rank percentile, p in [0, 100]: the smallest recorded value v
  // such that at least p% of samples are <= v, to the histogram's
  // resolution (the bucket's midpoint, clamped to [min, max]). 0 when empty.
  uint64_t percentile(double p) const;

  static constexpr int kSubBits = 7;  // 128 sub-buckets
  static size_t bucket_of(uint64_t ns);
  static uint64_t bucket_low(size_t b);
  static uint64_t bucket_high(size_t b);  // inclusive

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0, max_ = 0, min_ = UINT64_MAX;
  uint64_t sum_ = 0;  // ns: overflows after 584 years of samples
};

// splitmix64: deterministic offsets for the random modes.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next();
  // Uniform in [0, n) (n > 0), without modulo bias.
  uint64_t below(uint64_t n);

 private:
  uint64_t s_;
};

// The contents of a JSON string literal (without the quotes).
std::string json_escape(std::string_view s);

}  // namespace smbkit::cli::bench
