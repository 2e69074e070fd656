// Fuzzes the NTLMSSP decoders (MS-NLMP 2.2.1.x, 2.2.2.1, 2.2.2.8) and feeds
// arbitrary CHALLENGE_MESSAGEs into NtlmClient::authenticate_message.
// Invariant checked: a decoded message re-encodes to a stable form.
#include <cstddef>
#include <cstdint>

#include "auth/ntlm_initiator.h"

using namespace smbkit;
using namespace smbkit::auth;

namespace {

template <class Dec, class Enc>
void round_trip(ByteView in, Dec dec, Enc enc) {
  auto m = dec(in);
  if (!m.ok()) return;
  Bytes once = enc(*m);
  auto again = dec(once);
  if (!again.ok()) __builtin_trap();
  if (enc(*again) != once) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte*>(data), size);
  round_trip(in, decode_negotiate_message, encode_negotiate_message);
  round_trip(in, decode_challenge_message, encode_challenge_message);
  round_trip(in, decode_authenticate_message, encode_authenticate_message);
  if (auto p = decode_av_pairs(in); p.ok()) {
    if (decode_av_pairs(encode_av_pairs(*p)).value() != *p) __builtin_trap();
  }
  (void)decode_ntlmv2_response(in);

  static const std::byte cc[8] = {std::byte{0xaa}};
  static const std::byte key[16] = {std::byte{0x55}};
  NtlmClient c({"User", "Password", "Domain", "WS"});
  c.negotiate_message();
  auto auth = c.authenticate_message(in, 0x01d9000000000000ull, cc, key);
  if (auth.ok()) {
    auto m = decode_authenticate_message(*auth);
    if (!m.ok()) __builtin_trap();
    if (c.mic_sent() && !m->MIC) __builtin_trap();
  }
  NtlmClient anon({"", "", "", ""});
  anon.negotiate_message();
  (void)anon.authenticate_message(in, 0, cc, key);
  return 0;
}
