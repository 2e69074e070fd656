// UTF-8 <-> UTF-16LE for names on the wire (MS-SMB2 uses UTF-16LE
// everywhere). ASCII directly, the rest through glibc iconv (one
// descriptor per thread and direction); invalid input is an error.
#pragma once

#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit {

Result<Bytes> utf8_to_utf16le(std::string_view utf8);
Result<std::string> utf16le_to_utf8(ByteView utf16);

}  // namespace smbkit
