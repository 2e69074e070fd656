// Small wire types shared by several commands.
#pragma once

#include <compare>
#include <cstdint>
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
inline constexpr uint64_t kFiletimeUnixEpoch = 116444736000000000ull;
inline timespec filetime_to_timespec(uint64_t ft) {
  if (ft < kFiletimeUnixEpoch) return timespec{0, 0};
  uint64_t t = ft - kFiletimeUnixEpoch;
  return timespec{static_cast<time_t>(t / 10000000ull), static_cast<long>((t % 10000000ull) * 100)};
}
inline uint64_t timespec_to_filetime(timespec ts) {
  if (ts.tv_sec < 0) return 0;
  return kFiletimeUnixEpoch + static_cast<uint64_t>(ts.tv_sec) * 10000000ull +
         static_cast<uint64_t>(ts.tv_nsec) / 100;
}

}  // namespace smbkit::proto
