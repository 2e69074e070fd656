// Fuzzes the MS-DTYP security descriptor decoder (QUERY_INFO/SET_INFO
// security buffers, the SecD create context, the stored xattr): whatever
// decodes must encode and decode again to the same descriptor.
#include <cstddef>
#include <cstdint>

#include "proto/security_descriptor.h"

using namespace smbkit;
using namespace smbkit::proto;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView buf(reinterpret_cast<const std::byte*>(data), size);
  auto sd = decode_security_descriptor(buf);
  if (!sd.ok()) return 0;
  auto enc = encode_security_descriptor(*sd);
  if (!enc.ok()) return 0;
  auto again = decode_security_descriptor(*enc);
  if (!again.ok()) __builtin_trap();
  // Control keeps the bits as sent; the parts must be the same.
  if (again->owner != sd->owner || again->group != sd->group || again->dacl != sd->dacl || again->sacl != sd->sacl ||
      again->null_dacl != sd->null_dacl)
    __builtin_trap();
  return 0;
}
