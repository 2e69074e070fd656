// MemoryBudget (src/fuse/memory_budget.h): the limit, fair shares between
// holders, forced charges, and release.
#include "fuse/memory_budget.h"

#include <gtest/gtest.h>

namespace {

using smbkit::fuse::MemoryBudget;

constexpr uint64_t MiB = 1ull << 20;

TEST(MemoryBudget, ALoneHolderMayUseAllOfIt) {
  MemoryBudget b(8 * MiB);
  int a = 0;
  for (int i = 0; i < 8; i++) EXPECT_TRUE(b.try_charge(&a, MiB)) << i;
  EXPECT_FALSE(b.try_charge(&a, MiB));
  EXPECT_EQ(b.used(), 8 * MiB);
  b.release(&a, MiB);
  EXPECT_TRUE(b.try_charge(&a, MiB));
}

TEST(MemoryBudget, ASecondHolderGetsTheFreedRoomUntilSharesAreEqual) {
  MemoryBudget b(8 * MiB);
  int a = 0, c = 0;
  for (int i = 0; i < 8; i++) ASSERT_TRUE(b.try_charge(&a, MiB));
  EXPECT_FALSE(b.try_charge(&c, MiB));  // full; c now counts for the shares
  b.release(&a, 2 * MiB);               // a's reader consumed two chunks
  // a holds 6 of 8 with two holders (share 4): the room goes to c.
  EXPECT_FALSE(b.try_charge(&a, MiB));
  EXPECT_TRUE(b.try_charge(&c, MiB));
  EXPECT_TRUE(b.try_charge(&c, MiB));
  EXPECT_EQ(b.holders(), 2u);
  b.release(&a, 2 * MiB);  // a at 4, c at 2: c may grow to its share of 4
  EXPECT_TRUE(b.try_charge(&c, MiB));
  EXPECT_TRUE(b.try_charge(&c, MiB));
  EXPECT_FALSE(b.try_charge(&c, MiB));
  EXPECT_EQ(b.used(), 8 * MiB);
}

TEST(MemoryBudget, ForcedChargesAlwaysPassAndBlockTheRestUntilBelowTheLimit) {
  MemoryBudget b(2 * MiB);
  int a = 0, c = 0;
  ASSERT_TRUE(b.try_charge(&a, 2 * MiB));
  EXPECT_TRUE(b.try_charge(&c, MiB, true));
  EXPECT_EQ(b.used(), 3 * MiB);
  EXPECT_EQ(b.peak(), 3 * MiB);
  EXPECT_FALSE(b.try_charge(&c, MiB));
  b.release(&a, 2 * MiB);
  EXPECT_EQ(b.used(), MiB);
  EXPECT_TRUE(b.try_charge(&a, MiB));  // a's share with two holders: 1 MiB
  EXPECT_FALSE(b.try_charge(&a, MiB));
  EXPECT_EQ(b.peak(), 3 * MiB);
}

TEST(MemoryBudget, ReleaseDropsTheHolderAndNeverGoesBelowZero) {
  MemoryBudget b(4 * MiB);
  int a = 0, c = 0;
  ASSERT_TRUE(b.try_charge(&a, MiB));
  ASSERT_TRUE(b.try_charge(&c, MiB));
  EXPECT_EQ(b.holders(), 2u);
  b.release(&a, 5 * MiB);  // more than it holds: only what it holds
  EXPECT_EQ(b.used(), MiB);
  EXPECT_EQ(b.holders(), 1u);
  b.release(&a, MiB);  // not a holder any more: nothing
  EXPECT_EQ(b.used(), MiB);
}

TEST(MemoryBudget, AForgottenHolderNoLongerCounts) {
  MemoryBudget b(8 * MiB);
  int a = 0, c = 0;
  ASSERT_TRUE(b.try_charge(&a, 8 * MiB));
  EXPECT_FALSE(b.try_charge(&c, MiB));  // c contends
  b.release(&a, 4 * MiB);
  EXPECT_FALSE(b.try_charge(&a, MiB));  // a is at its share of 4
  b.forget(&c);                         // c's file closed
  EXPECT_TRUE(b.try_charge(&a, MiB));
  b.forget(&a);
  EXPECT_EQ(b.used(), 0u);
  EXPECT_EQ(b.holders(), 0u);
}

TEST(MemoryBudget, ZeroMeansNoLimitButStillCounts) {
  MemoryBudget b(0);
  int a = 0;
  for (int i = 0; i < 100; i++) ASSERT_TRUE(b.try_charge(&a, 64 * MiB));
  EXPECT_EQ(b.used(), 6400 * MiB);
  EXPECT_EQ(b.peak(), 6400 * MiB);
}

}  // namespace
