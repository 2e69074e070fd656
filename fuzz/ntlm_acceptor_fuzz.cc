// Fuzzes the NTLMSSP acceptor (MS-NLMP 3.2.5): arbitrary NEGOTIATE messages
// into challenge_message, arbitrary AUTHENTICATE messages into the
// verification after the fixed CHALLENGE of fuzz_acceptors.h.
// Invariants: only an authenticated outcome carries a 16-byte session key;
// the class and the pure verification agree.
#include <cstddef>
#include <cstdint>

#include "auth/ntlm_initiator.h"
#include "fuzz_acceptors.h"

using namespace smbkit;
using namespace smbkit::auth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte*>(data), size);

  NtlmAcceptor first(fuzz::names(), fuzz::lookup());
  if (auto c = first.challenge_message(in, fuzz::kNow, fuzz::kServerChallenge); c.ok()) {
    if (!decode_challenge_message(*c).ok()) __builtin_trap();
  }

  static const Bytes neg = NtlmClient({"User", "Password", "Domain", ""}).negotiate_message();
  NtlmAcceptor a(fuzz::names(), fuzz::lookup());
  Bytes chal = a.challenge_message(neg, fuzz::kNow, fuzz::kServerChallenge).value();
  auto r = a.authenticate(in);
  auto pure = ntlm_verify_authenticate(neg, chal, in, fuzz::lookup());
  if (r.ok() != pure.ok()) __builtin_trap();
  if (r.ok()) {
    bool keyed = *r == NtlmOutcome::authenticated;
    if (keyed != (a.session_key().size() == kSessionKeySize)) __builtin_trap();
    if (!keyed && !a.keys().ClientSigningKey.empty()) __builtin_trap();
  } else if (!r.error().is(STATUS_LOGON_FAILURE) && !r.error().is(STATUS_INVALID_PARAMETER)) {
    __builtin_trap();
  }
  return 0;
}
