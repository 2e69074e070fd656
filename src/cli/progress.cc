#include "cli/progress.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

namespace smbkit::cli {

namespace {

constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
constexpr double kMinRateBytes = 1024.0 * 1024.0;

int unit_of(double b) {
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  return u;
}

std::string in_unit(double b, int u) {
  if (u == 0) return fmt::format("{:.0f} B", b);
  return fmt::format("{:.1f} {}", b / std::pow(1024.0, u), kUnits[u]);
}

}  // namespace

std::string human_bytes(double b) { return in_unit(b, unit_of(b)); }

std::string human_rate(double bytes, double seconds) {
  if (seconds < 0.01 || bytes < kMinRateBytes) return "-";
  return human_bytes(bytes / seconds) + "/s";
}

std::string eta_text(double s) {
  auto t = static_cast<uint64_t>(std::llround(std::max(0.0, s)));
  if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
  return fmt::format("{}:{:02}", t / 60, t % 60);
}

std::string progress_text(const std::string& label, uint64_t done, uint64_t total, uint64_t moved, double seconds) {
  double pct = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  if (pct > 100) pct = 100;
  const int width = 24;
  int fill = static_cast<int>(pct / 100.0 * width);
  std::string bar(static_cast<size_t>(fill), '=');
  if (fill < width) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');
  // done and total in one unit, the total's: "0.5 GiB / 3.0 GiB".
  int u = unit_of(static_cast<double>(total));
  std::string line = fmt::format("{:3.0f}% [{}] {} / {}", pct, bar, in_unit(static_cast<double>(done), u),
                                 in_unit(static_cast<double>(total), u));
  if (seconds >= 1.0 && static_cast<double>(moved) >= kMinRateBytes) {
    double rate = static_cast<double>(moved) / seconds;
    line += fmt::format("  {}", human_rate(static_cast<double>(moved), seconds));
    if (done < total) line += fmt::format("  ETA {}", eta_text(static_cast<double>(total - done) / rate));
  }
  line += fmt::format("  {}", label);
  return line;
}

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled) {
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(100) && done < total_) return;
  last_ = now;
  std::string line = progress_text(label_, done, total_, moved(), seconds());
  std::fputs("\r", stderr);
  std::fputs(line.c_str(), stderr);
  std::fputs("\x1b[K", stderr);
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (enabled_) std::fputs("\r\x1b[K", stderr);
}

}  // namespace smbkit::cli
