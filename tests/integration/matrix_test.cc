// Dialect x security matrix against a real smbd: every dialect the client
// speaks, plain, signed and sealed, each cipher and signing algorithm of
// 3.1.1; a 1 MiB + 1 byte file up and down through the pipelined engine,
// compared with the bytes and with the file on the server's disk.
#include "fixture.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;

enum class Mode { plain, sign, seal };

struct MatrixCase {
  const char* name;
  uint16_t dialect;
  Mode mode;
  uint16_t cipher = 0;    // 3.1.1: the one cipher offered (0: client default list)
  uint16_t sign_alg = 0xFFFF;  // 3.1.1: the one signing algorithm offered (0xFFFF: default)
};

std::vector<MatrixCase> matrix_cases() {
  std::vector<MatrixCase> v = {
      {"v202_plain", SMB2_DIALECT_0202, Mode::plain},
      {"v202_sign", SMB2_DIALECT_0202, Mode::sign},
      {"v202_seal", SMB2_DIALECT_0202, Mode::seal},
      {"v210_plain", SMB2_DIALECT_0210, Mode::plain},
      {"v210_sign", SMB2_DIALECT_0210, Mode::sign},
      {"v210_seal", SMB2_DIALECT_0210, Mode::seal},
      {"v300_plain", SMB2_DIALECT_0300, Mode::plain},
      {"v300_sign", SMB2_DIALECT_0300, Mode::sign},
      {"v300_seal", SMB2_DIALECT_0300, Mode::seal},
      {"v302_plain", SMB2_DIALECT_0302, Mode::plain},
      {"v302_sign", SMB2_DIALECT_0302, Mode::sign},
      {"v302_seal", SMB2_DIALECT_0302, Mode::seal},
      {"v311_plain", SMB2_DIALECT_0311, Mode::plain},
      {"v311_sign_default", SMB2_DIALECT_0311, Mode::sign},
      {"v311_sign_aes_cmac", SMB2_DIALECT_0311, Mode::sign, 0, AES_CMAC},
      {"v311_sign_aes_gmac", SMB2_DIALECT_0311, Mode::sign, 0, AES_GMAC},
      // MS-SMB2 2.2.3.1.7 lists HMAC-SHA256 as a 3.1.1 signing algorithm
      // too, and Samba 4.17 offers it ("server smb3 signing algorithms").
      {"v311_sign_hmac_sha256", SMB2_DIALECT_0311, Mode::sign, 0, HMAC_SHA256},
      {"v311_seal_default", SMB2_DIALECT_0311, Mode::seal},
      {"v311_seal_aes_128_ccm", SMB2_DIALECT_0311, Mode::seal, AES_128_CCM},
      {"v311_seal_aes_128_gcm", SMB2_DIALECT_0311, Mode::seal, AES_128_GCM},
      {"v311_seal_aes_256_ccm", SMB2_DIALECT_0311, Mode::seal, AES_256_CCM},
      {"v311_seal_aes_256_gcm", SMB2_DIALECT_0311, Mode::seal, AES_256_GCM},
  };
  return v;
}

class Matrix : public ServerSuite<Matrix, ::testing::TestWithParam<MatrixCase>> {};

