#include "cli/progress.h"

#include <fmt/format.h>

#include <cstdio>

namespace smbkit::cli {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

std::string human_rate(double bytes, double seconds) {
  if (seconds <= 0) return "-";
  return fmt::format("{:.1f} MB/s", bytes / seconds / 1e6);
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
  double pct = total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  int width = 24, fill = static_cast<int>(pct / 100.0 * width);
  std::string bar(static_cast<size_t>(fill), '=');
  if (fill < width) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');
  double s = seconds();
  std::string line = fmt::format("\r{:3.0f}% [{}] {} / {}  {}  {}", pct, bar,
                                 human_bytes(static_cast<double>(done)),
                                 human_bytes(static_cast<double>(total_)),
                                 human_rate(static_cast<double>(done), s), label_);
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
