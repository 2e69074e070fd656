// The FILETIME <-> timespec conversion (MS-DTYP 2.3.3), exact both ways.
#include <gtest/gtest.h>

#include "proto/types.h"

namespace smbkit::proto {
namespace {

TEST(Filetime, TheUnixEpoch) {
  timespec t = filetime_to_timespec(kFiletimeUnixEpoch);
  EXPECT_EQ(t.tv_sec, 0);
  EXPECT_EQ(t.tv_nsec, 0);
  EXPECT_EQ(timespec_to_filetime({0, 0}), kFiletimeUnixEpoch);
}

TEST(Filetime, AfterTheEpochTo100Nanoseconds) {
  // 2026-12-01T00:00:00.1234567Z
  const timespec ts{1796083200, 123456700};
  const uint64_t ft = timespec_to_filetime(ts);
  EXPECT_EQ(ft, kFiletimeUnixEpoch + 1796083200ull * 10000000ull + 1234567);
  timespec back = filetime_to_timespec(ft);
  EXPECT_EQ(back.tv_sec, ts.tv_sec);
  EXPECT_EQ(back.tv_nsec, ts.tv_nsec);
}

TEST(Filetime, BeforeTheEpochIsNotClamped) {
  // 1960-01-01T00:00:00.5Z: tv_sec -315619200, tv_nsec 500000000.
  const timespec ts{-315619200, 500000000};
  const uint64_t ft = timespec_to_filetime(ts);
  EXPECT_EQ(ft, kFiletimeUnixEpoch - 315619200ull * 10000000ull + 5000000);
  timespec back = filetime_to_timespec(ft);
  EXPECT_EQ(back.tv_sec, ts.tv_sec);
  EXPECT_EQ(back.tv_nsec, ts.tv_nsec);
  // Half a second before the epoch: seconds round down, nanoseconds stay
  // non-negative.
  timespec half = filetime_to_timespec(kFiletimeUnixEpoch - 5000000);
  EXPECT_EQ(half.tv_sec, -1);
  EXPECT_EQ(half.tv_nsec, 500000000);
}

TEST(Filetime, NeverTheSpecialValues) {
  // 0 means "leave unchanged" in SET_INFO (MS-FSCC 2.4.7): a time before
  // 1601 is the earliest one instead.
  EXPECT_EQ(timespec_to_filetime({-20000000000LL, 0}), 1u);
  EXPECT_EQ(timespec_to_filetime({-11644473600LL, 0}), 1u);
  // Beyond what a FILETIME holds: the latest one.
  EXPECT_EQ(timespec_to_filetime({INT64_MAX / 2, 0}), static_cast<uint64_t>(INT64_MAX));
  EXPECT_GT(filetime_to_timespec(UINT64_MAX).tv_sec, 0);
}

}  // namespace
}  // namespace smbkit::proto
