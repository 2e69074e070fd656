#include <cstddef>
#include <cstdint>

#include "proto/header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  smbkit::ByteView in(reinterpret_cast<const std::byte*>(data), size);
  auto h = smbkit::proto::decode_header(in);
  if (h.ok()) {
    smbkit::Bytes out;
    smbkit::ByteWriter w(out);
    smbkit::proto::encode_header(*h, w);
    if (out.size() != 64) __builtin_trap();
  }
  return 0;
}
