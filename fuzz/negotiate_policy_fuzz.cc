// The client's negotiate and session-setup policy driven by hostile server
// answers (client/negotiate_policy.h), with an oracle: what is accepted
// is only ever something we offered or asked for.
//
// Input: [offer bits][ask bits][SessionFlags lo][hi][key/server bits]
// then a NEGOTIATE response message (header and body) to decode.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "client/negotiate_policy.h"
#include "proto/constants.h"
#include "proto/negotiate.h"

using namespace smbkit;
using namespace smbkit::proto;

namespace {
bool in(const std::vector<uint16_t>& v, uint16_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  uint8_t offer_bits = data[0], ask_bits = data[1];
  uint16_t flags = static_cast<uint16_t>(data[2] | (data[3] << 8));
  uint8_t misc = data[4];

  // A subset of the dialects, ciphers and signing algorithms, as --vers and
  // restricted options would offer.
  client::NegotiateOffer offer;
  const uint16_t dialects[] = {SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300, SMB2_DIALECT_0302,
                               SMB2_DIALECT_0311};
  for (int i = 0; i < 5; i++)
    if (offer_bits & (1 << i)) offer.dialects.push_back(dialects[i]);
  if (offer_bits & 0x20) offer.ciphers = {AES_128_GCM};
  else offer.ciphers = {AES_128_GCM, AES_128_CCM, AES_256_GCM, AES_256_CCM};
  if (offer_bits & 0x40) offer.signing_algorithms = {AES_CMAC};
  else offer.signing_algorithms = {AES_GMAC, AES_CMAC, HMAC_SHA256};

  auto nr = decode_negotiate_response(ByteView(reinterpret_cast<const std::byte*>(data + 5), size - 5));
  if (nr) {
    auto s = client::settle_negotiate(offer, *nr);
    if (s) {
      if (!in(offer.dialects, s->dialect)) __builtin_trap();
      if (s->dialect == SMB2_DIALECT_0311) {
        if (s->cipher != 0 && !in(offer.ciphers, s->cipher)) __builtin_trap();
        if (s->signing_algorithm != AES_CMAC && !in(offer.signing_algorithms, s->signing_algorithm))
          __builtin_trap();
      }
    }
  }

  client::SessionAsk ask;
  ask.anonymous = ask_bits & 1;
  ask.allow_guest = ask_bits & 2;
  ask.require_signing = ask_bits & 4;
  ask.require_encryption = ask_bits & 8;
  auto k = client::settle_session(ask, flags, misc & 1, misc & 2, misc & 4);
  if (k) {
    // A named user is never silently a guest or nobody.
    if (!ask.anonymous && !ask.allow_guest && (k->guest || k->anonymous)) __builtin_trap();
    // What was asked for is what the session does.
    if (ask.require_signing && !(k->has_key && (k->signing_required || k->encrypt))) __builtin_trap();
    if (ask.require_encryption && !k->encrypt) __builtin_trap();
    if (k->encrypt && !k->has_key) __builtin_trap();
    // A server that requires signing gets it from every keyed session.
    if ((misc & 2) && k->has_key && !k->signing_required) __builtin_trap();
  }
  return 0;
}
