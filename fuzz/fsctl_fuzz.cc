// Fuzzes the FSCTL buffers behind fallocate and SEEK_DATA/SEEK_HOLE
// (proto/fsctl_fscc.h). The first 16 bytes are the range asked about, the
// rest the server's QUERY_ALLOCATED_RANGES output; what decodes must hold
// the promises a seek relies on and re-encode to the same bytes. The same
// bytes also go through the single-structure decoders, and through the
// decoder of a server's interface list (proto/ioctl.h), whose entries a
// multichannel client connects to.
#include <cstddef>
#include <cstdint>

#include "proto/fsctl_fscc.h"
#include "proto/ioctl.h"

using namespace smbkit;
using namespace smbkit::proto;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte *>(data), size);
  if (auto z = decode_zero_data(in); z.ok()) {
    auto e = encode_zero_data(*z);
    if (!e.ok() || *e != Bytes(in.begin(), in.end())) __builtin_trap();
  }
  (void)decode_set_sparse(in);
  if (auto l = decode_network_interface_info(in); l.ok()) {
    // Each entry takes at least its fixed size: the list is bounded by
    // the bytes received.
    if (l->empty() || l->size() > size / kNetworkInterfaceInfoSize) __builtin_trap();
    for (const auto &i : *l)
      if (i.Address.size() != 4 && i.Address.size() != 16) __builtin_trap();
  }
  if (size < kFileAllocatedRangeBufferSize) return 0;
  auto asked = decode_allocated_range(in.first(kFileAllocatedRangeBufferSize));
  if (!asked.ok()) return 0;
  ByteView out = in.subspan(kFileAllocatedRangeBufferSize);
  auto ranges = decode_allocated_ranges(out, *asked);
  if (!ranges.ok()) return 0;
  uint64_t prev_end = 0;
  for (const auto &r : *ranges) {
    if (r.Length == 0 || r.FileOffset < prev_end || r.end() > kMaxFileOffset) __builtin_trap();
    if (r.FileOffset >= asked->end() || r.end() <= asked->FileOffset) __builtin_trap();
    prev_end = r.end();
  }
  if (encode_allocated_ranges(*ranges) != Bytes(out.begin(), out.end())) __builtin_trap();
  return 0;
}
