// Sessions with fixed keys for the receive-path fuzz targets.
#pragma once

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

}  // namespace smbkit::fuzz
