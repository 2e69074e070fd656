// Sessions with fixed keys for the receive-path fuzz targets.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "auth/sealing.h"
#include "auth/signing.h"
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

// msg as a peer would send it, by how & 3: as is (0), signed with s's
// signing key (1), or sealed with seal_key for s's session (2, 3; nonce
// counts up). nullopt: it could not be sealed.
inline std::optional<Bytes> shape_frame(uint8_t how, Bytes msg, const session::SessionSecurity& s, ByteView seal_key,
                                        uint64_t& nonce) {
  switch (how & 3) {
    case 0:
      return msg;
    case 1:
      if (msg.size() >= proto::kHeaderSize) (void)auth::sign_message(s.sign_alg, s.signing_key, msg);
      return msg;
    default: {
      std::byte n[12] = {};
      store_le64(n, nonce++);
      ByteView pieces[1] = {msg};
      auto sealed = auth::encrypt_message(s.cipher, seal_key, s.session_id, ByteView(n, 12), pieces);
      if (!sealed) return std::nullopt;
      return std::move(*sealed);
    }
  }
}

}  // namespace smbkit::fuzz