TEST_P(Matrix, RoundTrip1MiBPlus1) {
  const MatrixCase& c = GetParam();
  auto o = client_options(server(), {c.dialect}, c.mode == Mode::sign, c.mode == Mode::seal);
  if (c.cipher) o.conn.ciphers = {c.cipher};
  if (c.sign_alg != 0xFFFF) o.conn.signing_algorithms = {c.sign_alg};
  auto cr = cl::Client::connect(o);

  if (c.mode == Mode::seal && c.dialect < SMB2_DIALECT_0300) {
    // SMB 2.x has no encryption: --seal must fail, and say why.
    ASSERT_FALSE(cr.ok()) << "sealed session on dialect " << std::hex << c.dialect << " should fail";
    EXPECT_NE(cr.error().message().find("encrypt"), std::string::npos) << cr.error().message();
    return;
  }
  IT_ASSERT_OK(cr);
  auto& client = **cr;
  const auto& si = client.conn().server();
  EXPECT_EQ(si.dialect, c.dialect);
  if (c.cipher) {
    EXPECT_EQ(si.cipher, c.cipher);
  }
  if (c.sign_alg != 0xFFFF) {
    EXPECT_EQ(si.signing_algorithm, c.sign_alg);
  }
  if (c.dialect == SMB2_DIALECT_0300 || c.dialect == SMB2_DIALECT_0302) {
    // 3.0 and 3.0.2 have no negotiate contexts: the cipher is AES-128-CCM.
    EXPECT_EQ(si.cipher, AES_128_CCM);
  }
  switch (c.mode) {
    case Mode::plain:
      EXPECT_FALSE(client.session().signing);
      EXPECT_FALSE(client.session().encrypting);
      break;
    case Mode::sign:
      EXPECT_TRUE(client.session().signing);
      EXPECT_FALSE(client.session().encrypting);
      break;
    case Mode::seal:
      EXPECT_TRUE(client.session().encrypting);
      break;
  }
  EXPECT_FALSE(client.session().guest);

  auto tr = client.tree_connect("share");
  IT_ASSERT_OK(tr);
  auto& tree = **tr;
  EXPECT_EQ(tree.encrypted(), c.mode == Mode::seal);

  const std::string name = unique_name(std::string("matrix-") + c.name) + ".bin";
  Bytes data = random_bytes((1u << 20) + 1, std::hash<std::string>{}(c.name));
  auto up = put_file(tree, name, data);
  IT_ASSERT_OK(up);
  auto down = get_file(tree, name);
  IT_ASSERT_OK(down);
  IT_EXPECT_SAME_BYTES(*down, data);

  auto local = read_local(share_dir() + "/" + name);
  ASSERT_TRUE(local.has_value()) << "not on the server's disk: " << name;
  IT_EXPECT_SAME_BYTES(*local, data);

  auto st = tree.stat(name);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, data.size());

  auto rm = tree.unlink(name);
  IT_EXPECT_OK(rm);
  EXPECT_FALSE(fs::exists(share_dir() + "/" + name));
}

INSTANTIATE_TEST_SUITE_P(DialectSecurity, Matrix, ::testing::ValuesIn(matrix_cases()),
                         [](const ::testing::TestParamInfo<MatrixCase>& i) { return std::string(i.param.name); });

// The `secure` share has "smb encrypt = required": a 3.x client that did
// not ask for sealing gets an encrypted tree anyway; a 2.x client is turned
// away (it cannot encrypt).
class SecureShare : public ServerSuite<SecureShare, ::testing::TestWithParam<uint16_t>> {};

TEST_P(SecureShare, EncryptsOn3xRefuses2x) {
  uint16_t d = GetParam();
  auto cr = connect({d});
  IT_ASSERT_OK(cr);
  auto tr = (*cr)->tree_connect("secure");
  if (d < SMB2_DIALECT_0300) {
    // Samba 4.17 answers TREE_CONNECT on 2.x to an encrypt-required share
    // with STATUS_ACCESS_DENIED.
    IT_ASSERT_STATUS(tr, smbkit::STATUS_ACCESS_DENIED);
    return;
  }
  IT_ASSERT_OK(tr);
  EXPECT_TRUE((*tr)->encrypted());
  const std::string name = unique_name("secure") + ".bin";
  Bytes data = random_bytes(300000, d);
  IT_ASSERT_OK(put_file(**tr, name, data));
  auto down = get_file(**tr, name);
  IT_ASSERT_OK(down);
  IT_EXPECT_SAME_BYTES(*down, data);
  auto local = read_local(share_dir("secure") + "/" + name);
  ASSERT_TRUE(local.has_value());
  IT_EXPECT_SAME_BYTES(*local, data);
}

INSTANTIATE_TEST_SUITE_P(Dialects, SecureShare,
                         ::testing::Values(SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300,
                                           SMB2_DIALECT_0302, SMB2_DIALECT_0311),
                         [](const ::testing::TestParamInfo<uint16_t>& i) {
                           char b[16];
                           std::snprintf(b, sizeof b, "v%03x", i.param);
                           return std::string(b);
                         });

// A server with "server signing = mandatory": a client that did not ask for
// signing still works, and its session signs.
class MandatorySigning : public ServerSuite<MandatorySigning, ::testing::TestWithParam<uint16_t>> {
 public:
  static st::SambaOptions options() { return {{"server signing = mandatory"}, {}}; }
};

