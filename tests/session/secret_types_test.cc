// Every holder of a session key or password keeps it in a type that wipes
// it when freed. The wiping itself is tested in
// tests/base/secret_test.cc; this pins down who uses it, so a field turned
// back into plain Bytes or std::string fails here.
#include <gtest/gtest.h>

#include <type_traits>

#include "auth/keys.h"
#include "auth/ntlm_initiator.h"
#include "base/secret.h"
#include "session/client_machine.h"

namespace smbkit {
namespace {

template <class A, class B>
constexpr bool same = std::is_same_v<A, B>;

TEST(SecretTypes, SessionKeysAreWiped) {
  using S = session::SessionSecurity;
  EXPECT_TRUE((same<decltype(S::signing_key), SecretBytes>));
  EXPECT_TRUE((same<decltype(S::seal_key), SecretBytes>));
  EXPECT_TRUE((same<decltype(S::unseal_key), SecretBytes>));
  EXPECT_TRUE((same<decltype(session::FrameTransform::key), SecretBytes>));
  EXPECT_TRUE((same<decltype(session::ClientMachine::UnsealKey::key), SecretBytes>));
  using K = auth::SessionKeys;
  EXPECT_TRUE((same<decltype(K::signing_key), SecretBytes>));
  EXPECT_TRUE((same<decltype(K::client_to_server_key), SecretBytes>));
  EXPECT_TRUE((same<decltype(K::server_to_client_key), SecretBytes>));
  EXPECT_TRUE((same<decltype(K::application_key), SecretBytes>));
}

TEST(SecretTypes, NtlmPasswordIsWiped) {
  EXPECT_TRUE((same<decltype(auth::NtlmCredentials::password), SecretString>));
}

// Derivation still gives the published keys through the wiping type
// (MS-SMB2 3.0 example values, as keys_test.cc).
TEST(SecretTypes, SessionSecurityTakesDerivedKeys) {
  auto k = auth::derive_session_keys(0x0300, 0, from_hex("7CD451825D0450D235424E44BA6E78CC"), {});
  session::SessionSecurity s;
  s.signing_key = k.signing_key;
  Bytes plain = s.signing_key;  // an API wanting Bytes still gets them
  EXPECT_EQ(to_hex(plain), "0b7e9c5cac36c0f6ea9ab275298cedce");
  EXPECT_EQ(s.signing_key.size(), 16u);
}

}  // namespace
}  // namespace smbkit
