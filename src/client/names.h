// Names that come from a server are data, not paths: what may become one
// local path component, and how to show any name on a terminal.
#pragma once

#include <string>
#include <string_view>

namespace smbkit::client {

// Why `name` (a directory entry's FileName, MS-FSCC 2.4, after UTF-16
// decoding) cannot be used as one component of a local path, or nullptr
// if it can: empty, ".", "..", or containing '/', '\\' (the SMB path
// separator, MS-FSCC 2.1.5) or NUL (which would cut a C string short).
// Control characters are allowed: a Linux file name may hold them, and
// escape_for_display keeps them off the terminal.
const char* entry_name_problem(std::string_view name);

// `s` with everything a terminal could act on made visible: C0 controls
// and DEL as \xNN, C1 controls (U+0080..U+009F, the 8-bit CSI among them)
// and the bidirectional and line-separator formatting characters as
// \uNNNN, bytes that are not valid UTF-8 as \xNN, and a backslash
// doubled (so the escaped form is unambiguous). Printable UTF-8 passes
// unchanged.
std::string escape_for_display(std::string_view s);

// The same for a whole message that mixes names with our own text (error
// lines): a backslash is left as it is, everything else as above.
std::string escape_controls(std::string_view s);

}  // namespace smbkit::client
