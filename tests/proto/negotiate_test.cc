#include "proto/negotiate.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

std::array<std::byte, 16> guid_from_hex(std::string_view h) {
  Bytes b = from_hex(h);
  std::array<std::byte, 16> g{};
  std::copy(b.begin(), b.end(), g.begin());
  return g;
}

// A real smbclient (Samba 4.17) NEGOTIATE request offering 2.0.2 - 3.1.1,
// captured on loopback.
constexpr std::string_view kSambaRequest =
    "fe534d42400000000000000000001f0000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "2400"                                  // StructureSize 36
    "0500"                                  // DialectCount 5
    "0100"                                  // SecurityMode SIGNING_ENABLED
    "0000"                                  // Reserved
    "7f000000"                              // Capabilities 0x7f
    "dc397a84b485c04e85b24c140519f3e5"      // ClientGuid
    "70000000" "0400" "0000"                // NegotiateContextOffset 112, Count 4, Reserved2
    "0202" "1002" "0003" "0203" "1103"      // Dialects
    "0000"                                  // Padding to 112
    "0100" "2600" "00000000"                // PREAUTH_INTEGRITY, DataLength 38
    "0100" "2000" "0100"                    // 1 hash, SaltLength 32, SHA-512
    "5b4c60aa6f9d6f5363c330af55c991ec88e9999f1ea5904b77a0359c3463867d"
    "0000"                                  // Padding to 160
    "0200" "0a00" "00000000"                // ENCRYPTION, DataLength 10
    "0400" "0200" "0100" "0400" "0300"      // 4 ciphers: 128-GCM, 128-CCM, 256-GCM, 256-CCM
    "000000000000"                          // Padding to 184
    "0800" "0800" "00000000"                // SIGNING, DataLength 8
    "0300" "0200" "0100" "0000"             // 3 algorithms: GMAC, CMAC, HMAC-SHA256
    "0500" "1200" "00000000"                // NETNAME, DataLength 18
    "3100320037002e0030002e0030002e003100";  // "127.0.0.1"

// The real Samba 4.17 smbd answer to it: 3.1.1 with three contexts.
constexpr std::string_view kSambaResponse =
    "fe534d4240000000000000000000010001000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "4100"                                  // StructureSize 65
    "0100"                                  // SecurityMode SIGNING_ENABLED
    "1103"                                  // DialectRevision 3.1.1
    "0300"                                  // NegotiateContextCount 3
    "766d0000000000000000000000000000"      // ServerGuid
    "0f000000"                              // Capabilities DFS|LEASING|LARGE_MTU|MULTI_CHANNEL
    "00008000" "00008000" "00008000"        // MaxTransact/Read/WriteSize 8 MiB
    "6cb322069480dd01"                      // SystemTime
    "0000000000000000"                      // ServerStartTime
    "8000" "4a00"                           // SecurityBufferOffset 128, Length 74
    "d0000000"                              // NegotiateContextOffset 208
    "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa32a"  // SPNEGO
    "3028a0261b246e6f745f646566696e65645f696e5f5246433431373840706c65"
    "6173655f69676e6f7265"
    "000000000000"                          // Padding to 208
    "0100" "2600" "00000000" "0100" "2000" "0100"  // PREAUTH: SHA-512, 32-byte salt
    "6e45738109a0cc75d77b50e54b667453312025ba476fdc99c3e190ee12296dc1"
    "0000"                                  // Padding
    "0200" "0400" "00000000" "0100" "0200"  // ENCRYPTION: AES-128-GCM
    "00000000"                              // Padding
    "0800" "0400" "00000000" "0100" "0200";  // SIGNING: AES-GMAC

// Samba's answer when the client offers 2.0.2 - 3.0 (no contexts).
constexpr std::string_view kSambaResponse300 =
    "fe534d4240000000000000000000010001000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "4100010000030000766d00000000000000000000000000004f00000000008000"
    "00008000000080009e062c099480dd01000000000000000080004a0000000000"
    "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa32a"
    "3028a0261b246e6f745f646566696e65645f696e5f5246433431373840706c65"
    "6173655f69676e6f7265";

