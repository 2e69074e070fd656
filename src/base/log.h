// Minimal leveled logging to stderr. The protocol trace (-v) goes through
// here; secrets must never be passed to it.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace smbkit::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3, trace = 4 };

void set_level(Level l);
Level level();
bool enabled(Level l);
void write(Level l, std::string_view msg);

template <class... A>
void at(Level l, fmt::format_string<A...> f, A&&... a) {
  if (enabled(l)) write(l, fmt::format(f, std::forward<A>(a)...));
}

}  // namespace smbkit::log

#define SMBKIT_LOG(lvl, ...) \
  do { if (::smbkit::log::enabled(::smbkit::log::Level::lvl)) ::smbkit::log::at(::smbkit::log::Level::lvl, __VA_ARGS__); } while (0)
