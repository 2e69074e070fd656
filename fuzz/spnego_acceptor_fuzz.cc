// Fuzzes the SPNEGO acceptor (RFC 4178, MS-SPNG): the input as the client's
// first token, and as its second token after the fixed first round of our
// initiator (fuzz_acceptors.h), then once more in whatever state follows.
// Invariant: a completed exchange with mechListMIC verified has keys.
#include <cstddef>
#include <cstdint>

#include "auth/spnego_initiator.h"
#include "fuzz_acceptors.h"

using namespace smbkit;
using namespace smbkit::auth;

namespace {

void check(const SpnegoNtlmAcceptor& a) {
  if (a.mech_list_mic_verified() && a.session_key().empty()) __builtin_trap();
  if (a.complete() && a.outcome() != NtlmOutcome::authenticated && !a.session_key().empty())
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(reinterpret_cast<const std::byte*>(data), size);

  auto a = fuzz::spnego_acceptor();
  if (a.next_token(in, fuzz::kNow).ok()) (void)a.next_token(in, fuzz::kNow);
  check(a);

  SpnegoNtlmOptions o;
  o.random = fuzz::fixed_random;
  SpnegoNtlmClient c({"User", "Password", "Domain", ""}, o);
  auto b = fuzz::spnego_acceptor();
  if (!b.next_token(c.initial_token(), fuzz::kNow).ok()) __builtin_trap();
  if (b.next_token(in, fuzz::kNow).ok()) (void)b.next_token(in, fuzz::kNow);
  check(b);
  return 0;
}