TEST(Negotiate, SambaRequestDecodesAndReencodesByteExact) {
  Bytes wire = from_hex(kSambaRequest);
  ASSERT_EQ(wire.size(), 226u);
  auto req = decode_negotiate_request(wire);
  ASSERT_TRUE(req.ok()) << req.error().message();
  EXPECT_EQ(req->SecurityMode, SMB2_NEGOTIATE_SIGNING_ENABLED);
  EXPECT_EQ(req->Capabilities, 0x7fu);
  EXPECT_EQ(req->Dialects, (std::vector<uint16_t>{0x0202, 0x0210, 0x0300, 0x0302, 0x0311}));
  ASSERT_EQ(req->NegotiateContexts.size(), 4u);

  auto pre = find_negotiate_context<PreauthIntegrityCapabilities>(req->NegotiateContexts);
  ASSERT_TRUE(pre.ok());
  ASSERT_TRUE(pre->has_value());
  EXPECT_EQ((*pre)->HashAlgorithms, std::vector<uint16_t>{SHA_512});
  EXPECT_EQ((*pre)->Salt.size(), 32u);
  auto enc = find_negotiate_context<EncryptionCapabilities>(req->NegotiateContexts);
  ASSERT_TRUE(enc.ok() && enc->has_value());
  EXPECT_EQ((*enc)->Ciphers,
            (std::vector<uint16_t>{AES_128_GCM, AES_128_CCM, AES_256_GCM, AES_256_CCM}));
  auto sig = find_negotiate_context<SigningCapabilities>(req->NegotiateContexts);
  ASSERT_TRUE(sig.ok() && sig->has_value());
  EXPECT_EQ((*sig)->SigningAlgorithms, (std::vector<uint16_t>{AES_GMAC, AES_CMAC, HMAC_SHA256}));
  auto net = find_negotiate_context<NetnameNegotiateContextId>(req->NegotiateContexts);
  ASSERT_TRUE(net.ok() && net->has_value());
  EXPECT_EQ((*net)->NetName, "127.0.0.1");
  auto comp = find_negotiate_context<CompressionCapabilities>(req->NegotiateContexts);
  ASSERT_TRUE(comp.ok());
  EXPECT_FALSE(comp->has_value());

  expect_reencodes(wire, *req, encode_negotiate_request);
}

