// The fixed server side the acceptor fuzz targets (and their seed corpus)
// share: names, account database, challenge randomness and time. Fixed, so
// that a seed AUTHENTICATE made against this CHALLENGE verifies and the
// fuzzer starts from the deepest paths (MIC, key exchange, mechListMIC).
#pragma once

#include <algorithm>

#include "auth/ntlm_acceptor.h"
#include "auth/spnego_acceptor.h"

namespace smbkit::auth::fuzz {

inline constexpr uint64_t kNow = 0x01d9a1b2c3d4e5f6ull;
inline constexpr std::byte kServerChallenge[8] = {std::byte{1}, std::byte{2}, std::byte{3},
                                                  std::byte{4}, std::byte{5}, std::byte{6},
                                                  std::byte{7}, std::byte{8}};

inline NtlmAcceptorOptions names() {
  NtlmAcceptorOptions o;
  o.nb_computer_name = "SMBKITD";
  o.nb_domain_name = "WORKGROUP";
  o.dns_computer_name = "smbkitd.example";
  return o;
}

// One account: User / Domain / "Password" (the MS-NLMP 4.2.4 example's).
inline NtHashLookup lookup() {
  return [](std::string_view user, std::string_view domain) -> std::optional<NtHash> {
    if (user != "User" || domain != "Domain") return std::nullopt;
    static const Bytes h = ntowf_v1("Password").value();
    NtHash out;
    std::copy_n(h.begin(), out.size(), out.begin());
    return out;
  };
}

inline void fixed_random(MutableByteView v) {
  for (size_t i = 0; i < v.size(); i++) v[i] = kServerChallenge[i % sizeof kServerChallenge];
}

inline SpnegoNtlmAcceptor spnego_acceptor() {
  SpnegoNtlmAcceptorOptions o;
  o.ntlm = names();
  o.random = fixed_random;
  return SpnegoNtlmAcceptor(std::move(o), lookup());
}

}  // namespace smbkit::auth::fuzz
