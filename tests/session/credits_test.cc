#include "session/credits.h"

#include <gtest/gtest.h>

namespace smbkit::session {
namespace {

TEST(Credits, ChargeFollowsSpecFormula) {
  EXPECT_EQ(credit_charge_for(0), 1);
  EXPECT_EQ(credit_charge_for(1), 1);
  EXPECT_EQ(credit_charge_for(65536), 1);
  EXPECT_EQ(credit_charge_for(65537), 2);
  EXPECT_EQ(credit_charge_for(1u << 20), 16);
  EXPECT_EQ(credit_charge_for(8u << 20), 128);
}

TEST(Credits, SingleCreditWithoutLargeMtu) {
  CreditWindow w;
  EXPECT_EQ(w.charge(1u << 20), 1);
  w.set_multi_credit(true);
  EXPECT_EQ(w.charge(1u << 20), 16);
}

TEST(Credits, RequestGrowsTowardsTargetAndReplacesUse) {
  CreditWindow w;
  w.grant(9);  // 10 available
  EXPECT_EQ(w.request_for(1, 10), 1);  // at target: replace what we use
  EXPECT_GT(w.request_for(1, 512), 1);
  EXPECT_LE(w.request_for(1, 100000), 1 + 256);
  uint64_t mid = w.consume(4);
  EXPECT_EQ(mid, 0u);
  EXPECT_EQ(w.next_message_id(), 4u);
  EXPECT_EQ(w.available(), 6u);
}

}  // namespace
}  // namespace smbkit::session