TEST(Negotiate, SambaResponseDecodesAndReencodesByteExact) {
  Bytes wire = from_hex(kSambaResponse);
  ASSERT_EQ(wire.size(), 284u);
  auto rsp = decode_negotiate_response(wire);
  ASSERT_TRUE(rsp.ok()) << rsp.error().message();
  EXPECT_EQ(rsp->DialectRevision, SMB2_DIALECT_0311);
  EXPECT_EQ(rsp->SecurityMode, SMB2_NEGOTIATE_SIGNING_ENABLED);
  EXPECT_EQ(rsp->Capabilities, 0x0fu);
  EXPECT_EQ(rsp->MaxTransactSize, 8u << 20);
  EXPECT_EQ(rsp->MaxReadSize, 8u << 20);
  EXPECT_EQ(rsp->MaxWriteSize, 8u << 20);
  EXPECT_EQ(rsp->SystemTime, 0x01dd80940622b36cull);
  EXPECT_EQ(rsp->ServerStartTime, 0u);
  EXPECT_EQ(rsp->SecurityBuffer.size(), 74u);
  EXPECT_EQ(rsp->SecurityBuffer[0], std::byte{0x60});  // GSS-API InitialContextToken
  ASSERT_EQ(rsp->NegotiateContexts.size(), 3u);
  EXPECT_EQ(rsp->NegotiateContexts[0].ContextType, SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
  EXPECT_EQ(rsp->NegotiateContexts[1].ContextType, SMB2_ENCRYPTION_CAPABILITIES);
  EXPECT_EQ(rsp->NegotiateContexts[2].ContextType, SMB2_SIGNING_CAPABILITIES);
  auto enc = find_negotiate_context<EncryptionCapabilities>(rsp->NegotiateContexts);
  ASSERT_TRUE(enc.ok() && enc->has_value());
  EXPECT_EQ((*enc)->Ciphers, std::vector<uint16_t>{AES_128_GCM});
  auto sig = find_negotiate_context<SigningCapabilities>(rsp->NegotiateContexts);
  ASSERT_TRUE(sig.ok() && sig->has_value());
  EXPECT_EQ((*sig)->SigningAlgorithms, std::vector<uint16_t>{AES_GMAC});

  expect_reencodes(wire, *rsp, encode_negotiate_response);
}

TEST(Negotiate, SambaResponse300HasNoContexts) {
  Bytes wire = from_hex(kSambaResponse300);
  auto rsp = decode_negotiate_response(wire);
  ASSERT_TRUE(rsp.ok()) << rsp.error().message();
  EXPECT_EQ(rsp->DialectRevision, SMB2_DIALECT_0300);
  EXPECT_EQ(rsp->Capabilities, 0x4fu);  // + ENCRYPTION
  EXPECT_TRUE(rsp->NegotiateContexts.empty());
  EXPECT_EQ(rsp->SecurityBuffer.size(), 74u);
  expect_reencodes(wire, *rsp, encode_negotiate_response);
}

TEST(Negotiate, HandBuiltRequestByteExact) {
  NegotiateRequest req;
  req.SecurityMode = SMB2_NEGOTIATE_SIGNING_ENABLED;
  req.Capabilities = SMB2_GLOBAL_CAP_LEASING | SMB2_GLOBAL_CAP_ENCRYPTION;
  req.ClientGuid = guid_from_hex("00112233445566778899aabbccddeeff");
  req.Dialects = {SMB2_DIALECT_0202, SMB2_DIALECT_0311};
  auto pre = make_negotiate_context(PreauthIntegrityCapabilities{{SHA_512}, from_hex("aabb")});
  auto enc = make_negotiate_context(EncryptionCapabilities{{AES_128_GCM, AES_128_CCM}});
  ASSERT_TRUE(pre.ok() && enc.ok());
  req.NegotiateContexts = {*pre, *enc, NegotiateContext{0x1234, from_hex("010203")}};
  Bytes want = msg(SMB2_NEGOTIATE, false,
                   "2400"                              // StructureSize 36
                   "0200"                              // DialectCount 2
                   "0100"                              // SecurityMode
                   "0000"                              // Reserved
                   "42000000"                          // Capabilities LEASING|ENCRYPTION
                   "00112233445566778899aabbccddeeff"  // ClientGuid
                   "68000000"                          // NegotiateContextOffset 104
                   "0300"                              // NegotiateContextCount 3
                   "0000"                              // Reserved2
                   "0202" "1103"                       // Dialects (ends at 104: no padding)
                   "0100" "0800" "00000000"            // @104 PREAUTH, DataLength 8, Reserved
                   "0100" "0200" "0100" "aabb"         //   1 hash, SaltLength 2, SHA-512, Salt
                   "0200" "0600" "00000000"            // @120 ENCRYPTION, DataLength 6
                   "0200" "0200" "0100"                //   2 ciphers: AES-128-GCM, AES-128-CCM
                   "0000"                              // Padding 134 -> 136
                   "3412" "0300" "00000000" "010203"); // @136 unknown type 0x1234, raw data
  expect_encodes_as(req, want, encode_negotiate_request, decode_negotiate_request);
}

TEST(Negotiate, HandBuiltResponseByteExact) {
  NegotiateResponse rsp;
  rsp.SecurityMode = SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED;
  rsp.DialectRevision = SMB2_DIALECT_0311;
  rsp.ServerGuid = guid_from_hex("ffeeddccbbaa99887766554433221100");
  rsp.Capabilities = 0x2f;
  rsp.MaxTransactSize = rsp.MaxReadSize = rsp.MaxWriteSize = 0x100000;
  rsp.SystemTime = 0x0807060504030201ull;
  rsp.SecurityBuffer = from_hex("a1b2c3");
  auto enc = make_negotiate_context(EncryptionCapabilities{{AES_256_GCM}});
  ASSERT_TRUE(enc.ok());
  rsp.NegotiateContexts = {*enc};
  Bytes want = msg(SMB2_NEGOTIATE, true,
                   "4100"                              // StructureSize 65
                   "0300"                              // SecurityMode ENABLED|REQUIRED
                   "1103"                              // DialectRevision
                   "0100"                              // NegotiateContextCount 1
                   "ffeeddccbbaa99887766554433221100"  // ServerGuid
                   "2f000000"                          // Capabilities
                   "00001000" "00001000" "00001000"    // MaxTransact/Read/WriteSize 1 MiB
                   "0102030405060708"                  // SystemTime
                   "0000000000000000"                  // ServerStartTime
                   "8000" "0300"                       // SecurityBufferOffset 128, Length 3
                   "88000000"                          // NegotiateContextOffset 136
                   "a1b2c3"                            // @128 Buffer
                   "0000000000"                        // Padding 131 -> 136
                   "0200" "0400" "00000000"            // @136 ENCRYPTION, DataLength 4
                   "0100" "0400");                     //   1 cipher: AES-256-GCM
  expect_encodes_as(rsp, want, encode_negotiate_response, decode_negotiate_response);
}

TEST(Negotiate, RequestWithout311HasClientStartTimeAndNoContexts) {
  NegotiateRequest req;
  req.Dialects = {SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300};
  Bytes out = encoded(req, encode_negotiate_request, header_for(SMB2_NEGOTIATE, false));
  EXPECT_EQ(out.size(), 64u + 36 + 6);
  EXPECT_EQ(to_hex(ByteView(out).subspan(92, 8)), "0000000000000000");  // ClientStartTime
  auto back = decode_negotiate_request(out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, req);

  // Contexts without 3.1.1 are refused rather than silently dropped.
  req.NegotiateContexts.push_back(NegotiateContext{SMB2_SIGNING_CAPABILITIES, from_hex("0100")});
  Bytes out2 = header_for(SMB2_NEGOTIATE, false);
  ByteWriter w2(out2);
  EXPECT_FALSE(encode_negotiate_request(req, w2).ok());
  NegotiateRequest none;
  EXPECT_FALSE(encode_negotiate_request(none, w2).ok());

  NegotiateResponse rsp;
  rsp.DialectRevision = SMB2_DIALECT_0302;
  rsp.NegotiateContexts.push_back(NegotiateContext{1, {}});
  EXPECT_FALSE(encode_negotiate_response(rsp, w2).ok());
}

TEST(Negotiate, EveryTypedContextRoundTrips) {
  PreauthIntegrityCapabilities pre{{SHA_512, 0x0002}, from_hex("000102030405")};
  EncryptionCapabilities enc{{AES_128_CCM, AES_256_GCM}};
  CompressionCapabilities comp{SMB2_COMPRESSION_CAPABILITIES_FLAG_CHAINED,
                               {COMPRESSION_LZ77, COMPRESSION_PATTERN_V1}};
  NetnameNegotiateContextId net{"fïlesrv.example"};
  TransportCapabilities tr{SMB2_ACCEPT_TRANSPORT_LEVEL_SECURITY};
  RdmaTransformCapabilities rdma{{SMB2_RDMA_TRANSFORM_ENCRYPTION, SMB2_RDMA_TRANSFORM_SIGNING}};
  SigningCapabilities sig{{AES_CMAC}};

  NegotiateRequest req;
  req.Dialects = {SMB2_DIALECT_0311};
  for (auto c : {make_negotiate_context(pre), make_negotiate_context(enc),
                 make_negotiate_context(comp), make_negotiate_context(net),
                 make_negotiate_context(tr), make_negotiate_context(rdma),
                 make_negotiate_context(sig)}) {
    ASSERT_TRUE(c.ok());
    req.NegotiateContexts.push_back(*c);
  }
  // Data layouts of 2.2.3.1.3 / .5 / .6, checked by hand.
  EXPECT_EQ(to_hex(req.NegotiateContexts[2].Data), "0200" "0000" "01000000" "0200" "0400");
  EXPECT_EQ(to_hex(req.NegotiateContexts[4].Data), "01000000");
  EXPECT_EQ(to_hex(req.NegotiateContexts[5].Data), "0200" "0000" "00000000" "0100" "0200");

  Bytes out = encoded(req, encode_negotiate_request, header_for(SMB2_NEGOTIATE, false));
  auto back = decode_negotiate_request(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(*back, req);

  auto list = std::span<const NegotiateContext>(back->NegotiateContexts);
  EXPECT_EQ(**find_negotiate_context<PreauthIntegrityCapabilities>(list), pre);
  EXPECT_EQ(**find_negotiate_context<EncryptionCapabilities>(list), enc);
  EXPECT_EQ(**find_negotiate_context<CompressionCapabilities>(list), comp);
  EXPECT_EQ(**find_negotiate_context<NetnameNegotiateContextId>(list), net);
  EXPECT_EQ(**find_negotiate_context<TransportCapabilities>(list), tr);
  EXPECT_EQ(**find_negotiate_context<RdmaTransformCapabilities>(list), rdma);
  EXPECT_EQ(**find_negotiate_context<SigningCapabilities>(list), sig);
  EXPECT_EQ(count_negotiate_contexts(list, SMB2_SIGNING_CAPABILITIES), 1u);
  EXPECT_EQ(find_negotiate_context(list, 0x7777), nullptr);
}

TEST(Negotiate, MalformedTypedContexts) {
  PreauthIntegrityCapabilities pre;
  // HashAlgorithmCount 2 but one algorithm.
  EXPECT_FALSE(parse_negotiate_context({SMB2_PREAUTH_INTEGRITY_CAPABILITIES, from_hex("020000000100")}, pre).ok());
  // SaltLength past the end.
  EXPECT_FALSE(parse_negotiate_context({SMB2_PREAUTH_INTEGRITY_CAPABILITIES, from_hex("010010000100aa")}, pre).ok());
  // Wrong type.
  EXPECT_FALSE(parse_negotiate_context({SMB2_SIGNING_CAPABILITIES, from_hex("01000000")}, pre).ok());
  EncryptionCapabilities enc;
  EXPECT_FALSE(parse_negotiate_context({SMB2_ENCRYPTION_CAPABILITIES, from_hex("ffff0100")}, enc).ok());
  EXPECT_FALSE(parse_negotiate_context({SMB2_ENCRYPTION_CAPABILITIES, {}}, enc).ok());
  CompressionCapabilities comp;
  EXPECT_FALSE(parse_negotiate_context({SMB2_COMPRESSION_CAPABILITIES, from_hex("01000000")}, comp).ok());
  NetnameNegotiateContextId net;
  EXPECT_FALSE(parse_negotiate_context({SMB2_NETNAME_NEGOTIATE_CONTEXT_ID, from_hex("410042")}, net).ok());
  EXPECT_FALSE(parse_negotiate_context({SMB2_NETNAME_NEGOTIATE_CONTEXT_ID, from_hex("00d8")}, net).ok());
  ASSERT_TRUE(parse_negotiate_context({SMB2_NETNAME_NEGOTIATE_CONTEXT_ID, from_hex("410042000000")}, net).ok());
  EXPECT_EQ(net.NetName, "AB");  // trailing NUL dropped
  TransportCapabilities tr;
  EXPECT_FALSE(parse_negotiate_context({SMB2_TRANSPORT_CAPABILITIES, from_hex("0100")}, tr).ok());
  RdmaTransformCapabilities rdma;
  EXPECT_FALSE(parse_negotiate_context({SMB2_RDMA_TRANSFORM_CAPABILITIES, from_hex("0100000000000000")}, rdma).ok());
  SigningCapabilities sig;
  EXPECT_FALSE(parse_negotiate_context({SMB2_SIGNING_CAPABILITIES, from_hex("0200 0100")}, sig).ok());

  // find<T> reports a malformed context as an error, not as absent.
  std::vector<NegotiateContext> list{{SMB2_SIGNING_CAPABILITIES, from_hex("05")}};
  EXPECT_FALSE(find_negotiate_context<SigningCapabilities>(list).ok());
}

void expect_bad_response(Bytes b, const char* why) {
  auto r = decode_negotiate_response(b);
  EXPECT_FALSE(r.ok()) << why;
  if (!r.ok()) {
    EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE) << why;
  }
}

TEST(Negotiate, MalformedResponses) {
  const Bytes good = from_hex(kSambaResponse);
  // Every truncation fails: the last context ends at the end of the message.
  expect_truncations_fail(good, decode_negotiate_response);
  expect_bad_response(patched(good, 64, "4000"), "StructureSize 64");
  expect_bad_response(patched(good, 120, "7f00"), "SecurityBufferOffset inside the fixed part");
  expect_bad_response(patched(good, 120, "1601"), "SecurityBufferOffset past the end");
  expect_bad_response(patched(good, 122, "ff00"), "SecurityBufferLength past the end");
  expect_bad_response(patched(good, 124, "d4000000"), "context offset not 8-aligned");
  expect_bad_response(patched(good, 124, "78000000"), "context offset inside the fixed part");
  expect_bad_response(patched(good, 124, "18010000"), "context offset past the end");
  expect_bad_response(patched(good, 124, "ffffffff"), "context offset huge");
  expect_bad_response(patched(good, 70, "0400"), "one context more than present");
  expect_bad_response(patched(good, 70, "ffff"), "context count huge");
  expect_bad_response(patched(good, 210, "ff00"), "DataLength overruns");
  expect_bad_response(patched(good, 274, "0500"), "last DataLength overruns by one");

  // With a non-3.1.1 dialect the context fields are not interpreted.
  auto r = decode_negotiate_response(patched(good, 68, "0203"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->NegotiateContexts.empty());
  // An empty security buffer's offset is ignored.
  r = decode_negotiate_response(patched(good, 120, "00000000"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->SecurityBuffer.empty());
}

TEST(Negotiate, MalformedRequests) {
  const Bytes good = from_hex(kSambaRequest);
  expect_truncations_fail(good, decode_negotiate_request);
  EXPECT_FALSE(decode_negotiate_request(patched(good, 64, "2500")).ok());      // StructureSize
  EXPECT_FALSE(decode_negotiate_request(patched(good, 66, "0000")).ok());      // no dialects
  EXPECT_FALSE(decode_negotiate_request(patched(good, 66, "ffff")).ok());      // dialects overrun
  EXPECT_FALSE(decode_negotiate_request(patched(good, 92, "6c000000")).ok());  // unaligned
  EXPECT_FALSE(decode_negotiate_request(patched(good, 92, "68000000")).ok());  // over the dialects
  EXPECT_FALSE(decode_negotiate_request(patched(good, 96, "0500")).ok());     // count overruns
  EXPECT_FALSE(decode_negotiate_request(patched(good, 202, "1300")).ok());     // NetName overruns
  // Without 3.1.1 among the dialects, the same bytes are ClientStartTime.
  auto r = decode_negotiate_request(patched(good, 108, "0203"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->NegotiateContexts.empty());
}

TEST(Negotiate, ContextListHelpers) {
  Bytes b(64);
  ByteWriter w(b);
  std::vector<NegotiateContext> list{{1, from_hex("aa")}, {0x0100, {}}, {2, from_hex("bbcc")}};
  ASSERT_TRUE(encode_negotiate_context_list(list, w).ok());
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "0100" "0100" "00000000" "aa" "00000000000000"
            "0001" "0000" "00000000"
            "0200" "0200" "00000000" "bbcc");
  auto back = decode_negotiate_context_list(b, 64, 3, 64);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, list);
  EXPECT_FALSE(decode_negotiate_context_list(b, 64, 4, 64).ok());
  EXPECT_FALSE(decode_negotiate_context_list(b, 64, 3, 65).ok());
  auto none = decode_negotiate_context_list(b, 3, 0, 64);  // count 0: offset unused
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  list[0].Data.resize(0x10000);
  EXPECT_FALSE(encode_negotiate_context_list(list, w).ok());
}

}  // namespace
}  // namespace smbkit::proto
