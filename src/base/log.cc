#include "base/log.h"

#include <atomic>
#include <cstdio>

#include "base/mutex.h"

namespace smbkit::log {
namespace {
std::atomic<int> g_level{static_cast<int>(Level::warn)};
// A leaf: one line at a time on stderr.
Mutex g_mu;
}  // namespace

void set_level(Level l) { g_level = static_cast<int>(l); }
Level level() { return static_cast<Level>(g_level.load()); }
bool enabled(Level l) { return static_cast<int>(l) <= g_level.load(std::memory_order_relaxed); }

void write(Level l, std::string_view msg) {
  static const char* names[] = {"error", "warn", "info", "debug", "trace"};
  MutexLock g(g_mu);
  std::fprintf(stderr, "smbkit[%s] %.*s\n", names[static_cast<int>(l)], static_cast<int>(msg.size()), msg.data());
}

}  // namespace smbkit::log
