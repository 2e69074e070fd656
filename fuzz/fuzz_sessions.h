// Sessions with fixed keys for the receive-path fuzz targets.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "session/client_machine.h"

namespace smbkit::fuzz {

// AES-GMAC signing and AES-128-GCM sealing keys derived from `seed`.
inline session::SessionSecurity keyed_session(uint64_t id, bool signing_required, bool encrypt_data, uint8_t seed) {
  session::SessionSecurity s;
  s.session_id = id;
  s.signing_required = signing_required;
  s.encrypt_data = encrypt_data;
  s.sign_alg = auth::SignAlg::aes_gmac;
  s.signing_key = Bytes(16, std::byte{seed});
  s.cipher = proto::AES_128_GCM;
  s.seal_key = Bytes(16, std::byte(seed + 1));
  s.unseal_key = Bytes(16, std::byte(seed + 2));
  return s;
}

// The frames of a fuzz input laid out as [mode][len lo][len hi][len
// bytes]...: each frame's mode byte and message (cut at the input's end).
inline std::vector<std::pair<uint8_t, Bytes>> split_frames(const uint8_t* data, size_t size) {
  std::vector<std::pair<uint8_t, Bytes>> out;
  size_t off = 0;
  while (off + 3 <= size) {
    uint8_t mode = data[off];
    size_t len = data[off + 1] | (size_t{data[off + 2]} << 8);
    off += 3;
    len = std::min(len, size - off);
    out.emplace_back(mode, Bytes(reinterpret_cast<const std::byte*>(data + off),
                                 reinterpret_cast<const std::byte*>(data + off + len)));
    off += len;
  }
  return out;
}

}  // namespace smbkit::fuzz
