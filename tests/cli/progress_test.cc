// The progress line's text and the sizes and rates transfers report.
#include "cli/progress.h"

#include <gtest/gtest.h>

using namespace smbkit::cli;

constexpr uint64_t MiB = 1024 * 1024;

TEST(Progress, SizesAndRatesInBinaryUnits) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(3.0 * 1024 * MiB), "3.0 GiB");
  EXPECT_EQ(human_rate(100.0 * MiB, 2.0), "50.0 MiB/s");
  EXPECT_EQ(human_rate(2048.0 * MiB, 1.0), "2.0 GiB/s");
}

TEST(Progress, NoRateForWhatIsTooSmallToMeasure) {
  EXPECT_EQ(human_rate(12, 0.003), "-");
  EXPECT_EQ(human_rate(100.0 * 1024, 1.0), "-");  // under 1 MiB
  EXPECT_EQ(human_rate(100.0 * MiB, 0.001), "-");
  // A small file's line: no rate, no ETA.
  std::string t = progress_text("a.txt", 12, 12, 12, 0.01);
  EXPECT_EQ(t.find("/s"), std::string::npos) << t;
  EXPECT_EQ(t.find("ETA"), std::string::npos) << t;
}

TEST(Progress, DoneAndTotalShareTheTotalsUnit) {
  std::string t = progress_text("big.bin", 512 * MiB, 2048 * MiB, 512 * MiB, 4.0);
  EXPECT_NE(t.find(" 25% ["), std::string::npos) << t;
  EXPECT_NE(t.find("] 0.5 GiB / 2.0 GiB"), std::string::npos) << t;
  EXPECT_NE(t.find("  128.0 MiB/s"), std::string::npos) << t;
  // 1.5 GiB left at 128 MiB/s: 12 s.
  EXPECT_NE(t.find("ETA 0:12"), std::string::npos) << t;
  EXPECT_NE(t.find("  big.bin"), std::string::npos) << t;
}

TEST(Progress, AResumedTransferCountsWhatItMoved) {
  // 1 GiB were there; this run moved 100 MiB in 2 s of the 2 GiB file.
  std::string t = progress_text("r.bin", 1024 * MiB + 100 * MiB, 2048 * MiB, 100 * MiB, 2.0);
  EXPECT_NE(t.find(" 55% ["), std::string::npos) << t;
  EXPECT_NE(t.find("  50.0 MiB/s"), std::string::npos) << t;
  Progress p("r.bin", 2048 * MiB, false);
  p.set_start(1024 * MiB);
  p.update(1124 * MiB);
  EXPECT_EQ(p.moved(), 100 * MiB);
}

TEST(Progress, EtaText) {
  EXPECT_EQ(eta_text(7), "0:07");
  EXPECT_EQ(eta_text(754), "12:34");
  EXPECT_EQ(eta_text(3723), "1:02:03");
}
