// smb.conf subset: every parameter's meaning, the syntax (case, spaces,
// comments, continuation) and every error naming origin:line and the
// parameter.
#include "server/config.h"

#include <gtest/gtest.h>

#include "proto/constants.h"

namespace smbkit::server {
namespace {

using namespace smbkit::proto;

Config parse_ok(std::string_view text) {
  auto r = parse_config(text, "t.conf");
  EXPECT_TRUE(r.ok()) << r.error().message();
  return r.ok() ? *r : Config{};
}

// The error's context (what the user sees before ": Invalid argument").
std::string parse_err(std::string_view text) {
  auto r = parse_config(text, "t.conf");
  EXPECT_FALSE(r.ok()) << "parsed: " << text;
  return r.ok() ? std::string() : r.error().context;
}

TEST(ConfigParse, EmptyTextGivesSambaDefaults) {
  Config c = parse_ok("");
  EXPECT_EQ(c.global.smb_ports, std::vector<uint16_t>{445});
  EXPECT_TRUE(c.global.interfaces.empty());
  EXPECT_FALSE(c.global.bind_interfaces_only);
  EXPECT_EQ(c.global.private_dir, kDefaultPrivateDir);
  EXPECT_EQ(c.global.min_protocol, SMB2_DIALECT_0202);
  EXPECT_EQ(c.global.max_protocol, SMB2_DIALECT_0311);
  EXPECT_EQ(c.global.server_signing, Setting::enabled);
  EXPECT_EQ(c.global.smb_encrypt, Setting::enabled);
  EXPECT_EQ(c.global.map_to_guest, MapToGuest::never);
  EXPECT_TRUE(c.shares.empty());
}

TEST(ConfigParse, EveryGlobalParameter) {
  Config c = parse_ok(R"([global]
  smb ports = 4450 4451,4452
  interfaces = lo 127.0.0.1/8 ::1
  bind interfaces only = yes
  private dir = /var/lib/x/private
  server min protocol = SMB2_10
  server max protocol = SMB3_02
  server signing = mandatory
  smb encrypt = required
  map to guest = Bad User
  netbios name = myhost
  workgroup = lab
  server string = a test server
  smbkitd:max credits = 512
  smbkitd:max open files = 100
  smbkitd:max connections = 7
  log level = 2
  log file = /var/log/smbkitd.log
)");
  const auto& g = c.global;
  EXPECT_EQ(g.smb_ports, (std::vector<uint16_t>{4450, 4451, 4452}));
  EXPECT_EQ(g.interfaces, (std::vector<std::string>{"lo", "127.0.0.1", "::1"}));
  EXPECT_TRUE(g.bind_interfaces_only);
  EXPECT_EQ(g.private_dir, "/var/lib/x/private");
  EXPECT_EQ(g.min_protocol, SMB2_DIALECT_0210);
  EXPECT_EQ(g.max_protocol, SMB2_DIALECT_0302);
  EXPECT_EQ(g.server_signing, Setting::required);
  EXPECT_EQ(g.smb_encrypt, Setting::required);
  EXPECT_EQ(g.map_to_guest, MapToGuest::bad_user);
  EXPECT_EQ(g.netbios_name, "MYHOST");
  EXPECT_EQ(g.workgroup, "LAB");
  EXPECT_EQ(g.server_string, "a test server");
  EXPECT_EQ(g.max_credits, 512u);
  EXPECT_EQ(g.max_open_files, 100u);
  EXPECT_EQ(g.max_connections, 7u);
  EXPECT_EQ(g.log_level, 2);
  EXPECT_EQ(g.log_file, "/var/log/smbkitd.log");
}

TEST(ConfigParse, EveryShareParameterAndSynonyms) {
  Config c = parse_ok(R"([data]
  path = /srv/data/
  comment = team data
  read only = no
  guest ok = yes
  valid users = alice, "mary jane" Bob
  smb encrypt = required
  browseable = no
[pub]
  path = /srv/pub
  writeable = yes
  public = yes
  browsable = no
[w1]
  path = /w1
  writable = yes
[w2]
  path = /w2
  write ok = no
)");
  ASSERT_EQ(c.shares.size(), 4u);
  const auto& d = c.shares[0];
  EXPECT_EQ(d.name, "data");
  EXPECT_EQ(d.path, "/srv/data");  // trailing '/' dropped
  EXPECT_EQ(d.comment, "team data");
  EXPECT_FALSE(d.read_only);
  EXPECT_TRUE(d.guest_ok);
  EXPECT_EQ(d.valid_users, (std::vector<std::string>{"alice", "mary jane", "Bob"}));
  EXPECT_EQ(d.encrypt, Setting::required);
  EXPECT_FALSE(d.browseable);
  EXPECT_FALSE(c.shares[1].read_only);
  EXPECT_TRUE(c.shares[1].guest_ok);
  EXPECT_FALSE(c.shares[1].browseable);
  EXPECT_FALSE(c.shares[2].read_only);
  EXPECT_TRUE(c.shares[3].read_only);
  EXPECT_EQ(c.shares[1].encrypt, std::nullopt);  // inherits [global]
}

TEST(ConfigParse, ShareDefaultsAreSamba) {
  Config c = parse_ok("[s]\npath = /s\n");
  ASSERT_EQ(c.shares.size(), 1u);
  EXPECT_TRUE(c.shares[0].read_only);
  EXPECT_FALSE(c.shares[0].guest_ok);
  EXPECT_TRUE(c.shares[0].browseable);
  EXPECT_TRUE(c.shares[0].valid_users.empty());
}

TEST(ConfigParse, NamesIgnoreCaseAndWhitespace) {
  Config c = parse_ok("[GLOBAL]\n  SMB   Ports=4455\n[s]\nPATH=/s\nReadOnly = NO\nGuest  OK = True\n");
  EXPECT_EQ(c.global.smb_ports, std::vector<uint16_t>{4455});
  ASSERT_EQ(c.shares.size(), 1u);
  EXPECT_FALSE(c.shares[0].read_only);
  EXPECT_TRUE(c.shares[0].guest_ok);
}

TEST(ConfigParse, BooleanSpellings) {
  for (auto [word, value] : std::vector<std::pair<std::string, bool>>{{"yes", true},
                                                                      {"True", true},
                                                                      {"on", true},
                                                                      {"1", true},
                                                                      {"no", false},
                                                                      {"FALSE", false},
                                                                      {"off", false},
                                                                      {"0", false}}) {
    Config c = parse_ok("[s]\npath = /s\nread only = " + word + "\n");
    ASSERT_EQ(c.shares.size(), 1u);
    EXPECT_EQ(c.shares[0].read_only, value) << word;
  }
}

TEST(ConfigParse, CommentsAndContinuationKeepLineNumbers) {
  Config c = parse_ok("; a comment\n# another\n[s]\n  path = /s\n  comment = one \\\ntwo\n");
  ASSERT_EQ(c.shares.size(), 1u);
  EXPECT_EQ(c.shares[0].comment, "one two");
  // Line 7 follows a continued line (5-6): the error must say 7.
  std::string e = parse_err("[s]\npath = /s\n\n\ncomment = one \\\ntwo\nbogus = 1\n");
  EXPECT_NE(e.find("t.conf:7:"), std::string::npos) << e;
  // An error in a continued line names its first line.
  e = parse_err("[s]\npath = /s\nbogus = one \\\ntwo\n");
  EXPECT_NE(e.find("t.conf:3:"), std::string::npos) << e;
}

TEST(ConfigParse, ParametersBeforeAnySectionAreGlobal) {
  Config c = parse_ok("smb ports = 4460\n[s]\npath=/s\n");
  EXPECT_EQ(c.global.smb_ports, std::vector<uint16_t>{4460});
}

TEST(ConfigParse, UnknownParameterNamesItAndTheLine) {
  std::string e = parse_err("[global]\n  workgroup = W\n  frobnicate level = 3\n");
  EXPECT_NE(e.find("t.conf:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown parameter 'frobnicate level'"), std::string::npos) << e;
}

TEST(ConfigParse, MalformedValuesNameTheParameter) {
  std::string e = parse_err("[s]\npath = /s\nread only = maybe\n");
  EXPECT_NE(e.find("t.conf:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("'maybe'"), std::string::npos) << e;
  EXPECT_NE(e.find("'read only'"), std::string::npos) << e;
  EXPECT_NE(parse_err("smb ports = 70000\n").find("'smb ports'"), std::string::npos);
  EXPECT_NE(parse_err("smb ports = 445x\n").find("'smb ports'"), std::string::npos);
  EXPECT_NE(parse_err("smb ports = 445 445\n").find("'smb ports'"), std::string::npos);
  EXPECT_NE(parse_err("server signing = sometimes\n").find("'server signing'"), std::string::npos);
  EXPECT_NE(parse_err("smb encrypt = sometimes\n").find("'smb encrypt'"), std::string::npos);
  EXPECT_NE(parse_err("map to guest = always\n").find("'map to guest'"), std::string::npos);
  EXPECT_NE(parse_err("smbkitd:max credits = 0\n").find("'smbkitd:max credits'"), std::string::npos);
  EXPECT_NE(parse_err("smbkitd:max credits = 65536\n").find("'smbkitd:max credits'"), std::string::npos);
  EXPECT_NE(parse_err("smbkitd:max connections = -1\n").find("'smbkitd:max connections'"), std::string::npos);
  EXPECT_NE(parse_err("netbios name = waytoolongforanetbiosname\n").find("'netbios name'"), std::string::npos);
  EXPECT_NE(parse_err("private dir = relative/dir\n").find("'private dir'"), std::string::npos);
  EXPECT_NE(parse_err("interfaces = eth0\n").find("eth0"), std::string::npos);
  EXPECT_NE(parse_err("log level = 9\n").find("'log level'"), std::string::npos);
}

// The data path's switches (docs/smbkitd.md): on by default, each turned
// off or retuned by name, sizes bounded by the largest READ.
TEST(ConfigParse, DataPathSwitches) {
  Config d = parse_ok("");
  EXPECT_TRUE(d.global.zero_copy_reads);
  EXPECT_TRUE(d.global.parallel_crypto);
  EXPECT_EQ(d.global.zero_copy_min, 64u * 1024);
  EXPECT_FALSE(d.global.zero_copy_same_host);
  EXPECT_EQ(d.global.parallel_crypto_min, 256u * 1024);
  Config c = parse_ok(R"([global]
  smbkitd:zero copy reads = no
  smbkitd:zero copy same host = yes
  smbkitd:zero copy min = 4096
  smbkitd:parallel crypto = no
  smbkitd:parallel crypto min = 1
)");
  EXPECT_FALSE(c.global.zero_copy_reads);
  EXPECT_TRUE(c.global.zero_copy_same_host);
  EXPECT_EQ(c.global.zero_copy_min, 4096u);
  EXPECT_FALSE(c.global.parallel_crypto);
  EXPECT_EQ(c.global.parallel_crypto_min, 1u);
  EXPECT_NE(parse_err("smbkitd:zero copy min = 99999999\n").find("'smbkitd:zero copy min'"), std::string::npos);
  EXPECT_NE(parse_err("smbkitd:parallel crypto = maybe\n").find("'smbkitd:parallel crypto'"), std::string::npos);
}

// smbkitd never takes kernel share modes or kernel oplocks: "no" is what
// it does, so a file written for smbd that says so is accepted, and "yes"
// is refused by name rather than ignored.
TEST(ConfigParse, KernelShareModesAndOplocksOnlyAsNo) {
  parse_ok("kernel oplocks = no\n[s]\npath = /s\nkernel share modes = no\nkernel oplocks = False\n");
  std::string e = parse_err("[s]\npath = /s\nkernel share modes = yes\n");
  EXPECT_NE(e.find("'kernel share modes = yes' is not supported"), std::string::npos) << e;
  EXPECT_NE(parse_err("kernel oplocks = yes\n").find("'kernel oplocks = yes'"), std::string::npos);
  EXPECT_NE(parse_err("kernel oplocks = perhaps\n").find("'kernel oplocks'"), std::string::npos);
}

TEST(ConfigParse, ParameterInTheWrongSection) {
  std::string e = parse_err("[global]\npath = /srv\n");
  EXPECT_NE(e.find("t.conf:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("'path' is a share parameter"), std::string::npos) << e;
  e = parse_err("[s]\npath = /s\nsmb ports = 445\n");
  EXPECT_NE(e.find("t.conf:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("'smb ports' is a [global] parameter"), std::string::npos) << e;
}

TEST(ConfigParse, SmbEncryptIsGlobalAndPerShare) {
  Config c = parse_ok("[global]\nsmb encrypt = off\n[s]\npath=/s\nserver smb encrypt = desired\n");
  EXPECT_EQ(c.global.smb_encrypt, Setting::off);
  ASSERT_EQ(c.shares.size(), 1u);
  EXPECT_EQ(c.shares[0].encrypt, Setting::desired);
  EXPECT_EQ(parse_ok("smb encrypt = if_required\n").global.smb_encrypt, Setting::enabled);
  EXPECT_EQ(parse_ok("smb encrypt = mandatory\n").global.smb_encrypt, Setting::required);
}

TEST(ConfigParse, SigningCannotBeTurnedOffForSmb2) {
  // smb.conf(5): with SMB2 "disabled" is treated as "auto".
  EXPECT_EQ(parse_ok("server signing = disabled\n").global.server_signing, Setting::enabled);
  EXPECT_EQ(parse_ok("server signing = auto\n").global.server_signing, Setting::enabled);
  EXPECT_EQ(parse_ok("server signing = default\n").global.server_signing, Setting::enabled);
  EXPECT_EQ(parse_ok("server signing = required\n").global.server_signing, Setting::required);
}

TEST(ConfigParse, MapToGuestValues) {
  EXPECT_EQ(parse_ok("map to guest = never\n").global.map_to_guest, MapToGuest::never);
  EXPECT_EQ(parse_ok("map to guest = baduser\n").global.map_to_guest, MapToGuest::bad_user);
  EXPECT_EQ(parse_ok("map to guest = Bad Password\n").global.map_to_guest, MapToGuest::bad_user);
  EXPECT_NE(parse_err("map to guest = Bad Uid\n").find("not supported"), std::string::npos);
}

TEST(ConfigParse, ProtocolNamesAsSamba) {
  auto max_of = [](const std::string& v) { return parse_ok("server max protocol = " + v + "\n").global.max_protocol; };
  EXPECT_EQ(max_of("SMB2_02"), SMB2_DIALECT_0202);
  EXPECT_EQ(max_of("smb2_10"), SMB2_DIALECT_0210);
  EXPECT_EQ(max_of("SMB2"), SMB2_DIALECT_0210);  // "by default SMB2 selects the SMB2_10 variant"
  EXPECT_EQ(max_of("SMB3_00"), SMB2_DIALECT_0300);
  EXPECT_EQ(max_of("SMB3_02"), SMB2_DIALECT_0302);
  EXPECT_EQ(max_of("SMB3_11"), SMB2_DIALECT_0311);
  EXPECT_EQ(max_of("SMB3"), SMB2_DIALECT_0311);  // "SMB3 selects the SMB3_11 variant"
  EXPECT_EQ(max_of("default"), SMB2_DIALECT_0311);
  EXPECT_EQ(parse_ok("server min protocol = SMB3\n").global.min_protocol, SMB2_DIALECT_0311);
  EXPECT_EQ(parse_ok("min protocol = SMB2\n").global.min_protocol, SMB2_DIALECT_0210);
  for (std::string smb1 : {"NT1", "LANMAN1", "LANMAN2", "CORE", "COREPLUS"}) {
    std::string e = parse_err("server min protocol = " + smb1 + "\n");
    EXPECT_NE(e.find("SMB1 is not supported"), std::string::npos) << e;
    EXPECT_NE(e.find("server min protocol"), std::string::npos) << e;
  }
  EXPECT_NE(parse_err("server max protocol = SMB4\n").find("'server max protocol'"), std::string::npos);
}

TEST(ConfigParse, MinProtocolAboveMaxIsRefused) {
  std::string e = parse_err("server max protocol = SMB2_10\nserver min protocol = SMB3_00\n");
  EXPECT_NE(e.find("t.conf:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("SMB3_00"), std::string::npos) << e;
  EXPECT_NE(e.find("SMB2_10"), std::string::npos) << e;
  Config c = parse_ok("server min protocol = SMB3_11\nserver max protocol = SMB3\n");
  EXPECT_EQ(c.global.min_protocol, c.global.max_protocol);
}

TEST(ConfigParse, ShareErrors) {
  std::string e = parse_err("[s]\npath=/a\n[other]\npath=/b\n[S]\npath=/c\n");
  EXPECT_NE(e.find("t.conf:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("duplicate share 'S'"), std::string::npos) << e;

  e = parse_err("[global]\n[nopath]\ncomment = x\n[next]\npath=/n\n");
  EXPECT_NE(e.find("t.conf:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("'nopath' has no 'path'"), std::string::npos) << e;
  EXPECT_NE(parse_err("[last]\ncomment = x\n").find("'last' has no 'path'"), std::string::npos);

  e = parse_err("[s]\npath = srv/data\n");
  EXPECT_NE(e.find("'path'"), std::string::npos) << e;
  EXPECT_NE(e.find("absolute"), std::string::npos) << e;
  EXPECT_NE(parse_err("[s]\npath = /home/%U\n").find("substitutions"), std::string::npos);

  EXPECT_NE(parse_err("[IPC$]\npath=/x\n").find("reserved"), std::string::npos);
  EXPECT_NE(parse_err("[ipc$]\npath=/x\n").find("reserved"), std::string::npos);
  EXPECT_NE(parse_err("[homes]\npath=/x\n").find("[homes] is not supported"), std::string::npos);
  EXPECT_NE(parse_err("[printers]\npath=/x\n").find("[printers] is not supported"), std::string::npos);
  EXPECT_NE(parse_err("[a/b]\npath=/x\n").find("may not hold"), std::string::npos);
  EXPECT_NE(parse_err("[]\npath=/x\n").find("empty share name"), std::string::npos);
  EXPECT_NE(parse_err("[s\npath=/x\n").find("malformed section header"), std::string::npos);
  EXPECT_NE(parse_err("just words\n").find("expected 'name = value'"), std::string::npos);
}

TEST(ConfigParse, ValidUsersRefusesGroups) {
  std::string e = parse_err("[s]\npath=/s\nvalid users = alice @staff\n");
  EXPECT_NE(e.find("t.conf:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("'@staff' is a group"), std::string::npos) << e;
  EXPECT_NE(parse_err("[s]\npath=/s\nvalid users = a:b\n").find("':'"), std::string::npos);
}

TEST(ConfigParse, GlobalSectionMayRepeat) {
  Config c = parse_ok("[global]\nworkgroup = A\n[s]\npath=/s\n[global]\nnetbios name = B\n");
  EXPECT_EQ(c.global.workgroup, "A");
  EXPECT_EQ(c.global.netbios_name, "B");
  EXPECT_EQ(c.shares.size(), 1u);
}

TEST(ConfigParse, LastValueWins) { EXPECT_EQ(parse_ok("workgroup = A\nworkgroup = B\n").global.workgroup, "B"); }

TEST(ConfigFindShare, IgnoresCase) {
  Config c = parse_ok("[Data]\npath=/d\n");
  ASSERT_NE(c.find_share("data"), nullptr);
  EXPECT_EQ(c.find_share("DATA")->path, "/d");
  EXPECT_EQ(c.find_share("dat"), nullptr);
}

TEST(ConfigLoad, MissingFileNamesIt) {
  auto r = load_config("/nonexistent/smbkitd-test.conf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("/nonexistent/smbkitd-test.conf"), std::string::npos);
  EXPECT_EQ(r.error().sys_errno, ENOENT);
}

TEST(ShareArg, QuickFormIsWritableUnlessRo) {
  Config c;
  ASSERT_TRUE(add_share_arg(c, "data=/srv/data/").ok());
  ASSERT_TRUE(add_share_arg(c, "docs=/srv/docs,ro").ok());
  ASSERT_TRUE(add_share_arg(c, "odd=/srv/a,b").ok());
  ASSERT_EQ(c.shares.size(), 3u);
  EXPECT_EQ(c.shares[0].path, "/srv/data");
  EXPECT_FALSE(c.shares[0].read_only);
  EXPECT_TRUE(c.shares[1].read_only);
  EXPECT_EQ(c.shares[2].path, "/srv/a,b");  // only known options are taken from the end
  EXPECT_EQ(c.global.map_to_guest, MapToGuest::never);
}

TEST(ShareArg, GuestMapsUnknownUsersToGuest) {
  Config c;
  ASSERT_TRUE(add_share_arg(c, "pub=/srv/pub,ro,guest").ok());
  ASSERT_EQ(c.shares.size(), 1u);
  EXPECT_TRUE(c.shares[0].guest_ok);
  EXPECT_TRUE(c.shares[0].read_only);
  EXPECT_EQ(c.global.map_to_guest, MapToGuest::bad_user);
}

TEST(ShareArg, ErrorsNameTheArgument) {
  Config c;
  auto r = add_share_arg(c, "data");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("--share data"), std::string::npos) << r.error().context;
  r = add_share_arg(c, "data=srv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("absolute"), std::string::npos) << r.error().context;
  r = add_share_arg(c, "IPC$=/x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("reserved"), std::string::npos);
  ASSERT_TRUE(add_share_arg(c, "d=/x").ok());
  r = add_share_arg(c, "D=/y");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("duplicate share"), std::string::npos);
}

}  // namespace
}  // namespace smbkit::server

namespace smbkit::server {
namespace {

TEST(ConfigSambaLimits, IoSizesCreditsAndAlgorithms) {
  Config c = parse_ok(
      "smb2 max read = 65536\nsmb2 max write = 131072\nsmb2 max trans = 65536\nsmb2 max credits = 16\n"
      "server smb3 encryption algorithms = AES-256-CCM, aes-128-gcm\n"
      "server smb3 signing algorithms = AES-128-CMAC\n");
  EXPECT_EQ(c.global.max_read, 65536u);
  EXPECT_EQ(c.global.max_write, 131072u);
  EXPECT_EQ(c.global.max_trans, 65536u);
  EXPECT_EQ(c.global.max_credits, 16u);
  EXPECT_EQ(c.global.encryption_algorithms, (std::vector<uint16_t>{proto::AES_256_CCM, proto::AES_128_GCM}));
  EXPECT_EQ(c.global.signing_algorithms, (std::vector<uint16_t>{proto::AES_CMAC}));
  std::string e = parse_err("server smb3 encryption algorithms = AES-512-XTS\n");
  EXPECT_NE(e.find("AES-512-XTS"), std::string::npos) << e;
  e = parse_err("smb2 max read = 1024\n");
  EXPECT_NE(e.find("smb2 max read"), std::string::npos) << e;
}

}  // namespace
}  // namespace smbkit::server

namespace smbkit::server {
namespace {

TEST(ConfigParse, LeasesAndOplocksAsSamba) {
  Config d = parse_ok("[s]\npath = /tmp\n");
  EXPECT_TRUE(d.global.smb2_leases);
  EXPECT_TRUE(d.shares[0].oplocks);
  Config c = parse_ok("[global]\nsmb2 leases = no\n[s]\npath = /tmp\noplocks = no\n");
  EXPECT_FALSE(c.global.smb2_leases);
  EXPECT_FALSE(c.shares[0].oplocks);
}

}  // namespace
}  // namespace smbkit::server
