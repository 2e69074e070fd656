#include "cli/bench_util.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace smbkit::cli::bench {

namespace {

Error bad_size(std::string_view s, const char* why) {
  return nt_error(STATUS_INVALID_PARAMETER, "size '" + std::string(s) + "': " + why);
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }

inline uint64_t to_le(uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(v);
  return v;
}

}  // namespace

Result<uint64_t> parse_size(std::string_view s) {
  size_t i = 0;
  uint64_t whole = 0, frac = 0, frac_scale = 1;
  bool digits = false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (mul_overflows(whole, 10, whole) || __builtin_add_overflow(whole, uint64_t(s[i] - '0'), &whole))
      return bad_size(s, "too large");
    digits = true;
    i++;
  }
  bool has_point = i < s.size() && s[i] == '.';
  if (has_point) {
    i++;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (frac_scale >= 1000000000000ull) return bad_size(s, "too many decimals");
      frac = frac * 10 + uint64_t(s[i] - '0');
      frac_scale *= 10;
      digits = true;
      i++;
    }
  }
  if (!digits) return bad_size(s, "expected a number with an optional unit (k, M, G, T)");
  uint64_t mult = 1;
  if (i < s.size()) {
    switch (s[i]) {
      case 'k': case 'K': mult = 1ull << 10; i++; break;
      case 'm': case 'M': mult = 1ull << 20; i++; break;
      case 'g': case 'G': mult = 1ull << 30; i++; break;
      case 't': case 'T': mult = 1ull << 40; i++; break;
      default: break;
    }
    if (mult > 1 && s.substr(i, 2) == "iB") i += 2;
    else if (i < s.size() && (s[i] == 'B' || s[i] == 'b')) i++;
  }
  if (i != s.size()) return bad_size(s, "expected a number with an optional unit (k, M, G, T)");
  uint64_t v;
  if (mul_overflows(whole, mult, v)) return bad_size(s, "too large");
  if (frac) {
    // frac / frac_scale * mult must be a whole number of bytes.
    unsigned __int128 f = static_cast<unsigned __int128>(frac) * mult;
    if (f % frac_scale) return bad_size(s, "not a whole number of bytes");
    uint64_t add = static_cast<uint64_t>(f / frac_scale);
    if (__builtin_add_overflow(v, add, &v)) return bad_size(s, "too large");
  }
  return v;
}

std::string format_size(uint64_t b) {
  static const struct {
    int shift;
    const char* unit;
  } units[] = {{40, "T"}, {30, "G"}, {20, "M"}, {10, "k"}};
  if (b == 0) return "0";
  for (auto& u : units)
    if ((b & ((1ull << u.shift) - 1)) == 0) return std::to_string(b >> u.shift) + u.unit;
  return std::to_string(b);
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::seqread: return "seqread";
    case Mode::seqwrite: return "seqwrite";
    case Mode::randread: return "randread";
    case Mode::randwrite: return "randwrite";
  }
  return "?";
}
bool is_read(Mode m) { return m == Mode::seqread || m == Mode::randread; }
bool is_random(Mode m) { return m == Mode::randread || m == Mode::randwrite; }

Result<std::vector<Mode>> parse_modes(std::string_view s) {
  std::vector<Mode> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    bool found = false;
    for (Mode m : {Mode::seqread, Mode::seqwrite, Mode::randread, Mode::randwrite})
      if (item == mode_name(m)) {
        out.push_back(m);
        found = true;
      }
    if (!found)
      return nt_error(STATUS_INVALID_PARAMETER,
                      "mode '" + std::string(item) + "': expected seqread, seqwrite, randread or randwrite");
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

uint8_t pattern_byte(uint64_t off, uint64_t seed) {
  uint64_t w = (off & ~uint64_t{7}) ^ seed;
  return static_cast<uint8_t>(w >> (8 * (off & 7)));
}

void fill_pattern(uint64_t off, MutableByteView buf, uint64_t seed) {
  size_t i = 0, n = buf.size();
  std::byte* p = buf.data();
  while (i < n && ((off + i) & 7)) {
    p[i] = std::byte{pattern_byte(off + i, seed)};
    i++;
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w = to_le((off + i) ^ seed);
    std::memcpy(p + i, &w, 8);
  }
  for (; i < n; i++) p[i] = std::byte{pattern_byte(off + i, seed)};
}

std::optional<uint64_t> check_pattern(uint64_t off, ByteView buf, uint64_t seed) {
  size_t i = 0, n = buf.size();
  const std::byte* p = buf.data();
  while (i < n && ((off + i) & 7)) {
    if (p[i] != std::byte{pattern_byte(off + i, seed)}) return off + i;
    i++;
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w != to_le((off + i) ^ seed)) break;  // find the byte below
  }
  for (; i < n; i++)
    if (p[i] != std::byte{pattern_byte(off + i, seed)}) return off + i;
  return std::nullopt;
}

// Buckets: [0, 128) exact; then for each power of two 2^e (e >= 7), 128
// sub-buckets of width 2^(e-7).
size_t LatencyHistogram::bucket_of(uint64_t v) {
  constexpr uint64_t kSub = 1u << kSubBits;
  if (v < kSub) return static_cast<size_t>(v);
  int e = 63 - std::countl_zero(v);
  int shift = e - kSubBits;
  uint64_t sub = (v >> shift) - kSub;  // [0, 128)
  return static_cast<size_t>(kSub + static_cast<uint64_t>(shift) * kSub + sub);
}

uint64_t LatencyHistogram::bucket_low(size_t b) {
  constexpr uint64_t kSub = 1u << kSubBits;
  if (b < kSub) return b;
  uint64_t shift = (b - kSub) / kSub, sub = (b - kSub) % kSub;
  return (kSub + sub) << shift;
}

uint64_t LatencyHistogram::bucket_high(size_t b) {
  constexpr uint64_t kSub = 1u << kSubBits;
  if (b < kSub) return b;
  uint64_t shift = (b - kSub) / kSub;
  return bucket_low(b) + ((uint64_t{1} << shift) - 1);
}

LatencyHistogram::LatencyHistogram() : buckets_(bucket_of(UINT64_MAX) + 1, 0) {}

void LatencyHistogram::record(uint64_t ns) {
  buckets_[bucket_of(ns)]++;
  count_++;
  sum_ += ns;
  max_ = std::max(max_, ns);
  min_ = std::min(min_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t i = 0; i < buckets_.size(); i++) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  max_ = std::max(max_, o.max_);
  min_ = std::min(min_, o.min_);
}

uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min_;
  if (p >= 100) return max_;
  // Nearest rank: the ceil(p/100 * n)-th smallest sample.
  auto rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(count_) / 100.0));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t b = 0; b < buckets_.size(); b++) {
    seen += buckets_[b];
    if (seen >= rank) {
      uint64_t lo = bucket_low(b), hi = bucket_high(b);
      uint64_t mid = lo + (hi - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

uint64_t SplitMix64::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t n) {
  // Rejection sampling: drop the top partial range.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do v = next();
  while (v >= limit);
  return v % n;
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  return out;
}

}  // namespace smbkit::cli::bench
