// Encryption/decryption against Microsoft's published SMB 3.1.1 vectors:
//   [ENC311] "SMB 3.1.1 Encryption in Windows 10" (Microsoft Open
//   Specifications blog, 2015), Appendix A.1 (AES-128-GCM) and A.2
//   (AES-128-CCM): WRITE/READ requests encrypted by the client and their
//   responses decrypted, with keys, nonces and transformed bytes.
// AES-256-CCM/GCM: no published SMB vector was found. The AES-256 expected
// bytes below were computed once, independently of this code, with Python's
// `cryptography` package (AESGCM / AESCCM(tag_length=16)) building the
// transform header and AAD by hand per MS-SMB2 2.2.41 / 3.1.4.3.
#include "auth/sealing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "auth_test_util.h"
#include "proto/constants.h"

namespace smbkit::auth {
namespace {

using namespace smbkit::proto;

struct Vector {
  const char* name;
  uint16_t cipher;
  const char* key;
  const char* nonce;
  uint64_t session_id;
  const char* plaintext;
  const char* transformed;
};

// Client-to-server requests, encrypted with Session.EncryptionKey.
const Vector kRequests[] = {
    {"A.1 GCM WRITE", AES_128_GCM, "A2F5E80E5D59103034F32E52F698E5EC", "C7D6822D269CAF48904C664C",
     0x100000000025,
     "FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"
     "25000000001000000000000000000000000000000000000031007000170000000000000000000000"
     "0600000004000000010000000400000000000000000000007000000000000000536D623320656E63"
     "72797074696F6E2074657374696E67",
     "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"
     "0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02"
     "D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4"
     "4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9"
     "1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8"},
    {"A.1 GCM READ", AES_128_GCM, "A2F5E80E5D59103034F32E52F698E5EC", "D7AA8C6D36859243B715E0A6",
     0x100000000025,
     "FE534D4240000100000000000800010008000000000000000600000000000000FFFE000001000000"
     "25000000001000000000000000000000000000000000000031000000170000000000000000000000"
     "060000000400000001000000040000000000000000000000000000000000000000",
     "FD534D426DAC0B6FD85A3ED42BB917DA38FE0386D7AA8C6D36859243B715E0A60000000071000000"
     "00000100250000000010000088A47BF09CA3C3141CDD7306BE9D9475AB24FCCB833D77461C041F8F"
     "B983D0C188F0729272B31D9D3D0DC6B687C069EEE0CC8EACA2C536D019ACC9E185D1EB630E0FCB79"
     "3EEECEB06D82A1D77706E700DBEBFB4FEB54D7AD2D97E7288804F90757FE4D08D6A84A3FF433E745"
     "1E768E4699"},
    {"A.2 CCM WRITE", AES_128_CCM, "DFAAA31AAE40A2485D47AC4DF09FDA1D", "9F6F1EAAD7E9F24AACD38F",
     0x100000000021,
     "FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"
     "21000000001000000000000000000000000000000000000031007000170000000000000000000000"
     "0500000004000000010000000400000000000000000000007000000000000000536D623320656E63"
     "72797074696F6E2074657374696E67",
     "FD534D42E89551D666DAB8993488F5A97103116C9F6F1EAAD7E9F24AACD38F000000000087000000"
     "00000100210000000010000056A74778199A9D2B6E9C3A376FD88D27680694FED253A313BEB07381"
     "AE8689F973ACDB8D716E4477803BCE53A92E1B81FA3E965AD9AF2C89C08CE66A344664453B8FC881"
     "18EDC9814CF58E92AA465E6EFB09958A9FDAD96FBD55B36A710C30D5E7C64AD7B9449F9F17EDD024"
     "FE8BA79154F340A82740D1D5180C69B0A2DE6A4BA893BD55D3210E"},
    {"A.2 CCM READ", AES_128_CCM, "DFAAA31AAE40A2485D47AC4DF09FDA1D", "A0F92E964EDC3049B86E19",
     0x100000000021,
     "FE534D4240000100000000000800010008000000000000000600000000000000FFFE000001000000"
     "21000000001000000000000000000000000000000000000031000000170000000000000000000000"
     "050000000400000001000000040000000000000000000000000000000000000000",
     "FD534D4235BF9600C841F0CDA9BD1BC3727B7E36A0F92E964EDC3049B86E19000000000071000000"
     "000001002100000000100000C4CCD3EB483A0638E69C99E391E7F64BCC10D6BEE46FEEA258C4BCAF"
     "792CB5A6E69283924081806DAB64827E9D14A5345D5221AB6DAFCB0E89FC2606B63D92163F4F6C93"
     "D1213D86ABF123B93EAD3AEF9A3471EFD68A423A00A6E0064D9AE3C842EFFFAD236A3BF25D37F4CD"
     "054C97DE18"},
    // Not published: see the file comment (Python `cryptography`).
    {"AES-256-GCM (independent)", AES_256_GCM,
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "0102030405060708090a0b0c",
     0x100000000021,
     "FE534D4240000100000000000800010008000000000000000600000000000000FFFE000001000000"
     "21000000001000000000000000000000000000000000000031000000170000000000000000000000"
     "050000000400000001000000040000000000000000000000000000000000000000",
     "fd534d42a30c71a30b156e8d112c515f0eaa67f40102030405060708090a0b0c0000000071000000"
     "000001002100000000100000fbb91797ac94f1864ca263471813eb284a43e1fe976d50c5a75ff924"
     "9eb676c57b1a9bdf6fb5ec9f91acbae5c5cbf85d9ef64fe0d4993671367d0ccd6f01340c467d0b23"
     "a8f15de04b12b07afb3803a7d8303028e629fec07b96960b24fe202397c66c7dbf440e65f5d69125"
     "abf618cc98"},
    {"AES-256-CCM (independent)", AES_256_CCM,
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "0102030405060708090a0b",
     0x100000000021,
     "FE534D4240000100000000000800010008000000000000000600000000000000FFFE000001000000"
     "21000000001000000000000000000000000000000000000031000000170000000000000000000000"
     "050000000400000001000000040000000000000000000000000000000000000000",
     "fd534d4215d434b5f3692730671e5315e294b5f90102030405060708090a0b000000000071000000"
     "0000010021000000001000000ba17ccf9aa93b57d4a5857aa61c08a56c113bb0a5fb80994f3856a1"
     "f66f2231f73255b5dc70656aa51aaf85048f25f5ccfb748f9ad5fa7bbb24c523ddde653175f8260a"
     "55b0ff1c3700dbe5d35605f20fb33797909d3c18b067e57d609eba3ce7309fd08a8513e365ddf84e"
     "8a26dfc8aa"},
};

// Server-to-client responses, decrypted with Session.DecryptionKey.
const Vector kResponses[] = {
    {"A.1 GCM WRITE response", AES_128_GCM, "748C50868C90F302962A5C35F5F9A8BF", "", 0x100000000025,
     "FE534D4240000100000000000900010001000000000000000500000000000000FFFE000001000000"
     "25000000001000000000000000000000000000000000000011000000170000000000000000000000",
     "FD534D42ACBE1CB7ED343ADF1725EF144D90D4B0E06831DD2E8EB7B4000000000000000050000000"
     "00000100250000000010000026BBBF949983A6C1C796559D0F2C510CB651D1F7B6AC8DED32A2A0B8"
     "F2D793A815C6F6B848D69767A215841A42D400AE6DDB5F0B44173A014973321FDD7950DA6179159B"
     "82E03C9E18A050FF0EA1C967"},
    {"A.1 GCM READ response", AES_128_GCM, "748C50868C90F302962A5C35F5F9A8BF", "", 0x100000000025,
     "FE534D4240000100000000000800010001000000000000000600000000000000FFFE000001000000"
     "25000000001000000000000000000000000000000000000011005000170000000000000000000000"
     "536D623320656E6372797074696F6E2074657374696E67",
     "FD534D427F714B3B9D8FA1198584E71C2BAA1CB6E16831DD2E8EB7B4000000000000000067000000"
     "000001002500000000100000FECEDF4D03BB11A6CC5D8A53BE33D6D8701986342B4197D306E16F9C"
     "BB218E92F7F8281F51CE68BB85A20D87DE90EBBF80538066D1C37513C0A58D70936D537B624F5500"
     "202A612B6CD30D448A82791A0B2E049ED512AFAEFB06E98AB3D6F931D7D50DB2DBD36A"},
    {"A.2 CCM WRITE response", AES_128_CCM, "95C544AEF6072680DA1CE49A68A97FA6", "", 0x100000000021,
     "FE534D4240000100000000000900010001000000000000000500000000000000FFFE000001000000"
     "21000000001000000000000000000000000000000000000011000000170000000000000000000000",
     "FD534D42DD33EC41A927DD51476FE887C2D3C136D96831DD2E8EB7B4000000000000000050000000"
     "000001002100000000100000F783157E0F6F1C055D746753CA16D20C21088E2A67564E056C2F68A7"
     "F14F226C3BD809B7A2D52E5FE4ECF49821BC6001733430CF174E2764B3CCB213AAD8BB9FBAF6C15E"
     "13D9120965390E004A96A3F7"},
    {"A.2 CCM READ response", AES_128_CCM, "95C544AEF6072680DA1CE49A68A97FA6", "", 0x100000000021,
     "FE534D4240000100000000000800010001000000000000000600000000000000FFFE000001000000"
     "21000000001000000000000000000000000000000000000011005000170000000000000000000000"
     "536D623320656E6372797074696F6E2074657374696E67",
     "FD534D42E241A13C7E1EE42ECF1FD69F3B8668C6DA6831DD2E8EB7B4000000000000000067000000"
     "00000100210000000010000015D67234FC8358D7BA1BF037ABC8EFD41A0A8F9BB04B16DEB1E85606"
     "BD8C2770823FE6239A286CB3E3D5762ABBD53FD8DE11ED491FE905E146A8FFCE09414AB741103D63"
     "7E28B19C6BA759B399DCC21FAE24CF2A455A13B215FC2857ABB513927F9F271D1C208B"},
};

TEST(Sealing, EncryptPublishedRequests) {
  for (const Vector& v : kRequests) {
    SCOPED_TRACE(v.name);
    Bytes pt = from_hex(v.plaintext);
    ByteView pieces[] = {pt};
    auto out = encrypt_message(v.cipher, from_hex(v.key), v.session_id, from_hex(v.nonce), pieces);
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ(to_hex(*out), lower(v.transformed));
    // And the receiving side (the server) decrypts it back.
    TransformHeader h;
    auto back = decrypt_message(v.cipher, from_hex(v.key), *out, &h);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(*back, pt);
    EXPECT_EQ(h.SessionId, v.session_id);
    EXPECT_EQ(h.OriginalMessageSize, pt.size());
  }
}

TEST(Sealing, DecryptPublishedResponses) {
  for (const Vector& v : kResponses) {
    SCOPED_TRACE(v.name);
    Bytes key = from_hex(v.key);
    TransformHeader h;
    auto pt = decrypt_message(v.cipher, key, from_hex(v.transformed), &h);
    ASSERT_TRUE(pt.ok()) << pt.error().message();
    EXPECT_EQ(to_hex(*pt), lower(v.plaintext));
    EXPECT_EQ(h.SessionId, v.session_id);
    // In place: plaintext lands at offset 52.
    Bytes buf = from_hex(v.transformed);
    auto n = decrypt_in_place(v.cipher, key, buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(to_hex(ByteView(buf).subspan(kTransformHeaderSize, *n)), lower(v.plaintext));
  }
}

TEST(Sealing, PiecesAndAppend) {
  for (const Vector& v : kRequests) {
    SCOPED_TRACE(v.name);
    Bytes pt = from_hex(v.plaintext);
    ByteView whole(pt);
    ByteView pieces[] = {whole.first(64), whole.subspan(64, 1), ByteView{}, whole.subspan(65)};
    Sealer s(v.cipher, from_hex(v.key));
    ASSERT_TRUE(s.ok());
    Bytes out = from_hex("000000ff");  // e.g. a transport header already in place
    ASSERT_TRUE(s.encrypt_append(v.session_id, from_hex(v.nonce), pieces, out).ok());
    EXPECT_EQ(to_hex(ByteView(out).subspan(4)), lower(v.transformed));
    EXPECT_EQ(to_hex(ByteView(out).first(4)), "000000ff");
    // The Sealer is reusable: same input, same output.
    auto again = s.encrypt(v.session_id, from_hex(v.nonce), pieces);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(to_hex(*again), lower(v.transformed));
  }
}

// Flipping any bit of the authenticated data, the ciphertext or the tag is
// caught; a failed decryption does not poison the reusable Unsealer.
TEST(Sealing, TamperDetected) {
  for (const Vector& v : kResponses) {
    SCOPED_TRACE(v.name);
    Bytes good = from_hex(v.transformed);
    Unsealer u(v.cipher, from_hex(v.key));
    ASSERT_TRUE(u.ok());
    // Tag (4..19), nonce (20..35), Reserved (40), SessionId (44..51),
    // ciphertext. (OriginalMessageSize and Flags are checked before the tag:
    // see MalformedRejected.)
    std::vector<size_t> offsets = {4, 19, 20, 30, 35, 40, 41, 44, 51, 52, 60, good.size() - 1};
    for (size_t at : offsets) {
      Bytes bad = good;
      bad[at] ^= std::byte{0x01};
      auto r = u.decrypt(bad);
      ASSERT_FALSE(r.ok()) << "offset " << at;
      EXPECT_TRUE(r.error().is(STATUS_DECRYPTION_FAILED)) << "offset " << at;
      auto n = u.decrypt_in_place(bad);
      ASSERT_FALSE(n.ok());
      // No unauthenticated plaintext is left behind.
      for (size_t i = kTransformHeaderSize; i < bad.size(); i++) ASSERT_EQ(bad[i], std::byte{0});
      ASSERT_TRUE(u.decrypt(good).ok()) << "after offset " << at;
    }
    // Wrong key.
    Bytes key = from_hex(v.key);
    key[3] ^= std::byte{0x40};
    EXPECT_TRUE(decrypt_message(v.cipher, key, good).error().is(STATUS_DECRYPTION_FAILED));
  }
}

TEST(Sealing, MalformedRejected) {
  const Vector& v = kResponses[0];
  Bytes key = from_hex(v.key);
  Bytes good = from_hex(v.transformed);
  auto expect_malformed = [&](Bytes b, const char* what) {
    auto r = decrypt_message(v.cipher, key, b);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_TRUE(r.error().is(STATUS_INVALID_NETWORK_RESPONSE))
        << what << ": " << r.error().message();
    auto n = decrypt_in_place(v.cipher, key, b);
    ASSERT_FALSE(n.ok()) << what;
    EXPECT_TRUE(n.error().is(STATUS_INVALID_NETWORK_RESPONSE)) << what;
  };
  // `good` changed by `mutate` must be refused the same way.
  auto expect_malformed_after = [&](auto mutate, const char* what) {
    Bytes b = good;
    mutate(b);
    expect_malformed(b, what);
  };
  const auto size = static_cast<uint32_t>(good.size() - 52);  // OriginalMessageSize
  expect_malformed({}, "empty");
  expect_malformed(Bytes(good.begin(), good.begin() + 51), "short header");
  expect_malformed(Bytes(good.begin(), good.begin() + 52), "header only");
  expect_malformed_after([](Bytes& b) { b[0] = std::byte{0xFE}; }, "SMB2 protocol id");
  expect_malformed_after([](Bytes& b) { store_le16(b.data() + 42, 0); }, "flags 0");
  expect_malformed_after([](Bytes& b) { store_le16(b.data() + 42, 2); }, "flags 2");
  expect_malformed_after([&](Bytes& b) { store_le32(b.data() + 36, size + 1); },
                         "OriginalMessageSize larger than data");
  expect_malformed_after([](Bytes& b) { store_le32(b.data() + 36, 0xFFFFFFFF); },
                         "OriginalMessageSize huge");
  expect_malformed_after([](Bytes& b) { store_le32(b.data() + 36, 0); },
                         "OriginalMessageSize zero");
  expect_malformed_after([](Bytes& b) { b.push_back(std::byte{0}); }, "trailing byte");
  expect_malformed_after([&](Bytes& b) { store_le32(b.data() + 36, size - 1); },
                         "OriginalMessageSize smaller than data");
}

TEST(Sealing, BadParameters) {
  Bytes pt(64, std::byte{1});
  ByteView pieces[] = {pt};
  Bytes k16(16), k32(32);
  auto is_param = [](const Result<Bytes>& r) {
    return !r.ok() && r.error().is(STATUS_INVALID_PARAMETER);
  };
  EXPECT_TRUE(is_param(encrypt_message(AES_128_GCM, k32, 1, Bytes(12), pieces)));
  EXPECT_TRUE(is_param(encrypt_message(AES_256_GCM, k16, 1, Bytes(12), pieces)));
  EXPECT_TRUE(is_param(encrypt_message(AES_128_GCM, k16, 1, Bytes(11), pieces)));
  EXPECT_TRUE(is_param(encrypt_message(AES_128_CCM, k16, 1, Bytes(12), pieces)));
  EXPECT_TRUE(is_param(encrypt_message(CIPHER_NONE, k16, 1, Bytes(12), pieces)));
  EXPECT_TRUE(is_param(encrypt_message(7, k16, 1, Bytes(12), pieces)));
  EXPECT_TRUE(is_param(encrypt_message(AES_128_GCM, k16, 1, Bytes(12), {})));
  EXPECT_TRUE(is_param(decrypt_message(CIPHER_NONE, k16, from_hex(kResponses[0].transformed))));
  EXPECT_FALSE(Sealer(AES_256_CCM, k16).ok());
  EXPECT_TRUE(Sealer(AES_256_CCM, k32).ok());
  EXPECT_EQ(cipher_nonce_size(AES_128_CCM), 11u);
  EXPECT_EQ(cipher_nonce_size(AES_256_GCM), 12u);
  EXPECT_EQ(cipher_nonce_size(CIPHER_NONE), 0u);
}

TEST(Sealing, RoundTripAllCiphersLarge) {
  Bytes msg(1 << 20);
  for (size_t i = 0; i < msg.size(); i++) msg[i] = std::byte(static_cast<uint8_t>(i * 7 + 3));
  for (uint16_t c : {AES_128_CCM, AES_128_GCM, AES_256_CCM, AES_256_GCM}) {
    Bytes key(c == AES_256_CCM || c == AES_256_GCM ? 32 : 16);
    for (size_t i = 0; i < key.size(); i++) key[i] = std::byte(static_cast<uint8_t>(i + c));
    Bytes nonce(cipher_nonce_size(c), std::byte{0x5a});
    Sealer s(c, key);
    Unsealer u(c, key);
    ByteView pieces[] = {ByteView(msg).first(100), ByteView(msg).subspan(100)};
    auto ct = s.encrypt(42, nonce, pieces);
    ASSERT_TRUE(ct.ok());
    ASSERT_EQ(ct->size(), msg.size() + kTransformHeaderSize);
    auto pt = u.decrypt(*ct);
    ASSERT_TRUE(pt.ok());
    EXPECT_EQ(*pt, msg);
    // Moved-to objects keep working.
    Sealer s2 = std::move(s);
    Unsealer u2 = std::move(u);
    EXPECT_FALSE(s.ok());
    auto ct2 = s2.encrypt(42, nonce, pieces);
    ASSERT_TRUE(ct2.ok());
    EXPECT_EQ(*ct2, *ct);
    EXPECT_TRUE(u2.decrypt_in_place(*ct2).ok());
  }
}

// encrypt_in_place: the published vectors, written over the plaintext with
// the header in the room ahead of it.
TEST(Sealing, InPlacePublishedRequests) {
  for (const Vector& v : kRequests) {
    SCOPED_TRACE(v.name);
    Bytes pt = from_hex(v.plaintext);
    Bytes frame(kTransformHeaderSize, std::byte{0xee});
    frame.insert(frame.end(), pt.begin(), pt.end());
    const std::byte* where = frame.data();
    Sealer s(v.cipher, from_hex(v.key));
    ASSERT_TRUE(s.encrypt_in_place(v.session_id, from_hex(v.nonce), frame).ok());
    EXPECT_EQ(frame.data(), where);
    EXPECT_EQ(to_hex(frame), lower(v.transformed));
  }
}

// For every cipher and a spread of sizes (1 byte to 4 MiB + 1): the in-place
// form gives the bytes encrypt() gives, and the Unsealer opens it (in place
// too) back to the plaintext.
TEST(Sealing, InPlaceMatchesEncryptAllCiphers) {
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1103515245u + 12345u;
    return static_cast<uint8_t>(seed >> 16);
  };
  for (uint16_t c : {AES_128_CCM, AES_128_GCM, AES_256_CCM, AES_256_GCM}) {
    Bytes key(c == AES_256_CCM || c == AES_256_GCM ? 32 : 16);
    for (auto& b : key) b = std::byte(next());
    Sealer s(c, key);
    Unsealer u(c, key);
    ASSERT_TRUE(s.ok() && u.ok());
    for (size_t size : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{64}, size_t{4095},
                        size_t{65536 + 80}, size_t{(4u << 20) + 1}}) {
      SCOPED_TRACE(::testing::Message() << "cipher " << c << " size " << size);
      Bytes nonce(cipher_nonce_size(c));
      for (auto& b : nonce) b = std::byte(next());
      Bytes pt(size);
      for (auto& b : pt) b = std::byte(next());
      const uint64_t sid = 0x1000000000000000ull + size;
      ByteView pieces[] = {pt};
      auto want = s.encrypt(sid, nonce, pieces);
      ASSERT_TRUE(want.ok());
      Bytes frame(kTransformHeaderSize);
      frame.insert(frame.end(), pt.begin(), pt.end());
      ASSERT_TRUE(s.encrypt_in_place(sid, nonce, frame).ok());
      ASSERT_TRUE(frame == *want);
      TransformHeader h;
      auto n = u.decrypt_in_place(frame, &h);
      ASSERT_TRUE(n.ok()) << n.error().message();
      ASSERT_EQ(*n, size);
      EXPECT_EQ(h.SessionId, sid);
      EXPECT_TRUE(std::equal(pt.begin(), pt.end(), frame.begin() + kTransformHeaderSize));
    }
  }
}

// encrypt_into: the same bytes into a buffer the caller owns (not zeroed).
TEST(Sealing, IntoACallersBuffer) {
  for (const Vector& v : kRequests) {
    SCOPED_TRACE(v.name);
    Bytes pt = from_hex(v.plaintext);
    ByteView whole(pt);
    ByteView pieces[] = {whole.first(70), whole.subspan(70)};
    Sealer s(v.cipher, from_hex(v.key));
    Bytes out(kTransformHeaderSize + pt.size(), std::byte{0xa5});
    ASSERT_TRUE(s.encrypt_into(v.session_id, from_hex(v.nonce), pieces, out).ok());
    EXPECT_EQ(to_hex(out), lower(v.transformed));
    Bytes wrong(out.size() + 1);
    auto r = s.encrypt_into(v.session_id, from_hex(v.nonce), pieces, wrong);
    EXPECT_TRUE(!r.ok() && r.error().is(STATUS_INVALID_PARAMETER));
  }
}

TEST(Sealing, InPlaceBadParameters) {
  Bytes k16(16);
  Sealer s(AES_128_GCM, k16);
  Bytes frame(kTransformHeaderSize + 8, std::byte{7});
  auto is_param = [](const Result<void>& r) { return !r.ok() && r.error().is(STATUS_INVALID_PARAMETER); };
  EXPECT_TRUE(is_param(s.encrypt_in_place(1, Bytes(11), frame)));
  Bytes header_only(kTransformHeaderSize);
  EXPECT_TRUE(is_param(s.encrypt_in_place(1, Bytes(12), header_only)));
  Bytes too_short(10);
  EXPECT_TRUE(is_param(s.encrypt_in_place(1, Bytes(12), too_short)));
  EXPECT_TRUE(is_param(Sealer(AES_128_GCM, Bytes(32)).encrypt_in_place(1, Bytes(12), frame)));
  // A refused call leaves the frame as it was.
  EXPECT_TRUE(std::all_of(frame.begin(), frame.end(), [](std::byte b) { return b == std::byte{7}; }));
}

}  // namespace
// decrypt_split: the rest of a message decrypted into a buffer of the
// caller's, the same plaintext as decrypt() in two places; nothing of it
// left on a tag failure; CCM all in place, without asking.
TEST(Sealing, SplitPutsTheRestWhereAsked) {
  Bytes msg((1 << 20) + 80);
  for (size_t i = 0; i < msg.size(); i++) msg[i] = std::byte(static_cast<uint8_t>(i * 13 + 5));
  for (uint16_t c : {AES_128_CCM, AES_128_GCM, AES_256_CCM, AES_256_GCM}) {
    SCOPED_TRACE(c);
    const bool gcm = c == AES_128_GCM || c == AES_256_GCM;
    Bytes key(c == AES_256_CCM || c == AES_256_GCM ? 32 : 16, std::byte{0x21});
    Bytes nonce(cipher_nonce_size(c), std::byte{0x33});
    ByteView pieces[] = {ByteView(msg)};
    auto ct = Sealer(c, key).encrypt(7, nonce, pieces);
    ASSERT_TRUE(ct.ok());
    Unsealer u(c, key);
    for (size_t keep : {size_t{80}, size_t{112}, msg.size() - 1}) {
      SCOPED_TRACE(keep);
      Bytes frame = *ct;
      Bytes rest(msg.size() - keep);
      int asked = 0;
      bool split = false;
      auto n = u.decrypt_split(frame, 64, [&](ByteView first, size_t len) {
        asked++;
        EXPECT_EQ(len, msg.size());
        EXPECT_TRUE(std::equal(first.begin(), first.end(), msg.begin()));  // the header, decrypted
        return Unsealer::Placement{keep, MutableByteView(rest)};
      }, &split);
      ASSERT_TRUE(n.ok()) << n.error().message();
      ASSERT_EQ(*n, msg.size());
      EXPECT_EQ(asked, gcm ? 1 : 0);
      EXPECT_EQ(split, gcm);
      ByteView body = ByteView(frame).subspan(kTransformHeaderSize);
      if (gcm) {
        EXPECT_TRUE(std::equal(body.begin(), body.begin() + static_cast<ptrdiff_t>(keep), msg.begin()));
        EXPECT_TRUE(std::equal(rest.begin(), rest.end(), msg.begin() + static_cast<ptrdiff_t>(keep)));
      } else {
        EXPECT_TRUE(std::equal(body.begin(), body.end(), msg.begin()));
      }
      // A flipped ciphertext bit: the tag fails and neither place keeps
      // unauthenticated plaintext.
      Bytes bad = *ct;
      bad[bad.size() - 10] ^= std::byte{0x01};
      std::fill(rest.begin(), rest.end(), std::byte{0x77});
      auto f = u.decrypt_split(bad, 64, [&](ByteView, size_t) {
        return Unsealer::Placement{keep, MutableByteView(rest)};
      }, &split);
      ASSERT_FALSE(f.ok());
      EXPECT_TRUE(f.error().is(STATUS_DECRYPTION_FAILED));
      EXPECT_FALSE(split);
      for (size_t i = kTransformHeaderSize; i < kTransformHeaderSize + keep; i++) ASSERT_EQ(bad[i], std::byte{0}) << i;
      if (gcm) {
        for (size_t i = 0; i < rest.size(); i++) ASSERT_EQ(rest[i], std::byte{0}) << i;
      }
    }
    // A placement that does not fit the message is refused.
    if (gcm) {
      Bytes frame = *ct;
      Bytes small(10);
      bool split = false;
      auto r = u.decrypt_split(frame, 64, [&](ByteView, size_t) {
        return Unsealer::Placement{80, MutableByteView(small)};
      }, &split);
      EXPECT_FALSE(r.ok());
    }
  }
}

}  // namespace smbkit::auth