TEST_P(MandatorySigning, PlainClientSigns) {
  uint16_t d = GetParam();
  auto cr = connect({d});
  IT_ASSERT_OK(cr);
  auto& client = **cr;
  EXPECT_TRUE(client.conn().server().signing_required());
  EXPECT_TRUE(client.session().signing);
  EXPECT_FALSE(client.session().encrypting);
  auto tr = client.tree_connect("share");
  IT_ASSERT_OK(tr);
  const std::string name = unique_name("mandatory") + ".bin";
  Bytes data = random_bytes((256u << 10) + 1, d * 7u);
  IT_ASSERT_OK(put_file(**tr, name, data));
  auto down = get_file(**tr, name);
  IT_ASSERT_OK(down);
  IT_EXPECT_SAME_BYTES(*down, data);
  auto local = read_local(share_dir() + "/" + name);
  ASSERT_TRUE(local.has_value());
  IT_EXPECT_SAME_BYTES(*local, data);
}

INSTANTIATE_TEST_SUITE_P(Dialects, MandatorySigning,
                         ::testing::Values(SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300,
                                           SMB2_DIALECT_0302, SMB2_DIALECT_0311),
                         [](const ::testing::TestParamInfo<uint16_t>& i) {
                           char b[16];
                           std::snprintf(b, sizeof b, "v%03x", i.param);
                           return std::string(b);
                         });

// A server restricted to one cipher and one signing algorithm (the client's
// least preferred ones): the client must take what the server chose.
class RestrictedAlgorithms : public ServerSuite<RestrictedAlgorithms> {
 public:
  static st::SambaOptions options() {
    return {{"server smb3 encryption algorithms = AES-256-CCM",
             "server smb3 signing algorithms = AES-128-CMAC"},
            {}};
  }
};

TEST_F(RestrictedAlgorithms, ClientFollowsServerChoiceSigned) {
  auto cr = connect({SMB2_DIALECT_0311}, /*sign=*/true);
  IT_ASSERT_OK(cr);
  EXPECT_EQ((*cr)->conn().server().signing_algorithm, AES_CMAC);
  EXPECT_TRUE((*cr)->session().signing);
  auto tr = (*cr)->tree_connect("share");
  IT_ASSERT_OK(tr);
  Bytes data = random_bytes((1u << 20) + 1, 11);
  const std::string name = unique_name("restricted-sign") + ".bin";
  IT_ASSERT_OK(put_file(**tr, name, data));
  auto down = get_file(**tr, name);
  IT_ASSERT_OK(down);
  IT_EXPECT_SAME_BYTES(*down, data);
}

TEST_F(RestrictedAlgorithms, ClientFollowsServerChoiceSealed) {
  auto cr = connect({SMB2_DIALECT_0311}, false, /*seal=*/true);
  IT_ASSERT_OK(cr);
  EXPECT_EQ((*cr)->conn().server().cipher, AES_256_CCM);
  EXPECT_TRUE((*cr)->session().encrypting);
  auto tr = (*cr)->tree_connect("share");
  IT_ASSERT_OK(tr);
  Bytes data = random_bytes((1u << 20) + 1, 12);
  const std::string name = unique_name("restricted-seal") + ".bin";
  IT_ASSERT_OK(put_file(**tr, name, data));
  auto down = get_file(**tr, name);
  IT_ASSERT_OK(down);
  IT_EXPECT_SAME_BYTES(*down, data);
  auto local = read_local(share_dir() + "/" + name);
  ASSERT_TRUE(local.has_value());
  IT_EXPECT_SAME_BYTES(*local, data);
}

TEST_F(RestrictedAlgorithms, NoCommonCipherSealFails) {
  // The client offers only AES-128-GCM; the server only AES-256-CCM: no
  // common cipher (the server answers cipher 0), so --seal cannot work.
  auto o = client_options(server(), {SMB2_DIALECT_0311}, false, true);
  o.conn.ciphers = {AES_128_GCM};
  auto cr = cl::Client::connect(o);
  ASSERT_FALSE(cr.ok()) << "sealed session without a common cipher should fail";
  EXPECT_NE(cr.error().message().find("encrypt"), std::string::npos) << cr.error().message();
}

TEST_F(RestrictedAlgorithms, NoCommonCipherPlainStillWorks) {
  auto o = client_options(server(), {SMB2_DIALECT_0311});
  o.conn.ciphers = {AES_128_GCM};
  auto cr = cl::Client::connect(o);
  IT_ASSERT_OK(cr);
  EXPECT_EQ((*cr)->conn().server().cipher, 0);
  auto tr = (*cr)->tree_connect("share");
  IT_ASSERT_OK(tr);
  auto ls = (*tr)->list("");
  IT_EXPECT_OK(ls);
}

}  // namespace
}  // namespace smbkit_it
