// LostWrites (src/fuse/lost_writes.h): when a write-back failure for want
// of space asks for the file to be cut back to what landed, and when not.
// The cut itself (a SET_INFO) is exercised against real servers by
// FaultsCache.DiskFullMountReportsENOSPCAndKeepsEarlierFiles.
#include "fuse/lost_writes.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace {

using smbkit::fuse::LostWrites;

constexpr uint64_t MiB = 1ull << 20;

TEST(LostWrites, ALaterStretchLandingAfterAnEarlierFailedAsksForACut) {
  LostWrites l(0);
  EXPECT_FALSE(l.landed(4 * MiB));
  EXPECT_TRUE(l.lost(4 * MiB, 8 * MiB));  // any part of the failed WRITE may be there
  EXPECT_TRUE(l.landed(16 * MiB));        // landed out of order, past the hole
}

TEST(LostWrites, AFailureAfterEverythingElseLandedAsksForACutToo) {
  LostWrites l(0);
  EXPECT_FALSE(l.landed(12 * MiB));
  EXPECT_FALSE(l.landed(16 * MiB));
  EXPECT_TRUE(l.lost(8 * MiB, 12 * MiB));
}

TEST(LostWrites, AShortWriteIsCutAtTheBytesThatDidNotLand) {
  LostWrites l(0);
  EXPECT_FALSE(l.landed(1 * MiB));
  // A WRITE of [1, 2) MiB took half: the first half is a prefix, kept.
  EXPECT_TRUE(l.lost(MiB + MiB / 2, 2 * MiB));
  LostWrites m(0);
  EXPECT_FALSE(m.landed(MiB + MiB / 2));
  EXPECT_FALSE(m.lost(MiB + MiB / 2, MiB + MiB / 2));  // refused, nothing past it: no cut
}

TEST(LostWrites, WritesRefusedAfterAFailureLowerTheCut) {
  LostWrites l(0);
  EXPECT_TRUE(l.lost(8 * MiB, 12 * MiB));
  // Write-behind refuses a write at 2 MiB once it knows of the failure:
  // those bytes are not on the server either.
  EXPECT_TRUE(l.lost(2 * MiB, 2 * MiB));
}

TEST(LostWrites, BytesTheFileHadBeforeAreNeverCut) {
  LostWrites l(10 * MiB);
  EXPECT_FALSE(l.lost(4 * MiB, 8 * MiB));  // an overwrite inside the old file failed
  EXPECT_FALSE(l.landed(16 * MiB));
  LostWrites m(10 * MiB);
  EXPECT_TRUE(m.lost(10 * MiB, 12 * MiB));  // from the old end on, it was ours
}

TEST(LostWrites, OnlyWantOfSpaceCounts) {
  EXPECT_TRUE(LostWrites::out_of_space(smbkit::sys_error(ENOSPC)));
  EXPECT_TRUE(LostWrites::out_of_space(smbkit::sys_error(EDQUOT)));
  EXPECT_TRUE(LostWrites::out_of_space(smbkit::nt_error(smbkit::STATUS_DISK_FULL)));
  EXPECT_FALSE(LostWrites::out_of_space(smbkit::nt_error(smbkit::STATUS_ACCESS_DENIED)));
  EXPECT_FALSE(LostWrites::out_of_space(smbkit::sys_error(EIO)));
}

TEST(LostWrites, RecordTellsTheOutcomesApart) {
  LostWrites l(0);
  EXPECT_FALSE(l.record(0, MiB, size_t{MiB}));                                       // landed
  EXPECT_FALSE(l.record(MiB, MiB, smbkit::nt_error(smbkit::STATUS_ACCESS_DENIED)));  // not for want of space
  EXPECT_FALSE(l.record(3 * MiB, MiB, size_t{MiB}));
  EXPECT_TRUE(l.record(2 * MiB, MiB, size_t{MiB / 2}));  // short: lost from 2.5 MiB, data past it
  LostWrites m(0);
  EXPECT_TRUE(m.record(0, MiB, smbkit::nt_error(smbkit::STATUS_DISK_FULL)));
}

}  // namespace
