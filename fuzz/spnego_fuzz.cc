// Fuzzes the DER reader and the SPNEGO decoders (RFC 4178, MS-SPNG), and
// drives SpnegoNtlmClient with arbitrary server tokens.
#include <cstddef>
#include <cstdint>

#include "auth/der.h"
#include "auth/spnego_initiator.h"

using namespace smbkit;
using namespace smbkit::auth;

namespace {

// Walks every constructed element; the reader bounds the depth.
void walk(der::Reader r) {
  while (!r.empty()) {
    auto t = r.next();
    if (!t.ok()) return;
    if (t->constructed()) {
      auto in = r.enter(*t);
      if (in.ok()) walk(*in);
      else if (r.depth() + 1 <= der::kMaxDepth) __builtin_trap();
    } else if (t->tag == der::kTagOid) {
      if (auto o = der::decode_oid(t->value); o.ok()) {
        auto back = der::oid_from_string(o->to_string());
        if (!back.ok() || *back != *o) __builtin_trap();
      }
    }
  }
}

void fixed_random(MutableByteView v) {
  for (auto& b : v) b = std::byte{0x42};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte*>(data), size);
  walk(der::Reader(in));

  if (auto init = decode_neg_token_init(in); init.ok()) {
    Bytes enc = encode_neg_token_init(init->mechTypes, init->mechToken.value_or(Bytes{}));
    auto again = decode_neg_token_init(enc);
    if (!again.ok() || again->mechTypes != init->mechTypes) __builtin_trap();
  }
  if (auto resp = decode_neg_token_resp(in); resp.ok()) {
    auto again = decode_neg_token_resp(encode_neg_token_resp(*resp));
    if (!again.ok() || again->negState != resp->negState ||
        again->supportedMech != resp->supportedMech ||
        again->responseToken != resp->responseToken || again->mechListMIC != resp->mechListMIC)
      __builtin_trap();
  }

  SpnegoNtlmOptions o;
  o.random = fixed_random;
  SpnegoNtlmClient c({"User", "Password", "Domain", "WS"}, o);
  (void)c.check_server_hint(in);
  c.initial_token();
  if (c.next_token(in, 0).ok()) {
    (void)c.next_token(in, 0);
    (void)c.next_token(in, 0);
  }
  return 0;
}
