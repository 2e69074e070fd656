// Small wire types shared by several commands.
#pragma once

#include <compare>
#include <cstdint>
#include <algorithm>
#include <climits>
#include <ctime>

namespace smbkit::proto {

// MS-SMB2 2.2.14.1: SMB2_FILEID.
struct FileId {
  uint64_t Persistent = 0;
  uint64_t Volatile = 0;
  bool operator==(const FileId&) const = default;
  auto operator<=>(const FileId&) const = default;
};
// The FileId that means "the file created earlier in this compound"
// (MS-SMB2 3.2.4.1.4).
inline constexpr FileId kRelatedFileId{~0ull, ~0ull};

// MS-DTYP 2.3.3 FILETIME: 100 ns ticks since 1601-01-01 UTC.
// The one conversion between FILETIME and timespec, exact both ways, times
// before 1970 included (a negative tv_sec, as Linux keeps them).
inline constexpr uint64_t kFiletimeUnixEpoch = 116444736000000000ull;
inline constexpr int64_t kFiletimeTicksPerSecond = 10000000;
inline timespec filetime_to_timespec(uint64_t ft) {
  // A FILETIME is a signed 64-bit count (MS-DTYP 2.3.3): larger values are
  // not times; they read as the latest one.
  const __int128 ticks = static_cast<__int128>(std::min<uint64_t>(ft, INT64_MAX)) - kFiletimeUnixEpoch;
  __int128 sec = ticks / kFiletimeTicksPerSecond, rem = ticks % kFiletimeTicksPerSecond;
  if (rem < 0) {  // round toward minus infinity: tv_nsec is never negative
    sec -= 1;
    rem += kFiletimeTicksPerSecond;
  }
  return timespec{static_cast<time_t>(sec), static_cast<long>(rem * 100)};
}
// Never 0 (in SET_INFO, MS-FSCC 2.4.7, 0 means "leave unchanged" and -1
// "stop updating"): a time before 1601 becomes the earliest, one tick.
inline uint64_t timespec_to_filetime(timespec ts) {
  const __int128 ticks = static_cast<__int128>(ts.tv_sec) * kFiletimeTicksPerSecond + ts.tv_nsec / 100 +
                         static_cast<__int128>(kFiletimeUnixEpoch);
  if (ticks < 1) return 1;
  if (ticks > INT64_MAX) return INT64_MAX;
  return static_cast<uint64_t>(ticks);
}

}  // namespace smbkit::proto
