// MS-FSA 2.1.4.4 (Algorithm for Determining if a FileName Is in an
// Expression): the QUERY_DIRECTORY search pattern. '*' any run, '?' one
// character, and the DOS wildcards: '<' (DOS_STAR: any run up to the
// name's last '.'), '>' (DOS_QM: one character, or none before a '.' or
// the end) and '"' (DOS_DOT: a '.', or nothing at the end). Letters
// compare without ASCII case, as Windows clients expect of patterns.
#pragma once

#include <string_view>

namespace smbkit::proto {

// The longest pattern accepted: one name component.
inline constexpr size_t kMaxPatternLength = 255;

bool is_in_expression(std::string_view name, std::string_view pattern);

}  // namespace smbkit::proto
