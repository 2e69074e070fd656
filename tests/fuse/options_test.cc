// The mount.cifs style option parser and the inode table.
#include <gtest/gtest.h>

#include <fstream>

#include "fuse/filesystem.h"
#include "fuse/inode_table.h"
#include "fuse/options.h"
#include "proto/constants.h"
#include "support/temp_dir.h"

namespace smbkit::fuse {
namespace {

using namespace proto;

MountOptions parse_ok(const std::string& opts) {
  auto r = parse_mount_args({"//srv/share", "/mnt", "-o", opts});
  EXPECT_TRUE(r.ok()) << opts << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : MountOptions{};
}

std::string parse_err(const std::string& opts) {
  auto r = parse_mount_args({"//srv/share", "/mnt", "-o", opts});
  EXPECT_FALSE(r.ok()) << opts << " should fail";
  return r.ok() ? std::string() : r.error().message();
}

TEST(MountArgs, TargetAndMountpoint) {
  auto r = parse_mount_args({"//host:4450/data/sub/dir", "/mnt/x", "-f", "-v"});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->host, "host");
  EXPECT_EQ(r->port, 4450);
  EXPECT_EQ(r->share, "data");
  EXPECT_EQ(r->prefix, "sub/dir");
  EXPECT_EQ(r->mountpoint, "/mnt/x");
  EXPECT_TRUE(r->foreground);
  EXPECT_EQ(r->verbose, 1);
  // Defaults (mount.cifs).
  EXPECT_EQ(r->cache, CacheMode::strict);
  EXPECT_EQ(r->acregmax, 1u);
  EXPECT_EQ(r->acdirmax, 1u);
  EXPECT_EQ(r->file_mode, 0755u);
  EXPECT_EQ(r->dir_mode, 0755u);
  EXPECT_FALSE(r->ro);
  EXPECT_EQ(r->dialects.size(), 5u);
}

TEST(MountArgs, SmbUrlTargetAndHelperFlags) {
  auto r = parse_mount_args({"smb://dom;alice@h/s", "/m", "-s", "-n", "-ouid=7"});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->username, "alice");
  EXPECT_EQ(r->domain, "dom");
  EXPECT_EQ(r->uid, 7u);
}

