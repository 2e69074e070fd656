#include "proto/wildcard.h"

#include <vector>

namespace smbkit::proto {

namespace {

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Memoised over (pattern position, name position): patterns and names are
// at most one component long, so the table stays small.
class Matcher {
 public:
  Matcher(std::string_view name, std::string_view pat)
      : n_(name), p_(pat), memo_((pat.size() + 1) * (name.size() + 1), kUnknown) {
    last_dot_ = name.rfind('.');
  }
  bool run() { return match(0, 0); }

 private:
  static constexpr unsigned char kUnknown = 2;

  bool match(size_t pi, size_t ni) {
    unsigned char& m = memo_[pi * (n_.size() + 1) + ni];
    if (m == kUnknown) m = compute(pi, ni) ? 1 : 0;
    return m == 1;
  }

  bool compute(size_t pi, size_t ni) {
    const bool at_end = ni == n_.size();
    if (pi == p_.size()) return at_end;
    switch (p_[pi]) {
      case '*':
        return match(pi + 1, ni) || (!at_end && match(pi, ni + 1));
      case '?':
        return !at_end && match(pi + 1, ni + 1);
      case '<':  // DOS_STAR: never consumes the name's last '.'
        return match(pi + 1, ni) || (!at_end && ni != last_dot_ && match(pi, ni + 1));
      case '>':  // DOS_QM
        if (at_end || n_[ni] == '.') return match(pi + 1, ni);
        return match(pi + 1, ni + 1);
      case '"':  // DOS_DOT
        if (at_end) return match(pi + 1, ni);
        return n_[ni] == '.' && match(pi + 1, ni + 1);
      default:
        return !at_end && fold(p_[pi]) == fold(n_[ni]) && match(pi + 1, ni + 1);
    }
  }

  std::string_view n_, p_;
  std::vector<unsigned char> memo_;
  size_t last_dot_ = std::string_view::npos;
};

}  // namespace

bool is_in_expression(std::string_view name, std::string_view pattern) {
  if (pattern.empty() || pattern == "*") return true;
  if (pattern.size() > kMaxPatternLength) return false;
  return Matcher(name, pattern).run();
}

}  // namespace smbkit::proto
