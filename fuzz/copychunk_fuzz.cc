// Fuzzes the server-side copy buffer decoders (proto/copychunk.h) on the
// same input, taken as an IOCTL Input or Output buffer. A successful
// decode re-encodes to bytes that decode to the same value.
#include <cstddef>
#include <cstdint>

#include "proto/copychunk.h"

using namespace smbkit;
using namespace smbkit::proto;

namespace {

template <class Dec, class Enc>
void check(ByteView in, Dec dec, Enc enc) {
  auto d = dec(in);
  if (!d.ok()) return;
  auto e = enc(*d);
  if (!e.ok()) __builtin_trap();
  auto again = dec(ByteView(*e));
  if (!again.ok() || !(*again == *d)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte*>(data), size);
  check(in, decode_resume_key_response, encode_resume_key_response);
  check(in, decode_copychunk_copy, encode_copychunk_copy);
  check(in, decode_copychunk_response, encode_copychunk_response);
  return 0;
}