TEST(MountArgs, Errors) {
  EXPECT_FALSE(parse_mount_args({"//h/s"}).ok());
  EXPECT_FALSE(parse_mount_args({"//h/s", "/m", "/extra"}).ok());
  EXPECT_FALSE(parse_mount_args({"//h/s", "/m", "-o"}).ok());
  EXPECT_FALSE(parse_mount_args({"//h", "/m"}).ok());  // no share
  auto r = parse_mount_args({"//h/s", "/m", "-x"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("-x"), std::string::npos);
  // A password in the URL is refused (process listings).
  EXPECT_FALSE(parse_mount_args({"smb://u:pw@h/s", "/m"}).ok());
}

TEST(MountOptions, Identity) {
  auto o = parse_ok("username=bob,password=s3cret,domain=CORP");
  EXPECT_EQ(o.username, "bob");
  EXPECT_EQ(o.password, "s3cret");
  EXPECT_TRUE(o.password_set);
  EXPECT_EQ(o.domain, "CORP");
  o = parse_ok("user=CORP/carol");
  EXPECT_EQ(o.username, "carol");
  EXPECT_EQ(o.domain, "CORP");
  o = parse_ok("user=dave%pw,dom=X,pass=other");
  EXPECT_EQ(o.username, "dave");
  EXPECT_EQ(o.password, "other");  // later wins
  EXPECT_EQ(o.domain, "X");
  o = parse_ok("workgroup=W");
  EXPECT_EQ(o.domain, "W");
  o = parse_ok("password=");
  EXPECT_TRUE(o.password_set);
  EXPECT_EQ(o.password, "");
}

TEST(MountOptions, PasswordWithCommas) {
  auto o = parse_ok("password=a,,b,,,,c,uid=5");
  EXPECT_EQ(o.password, "a,b,,c");
  EXPECT_EQ(o.uid, 5u);
}

// mask_passwords runs on the process's own argv (cmdline is world
// readable): every password value becomes '*', lengths unchanged, the
// other options untouched, and what is left still parses.
std::string masked(std::string s) {
  mask_passwords(s.data());
  return s;
}

TEST(MountOptions, MaskPasswords) {
  EXPECT_EQ(masked("password=s3cret"), "password=******");
  EXPECT_EQ(masked("uid=1,password=s3cret,ro"), "uid=1,password=******,ro");
  EXPECT_EQ(masked("pass=xy,gid=2"), "pass=**,gid=2");
  // ",," inside a password is a literal comma (mount.cifs): all masked.
  EXPECT_EQ(masked("password=a,,b,,,,c,uid=5"), "password=*********,uid=5");
  EXPECT_EQ(masked("username=dave%pw,dom=X"), "username=dave%**,dom=X");
  EXPECT_EQ(masked("user=CORP/eve%secret"), "user=CORP/eve%******");
  EXPECT_EQ(masked("user,username=u,ro"), "user,username=u,ro");
  EXPECT_EQ(masked("password=,uid=3"), "password=,uid=3");
  EXPECT_EQ(masked("a,,password=p,x=password=q"), "a,,password=*,x=password=q");
  // An option whose name only ends in "password=" is not one.
  EXPECT_EQ(masked("nopassword=1"), "nopassword=1");
  auto o = parse_ok(masked("username=u,password=pw,,x,uid=7"));
  EXPECT_EQ(o.username, "u");
  EXPECT_EQ(o.uid, 7u);
  EXPECT_EQ(o.password, "*****");
}

TEST(MountOptions, PasswordIsASecretString) {
  EXPECT_TRUE((std::is_same_v<decltype(MountOptions::password), SecretString>));
}

TEST(MountOptions, GuestAllowsAGuestSession) {
  auto o = parse_ok("guest");
  EXPECT_TRUE(o.anonymous);
  EXPECT_TRUE(o.allow_guest);
  o = parse_ok("username=u,password=p");
  EXPECT_FALSE(o.allow_guest);
  // sec=none asks for a null session by name; it does not consent to a
  // guest session in place of a named user (there is none).
  o = parse_ok("sec=none");
  EXPECT_TRUE(o.anonymous);
  EXPECT_FALSE(o.allow_guest);
  EXPECT_NE(parse_err("guest=1").find("guest"), std::string::npos);
}

TEST(MountOptions, PasswordNeverInErrors) {
  auto r = parse_mount_args({"//h/s", "/m", "-o", "password=TopSecret99,bogus"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().find("TopSecret99"), std::string::npos);
  EXPECT_EQ(describe(parse_ok("password=TopSecret99")).find("TopSecret99"), std::string::npos);
}

TEST(MountOptions, Transport) {
  auto o = parse_ok("port=4450,vers=3.1.1,sign,seal,max_credits=128");
  EXPECT_EQ(o.port, 4450);
  EXPECT_TRUE(o.port_set);
  EXPECT_EQ(o.vers, "3.1.1");
  ASSERT_EQ(o.dialects.size(), 1u);
  EXPECT_EQ(o.dialects[0], SMB2_DIALECT_0311);
  EXPECT_TRUE(o.sign);
  EXPECT_TRUE(o.seal);
  EXPECT_EQ(o.max_credits, 128u);
  // port= overrides the target's port, in either order.
  auto r = parse_mount_args({"//h:1000/s", "/m", "-o", "port=2000"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->port, 2000);
  for (const char* v : {"2.0", "2.1", "3", "3.0", "3.02", "3.1.1", "default"})
    EXPECT_FALSE(parse_ok(std::string("vers=") + v).dialects.empty()) << v;
  EXPECT_EQ(parse_ok("vers=3").dialects.size(), 3u);
}

TEST(MountOptions, Security) {
  EXPECT_FALSE(parse_ok("sec=ntlmssp").sign);
  EXPECT_TRUE(parse_ok("sec=ntlmsspi").sign);
  EXPECT_TRUE(parse_ok("sec=none").anonymous);
  EXPECT_TRUE(parse_ok("guest").anonymous);
  EXPECT_NE(parse_err("sec=krb5").find("'sec'"), std::string::npos);
}

TEST(MountOptions, IoSizes) {
  auto o = parse_ok("rsize=1048576,wsize=65536");
  EXPECT_EQ(o.rsize, 1048576u);
  EXPECT_EQ(o.wsize, 65536u);
  EXPECT_NE(parse_err("rsize=abc").find("'rsize'"), std::string::npos);
  EXPECT_NE(parse_err("wsize=100").find("'wsize'"), std::string::npos);       // too small
  EXPECT_NE(parse_err("rsize=999999999").find("'rsize'"), std::string::npos);  // too large
  EXPECT_NE(parse_err("rsize").find("'rsize'"), std::string::npos);            // no value
}

TEST(MountOptions, Rasize) {
  EXPECT_EQ(parse_ok("").rasize, 64u << 20);  // default cap of the adaptive window
  EXPECT_EQ(parse_ok("rasize=134217728").rasize, 134217728u);
  EXPECT_EQ(parse_ok("rasize=0").rasize, 0u);  // readahead off
  EXPECT_NE(describe(parse_ok("rasize=8388608")).find("rasize=8388608"), std::string::npos);
  EXPECT_NE(parse_err("rasize=abc").find("'rasize'"), std::string::npos);
  EXPECT_NE(parse_err("rasize=4294967295").find("'rasize'"), std::string::npos);  // above 1 GiB
  EXPECT_NE(parse_err("rasize").find("'rasize'"), std::string::npos);
}

TEST(MountOptions, RabudgetAndWbbudget) {
  EXPECT_EQ(parse_ok("").rabudget, 256ull << 20);
  EXPECT_EQ(parse_ok("rabudget=33554432").rabudget, 33554432u);
  EXPECT_EQ(parse_ok("rabudget=0").rabudget, 0u);  // no limit
  EXPECT_NE(describe(parse_ok("rabudget=8388608")).find("rabudget=8388608"), std::string::npos);
  EXPECT_NE(parse_err("rabudget=lots").find("'rabudget'"), std::string::npos);
  EXPECT_NE(parse_err("rabudget=99999999999999").find("'rabudget'"), std::string::npos);  // above 64 GiB
  EXPECT_NE(parse_err("rabudget").find("'rabudget'"), std::string::npos);
  EXPECT_EQ(parse_ok("").wbbudget, 256ull << 20);
  EXPECT_EQ(parse_ok("wbbudget=1048576").wbbudget, 1048576u);
  EXPECT_EQ(parse_ok("wbbudget=0").wbbudget, 0u);
  EXPECT_NE(describe(parse_ok("wbbudget=8388608")).find("wbbudget=8388608"), std::string::npos);
  EXPECT_NE(parse_err("wbbudget=-1").find("'wbbudget'"), std::string::npos);
}

TEST(MountOptions, Splice) {
  // On unless turned off; asking for it only makes a refusal a warning.
  EXPECT_TRUE(parse_ok("").splice);
  EXPECT_FALSE(parse_ok("").splice_asked);
  EXPECT_TRUE(parse_ok("splice").splice_asked);
  EXPECT_FALSE(parse_ok("nosplice").splice);
  EXPECT_FALSE(parse_ok("splice,nosplice").splice);
  EXPECT_FALSE(parse_ok("splice,nosplice").splice_asked);
  EXPECT_TRUE(parse_ok("nosplice,splice").splice);
  EXPECT_NE(describe(parse_ok("splice")).find(",splice"), std::string::npos);
  EXPECT_NE(describe(parse_ok("nosplice")).find(",nosplice"), std::string::npos);
  EXPECT_EQ(describe(parse_ok("")).find("splice"), std::string::npos);
  EXPECT_NE(parse_err("splice=1").find("'splice'"), std::string::npos);
  EXPECT_NE(parse_err("nosplice=0").find("'nosplice'"), std::string::npos);
  // Signed or sealed payloads must be read to be checked: no splice.
  EXPECT_TRUE(FsConfig::from(parse_ok("")).splice);
  EXPECT_FALSE(FsConfig::from(parse_ok("nosplice")).splice);
  EXPECT_FALSE(FsConfig::from(parse_ok("sign")).splice);
  EXPECT_FALSE(FsConfig::from(parse_ok("splice,seal")).splice);
}

TEST(MountOptions, Caching) {
  EXPECT_EQ(parse_ok("cache=strict").cache, CacheMode::strict);
  EXPECT_EQ(parse_ok("cache=none").cache, CacheMode::none);
  EXPECT_EQ(parse_ok("cache=loose").cache, CacheMode::loose);
  EXPECT_TRUE(parse_ok("cache=none").data_direct());
  EXPECT_FALSE(parse_ok("cache=loose").data_direct());
  EXPECT_TRUE(parse_ok("directio").data_direct());
  EXPECT_TRUE(parse_ok("forcedirectio").directio);
  EXPECT_NE(parse_err("cache=sometimes").find("'cache'"), std::string::npos);
  auto o = parse_ok("actimeo=7");
  EXPECT_EQ(o.acregmax, 7u);
  EXPECT_EQ(o.acdirmax, 7u);
  o = parse_ok("acregmax=3,acdirmax=9");
  EXPECT_EQ(o.acregmax, 3u);
  EXPECT_EQ(o.acdirmax, 9u);
  EXPECT_EQ(parse_ok("actimeo=0").acregmax, 0u);
  EXPECT_NE(parse_err("actimeo=-1").find("'actimeo'"), std::string::npos);
  EXPECT_NE(parse_err("acregmax=1.5").find("'acregmax'"), std::string::npos);
}

TEST(MountOptions, Presentation) {
  auto o = parse_ok("uid=1000,gid=100,file_mode=0644,dir_mode=700,ro,noperm");
  EXPECT_EQ(o.uid, 1000u);
  EXPECT_TRUE(o.uid_set);
  EXPECT_EQ(o.gid, 100u);
  EXPECT_TRUE(o.gid_set);
  EXPECT_EQ(o.file_mode, 0644u);
  EXPECT_EQ(o.dir_mode, 0700u);
  EXPECT_TRUE(o.ro);
  EXPECT_TRUE(o.noperm);
  EXPECT_FALSE(parse_ok("ro,rw").ro);
  EXPECT_FALSE(parse_ok("noperm,perm").noperm);
  EXPECT_EQ(parse_ok("uid=root,gid=root").uid, 0u);
  EXPECT_NE(parse_err("uid=no-such-user-xyz").find("'uid'"), std::string::npos);
  EXPECT_NE(parse_err("gid=no-such-group-xyz").find("'gid'"), std::string::npos);
  EXPECT_NE(parse_err("file_mode=0999").find("'file_mode'"), std::string::npos);
  EXPECT_NE(parse_err("dir_mode=17777").find("'dir_mode'"), std::string::npos);
  EXPECT_NE(parse_err("ro=1").find("'ro'"), std::string::npos);  // flags take no value
  EXPECT_NE(parse_err("seal=yes").find("'seal'"), std::string::npos);
}

TEST(MountOptions, MaxCredits) {
  EXPECT_EQ(parse_ok("max_credits=8192").max_credits, 8192u);
  EXPECT_NE(parse_err("max_credits=5").find("'max_credits'"), std::string::npos);
  EXPECT_NE(parse_err("max_credits=x").find("'max_credits'"), std::string::npos);
}

TEST(MountOptions, Multichannel) {
  EXPECT_FALSE(parse_ok("").multichannel);
  EXPECT_EQ(parse_ok("").max_channels, 2u);  // cifs.ko's default
  auto o = parse_ok("multichannel,max_channels=4");
  EXPECT_TRUE(o.multichannel);
  EXPECT_EQ(o.max_channels, 4u);
  EXPECT_FALSE(parse_ok("multichannel,nomultichannel").multichannel);
  EXPECT_EQ(parse_ok("max_channels=16").max_channels, 16u);
  for (const char* bad : {"max_channels=0", "max_channels=17", "max_channels=x", "max_channels"})
    EXPECT_NE(parse_err(bad).find("'max_channels'"), std::string::npos) << bad;
  EXPECT_NE(parse_err("multichannel=1").find("'multichannel'"), std::string::npos);
}

TEST(MountOptions, Timeout) {
  EXPECT_EQ(parse_ok("").timeout_s, 30u);
  EXPECT_EQ(parse_ok("timeout=5").timeout_s, 5u);
  EXPECT_NE(parse_err("timeout=0").find("'timeout'"), std::string::npos);
  EXPECT_NE(parse_err("timeout=3601").find("'timeout'"), std::string::npos);
  EXPECT_NE(parse_err("timeout").find("'timeout'"), std::string::npos);
}

TEST(MountOptions, GenericAndIgnored) {
  auto o = parse_ok("defaults,_netdev,nofail,x-systemd.automount,noauto,user,nosuid,nodev,noexec");
  EXPECT_TRUE(o.username.empty());  // "user" alone is the fstab flag
  o = parse_ok("nounix,nobrl,noserverino,iocharset=utf8");
  EXPECT_EQ(o.ignored.size(), 3u);
  EXPECT_NE(parse_err("iocharset=latin1").find("'iocharset'"), std::string::npos);
}

TEST(MountOptions, HardSoftEchoInterval) {
  auto o = parse_ok("username=x");
  EXPECT_FALSE(o.hard);  // soft is the mount.cifs default
  EXPECT_EQ(o.echo_interval, 60u);
  o = parse_ok("hard,echo_interval=5");
  EXPECT_TRUE(o.hard);
  EXPECT_EQ(o.echo_interval, 5u);
  EXPECT_FALSE(parse_ok("hard,soft").hard);  // the last one wins
  EXPECT_TRUE(o.ignored.empty());
  EXPECT_NE(parse_err("echo_interval=0").find("'echo_interval'"), std::string::npos);
  EXPECT_NE(parse_err("echo_interval=601").find("'echo_interval'"), std::string::npos);
  EXPECT_NE(parse_err("hard=1").find("'hard'"), std::string::npos);
}

TEST(MountOptions, UnknownAndMalformedNameTheOption) {
  std::string e = parse_err("username=x,frobnicate,ro");
  EXPECT_NE(e.find("'frobnicate'"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown"), std::string::npos) << e;
  e = parse_err("bogus=1");
  EXPECT_NE(e.find("'bogus'"), std::string::npos) << e;
  EXPECT_NE(parse_err("port=0").find("'port'"), std::string::npos);
  EXPECT_NE(parse_err("port=65536").find("'port'"), std::string::npos);
  EXPECT_NE(parse_err("port=44x").find("'port'"), std::string::npos);
  EXPECT_NE(parse_err("vers=1.0").find("'vers'"), std::string::npos);
  EXPECT_NE(parse_err("credentials=").find("'credentials'"), std::string::npos);
  EXPECT_NE(parse_err("domain").find("'domain'"), std::string::npos);
  // Empty items are tolerated (trailing commas).
  parse_ok("ro,,rw,");
}

TEST(MountOptions, MultipleDashO) {
  auto r = parse_mount_args({"//h/s", "/m", "-o", "ro", "-o", "uid=3"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ro);
  EXPECT_EQ(r->uid, 3u);
}

TEST(Credentials, FileEnvAndPrecedence) {
  testing::TempDir tmp("smbkit-fuse-opt");
  std::string f = tmp.path() + "/cred";
  std::ofstream(f) << "username=fileuser\npassword=filepw\ndomain=FILEDOM\n";

  auto o = parse_ok("credentials=" + f);
  ASSERT_TRUE(resolve_credentials(o, "envpw").ok());
  EXPECT_EQ(o.username, "fileuser");
  EXPECT_EQ(o.password, "filepw");  // the file beats the environment
  EXPECT_EQ(o.domain, "FILEDOM");

  o = parse_ok("credentials=" + f + ",username=explicit,password=optpw");
  ASSERT_TRUE(resolve_credentials(o, "envpw").ok());
  EXPECT_EQ(o.username, "explicit");
  EXPECT_EQ(o.password, "optpw");

  o = parse_ok("username=u");
  ASSERT_TRUE(resolve_credentials(o, "envpw").ok());
  EXPECT_EQ(o.password, "envpw");
  EXPECT_TRUE(o.password_set);

  o = parse_ok("username=u");
  ASSERT_TRUE(resolve_credentials(o, nullptr).ok());
  EXPECT_FALSE(o.password_set);

  o = parse_ok("credentials=" + tmp.path() + "/missing");
  EXPECT_FALSE(resolve_credentials(o, nullptr).ok());

  o = parse_ok("username=u,password=p,sec=none");
  ASSERT_TRUE(resolve_credentials(o, "envpw").ok());
  EXPECT_TRUE(o.username.empty());
  EXPECT_TRUE(o.password.empty());
}

// ---- inode table -----------------------------------------------------------

TEST(InodeTable, LookupForget) {
  InodeTable t;
  EXPECT_EQ(t.path_of(InodeTable::kRoot), "");
  uint64_t a = t.lookup("a");
  EXPECT_NE(a, InodeTable::kRoot);
  EXPECT_EQ(t.lookup("a"), a);
  EXPECT_EQ(t.lookups(a), 2u);
  EXPECT_EQ(t.path_of(a), "a");
  t.forget(a, 1);
  EXPECT_EQ(t.path_of(a), "a");
  t.forget(a, 1);
  EXPECT_FALSE(t.path_of(a));
  EXPECT_FALSE(t.find("a"));
  EXPECT_NE(t.lookup("a"), a);  // a new number after forget
  t.forget(InodeTable::kRoot, 100);
  EXPECT_EQ(t.path_of(InodeTable::kRoot), "");
}

TEST(InodeTable, RenameMovesChildren) {
  InodeTable t;
  uint64_t d = t.lookup("d"), f = t.lookup("d/f"), g = t.lookup("d/sub/g"), other = t.lookup("dx");
  t.rename("d", "e/n");
  EXPECT_EQ(t.path_of(d), "e/n");
  EXPECT_EQ(t.path_of(f), "e/n/f");
  EXPECT_EQ(t.path_of(g), "e/n/sub/g");
  EXPECT_EQ(t.path_of(other), "dx");  // a sibling sharing the prefix is untouched
  EXPECT_FALSE(t.find("d/f"));
  EXPECT_EQ(t.find("e/n/f"), f);
}

TEST(InodeTable, RenameOverDetachesTarget) {
  InodeTable t;
  uint64_t a = t.lookup("a"), b = t.lookup("b");
  t.rename("a", "b");
  EXPECT_EQ(t.path_of(a), "b");
  EXPECT_FALSE(t.path_of(b));  // replaced: pathless until forgotten
  EXPECT_EQ(t.find("b"), a);
  t.forget(b, 1);  // forgetting the detached one leaves the new owner alone
  EXPECT_EQ(t.find("b"), a);
  EXPECT_EQ(t.size(), 2u);
}

TEST(InodeTable, Detach) {
  InodeTable t;
  uint64_t d = t.lookup("d"), c = t.lookup("d/c");
  t.detach("d");
  EXPECT_FALSE(t.path_of(d));
  EXPECT_FALSE(t.path_of(c));
  uint64_t d2 = t.lookup("d");
  EXPECT_NE(d2, d);
  t.forget(d, 1);
  EXPECT_EQ(t.find("d"), d2);
  EXPECT_EQ(InodeTable::join("", "x"), "x");
  EXPECT_EQ(InodeTable::join("a/b", "x"), "a/b/x");
}

}  // namespace
}  // namespace smbkit::fuse
