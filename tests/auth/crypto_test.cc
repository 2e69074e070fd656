// Known-answer tests for the OpenSSL wrappers. Every expected value below is
// from the RFC named next to it (not from this implementation).
#include "auth/crypto.h"

#include <gtest/gtest.h>

#include <string>

namespace smbkit::auth {
namespace {

std::string hex(const Bytes& b) { return to_hex(b); }
Bytes rep(uint8_t v, size_t n) { return Bytes(n, std::byte{v}); }

// RFC 1320 appendix A.5.
TEST(Crypto, Md4Rfc1320) {
  ASSERT_TRUE(legacy_provider_available());
  EXPECT_EQ(hex(md4(as_bytes(""))), "31d6cfe0d16ae931b73c59d7e0c089c0");
  EXPECT_EQ(hex(md4(as_bytes("a"))), "bde52cb31de33e46245e05fbdbd6fb24");
  EXPECT_EQ(hex(md4(as_bytes("abc"))), "a448017aaf21d8525fc10ae87aa6729d");
  EXPECT_EQ(hex(md4(as_bytes("message digest"))), "d9130a8164549fe818874806e1c7014b");
  EXPECT_EQ(hex(md4(as_bytes("abcdefghijklmnopqrstuvwxyz"))), "d79e1c308aa5bbcdeea8ed63df412da9");
  EXPECT_EQ(hex(md4(as_bytes("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))),
            "043f8582f241db351ce627e153e7f0e4");
  std::string digits;
  for (int i = 0; i < 8; i++) digits += "1234567890";
  EXPECT_EQ(hex(md4(as_bytes(digits))), "e33b4ddc9c38f2199c3e7b164fcc0536");
}

// RFC 1321 appendix A.5.
TEST(Crypto, Md5Rfc1321) {
  EXPECT_EQ(hex(md5(as_bytes(""))), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(hex(md5(as_bytes("a"))), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(hex(md5(as_bytes("abc"))), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(hex(md5(as_bytes("message digest"))), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(hex(md5(as_bytes("abcdefghijklmnopqrstuvwxyz"))), "c3fcd3d76192e4007dfb496cca67e13b");
  std::string digits;
  for (int i = 0; i < 8; i++) digits += "1234567890";
  EXPECT_EQ(hex(md5(as_bytes(digits))), "57edf4a22be3c955ac49da2e2107b67a");
}

// FIPS 180-2 appendix B/C ("abc" and the two-block message).
TEST(Crypto, Sha2Fips180) {
  EXPECT_EQ(hex(sha256(as_bytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha512(as_bytes("abc"))),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
  EXPECT_EQ(hex(sha512(as_bytes("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                                "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"))),
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
            "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
}

TEST(Crypto, Sha512Incremental) {
  Sha512 h;
  h.update(as_bytes("a"));
  h.update(as_bytes(""));
  h.update(as_bytes("bc"));
  Bytes d = h.final();
  EXPECT_EQ(d, sha512(as_bytes("abc")));
  // final() resets: the object hashes a fresh message next.
  h.update(as_bytes("abc"));
  EXPECT_EQ(h.final(), d);
  Sha512 moved = std::move(h);
  moved.update(as_bytes("abc"));
  EXPECT_EQ(moved.final(), d);
}

// RFC 2104 appendix (test vectors also in RFC 2202 section 2).
TEST(Crypto, HmacMd5Rfc2104) {
  EXPECT_EQ(hex(hmac_md5(rep(0x0b, 16), as_bytes("Hi There"))), "9294727a3638bb1c13f48ef8158bfc9d");
  EXPECT_EQ(hex(hmac_md5(as_bytes("Jefe"), as_bytes("what do ya want for nothing?"))),
            "750c783e6ab0b503eaa86e310a5db738");
  EXPECT_EQ(hex(hmac_md5(rep(0xaa, 16), rep(0xdd, 50))), "56be34521d144c88dbb8c733f0e8b3f6");
  // Pieces overload: same MAC as the concatenation.
  EXPECT_EQ(hex(hmac_md5(as_bytes("Jefe"),
                         {as_bytes("what do ya "), as_bytes(""), as_bytes("want for nothing?")})),
            "750c783e6ab0b503eaa86e310a5db738");
}

// RFC 4231 section 4 (test cases 1, 2, 3, 6, 7).
TEST(Crypto, HmacSha256Rfc4231) {
  EXPECT_EQ(hex(hmac_sha256(rep(0x0b, 20), as_bytes("Hi There"))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(hmac_sha256(as_bytes("Jefe"), as_bytes("what do ya want for nothing?"))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hex(hmac_sha256(rep(0xaa, 20), rep(0xdd, 50))),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  EXPECT_EQ(hex(hmac_sha256(rep(0xaa, 131),
                            as_bytes("Test Using Larger Than Block-Size Key - Hash Key First"))),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hex(hmac_sha256(rep(0xaa, 131),
                            {as_bytes("This is a test using a larger than block-size key "),
                             as_bytes("and a larger than block-size data. The key needs to "),
                             as_bytes("be hashed before being used by the HMAC algorithm.")})),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  ByteView parts[] = {as_bytes("Hi "), as_bytes("There")};
  EXPECT_EQ(hex(hmac_sha256_parts(rep(0x0b, 20), parts)),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(Crypto, HmacEmptyKeyAndData) {
  // RFC 2104 allows an empty key. No RFC vector exists for it; the expected
  // value was computed independently with Python:
  //   hmac.new(b"", b"", hashlib.md5).hexdigest()
  EXPECT_EQ(hex(hmac_md5(ByteView{}, ByteView{})), "74e6f7298a9c2d168935f58c001bad88");
}

// RFC 4493 section 4.
TEST(Crypto, AesCmacRfc4493) {
  Bytes key = from_hex("2b7e151628aed2a6abf7158809cf4f3c");
  Bytes m = from_hex(
      "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
      "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710");
  auto mac = [&](size_t n) { return hex(*aes_cmac_128(key, ByteView(m).first(n))); };
  EXPECT_EQ(mac(0), "bb1d6929e95937287fa37d129b756746");
  EXPECT_EQ(mac(16), "070a16b46b4d4144f79bdd9dd04a287c");
  EXPECT_EQ(mac(40), "dfa66747de9ae63030ca32611497c827");
  EXPECT_EQ(mac(64), "51f0bebf7e3b9d92fc49741779363cfe");
  ByteView parts[] = {ByteView(m).first(7), ByteView(m).subspan(7, 33)};
  EXPECT_EQ(hex(*aes_cmac_128_parts(key, parts)), "dfa66747de9ae63030ca32611497c827");
}

TEST(Crypto, AesCmacRejectsBadKeySize) {
  auto r = aes_cmac_128(from_hex("00112233"), as_bytes("x"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(STATUS_INVALID_PARAMETER));
  EXPECT_FALSE(aes_cmac_128(Bytes(32), as_bytes("x")).ok());
}

// RFC 6229 section 2 (40-bit key 0102030405, keystream offset 0), applied to
// a zero plaintext so the output is the keystream.
TEST(Crypto, Rc4Rfc6229) {
  auto ks = rc4(from_hex("0102030405"), Bytes(16));
  ASSERT_TRUE(ks.ok());
  EXPECT_EQ(hex(*ks), "b2396305f03dc027ccc3524a0a1118a8");
  // 128-bit key 0102...10, offset 0.
  ks = rc4(from_hex("0102030405060708090a0b0c0d0e0f10"), Bytes(16));
  ASSERT_TRUE(ks.ok());
  EXPECT_EQ(hex(*ks), "9ac7cc9a609d1ef7b2932899cde41b97");
  // Round trip.
  auto c = rc4(as_bytes("Key"), as_bytes("Plaintext"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(hex(*c), "bbf316e8d940af0ad3");
  auto p = rc4(as_bytes("Key"), *c);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(as_chars(*p), "Plaintext");
}

TEST(Crypto, Rc4RejectsBadKey) {
  EXPECT_TRUE(rc4(ByteView{}, as_bytes("x")).error().is(STATUS_INVALID_PARAMETER));
  EXPECT_TRUE(rc4(Bytes(257), as_bytes("x")).error().is(STATUS_INVALID_PARAMETER));
}

TEST(Crypto, RandomBytes) {
  Bytes a(32), b(32);
  random_bytes(a);
  random_bytes(b);
  EXPECT_NE(a, b);
  random_bytes(MutableByteView{});  // empty is fine
}

}  // namespace
}  // namespace smbkit::auth
