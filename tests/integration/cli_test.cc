// The smbkit binary itself, run as a user would, against a real smbd.
// Every command runs in the matrix cell (SMBKIT_TEST_VERS/SEC, see
// run_smbkit in fixture.h) unless the test names its own --vers, --sign
// or --seal.
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "fixture.h"

namespace smbkit_it {
namespace {

class Cli : public ServerSuite<Cli> {
 protected:
  // The smbkit binary in the matrix cell (run_smbkit, fixture.h).
  static st::SambaServer::Output smbkit(const std::vector<std::string>& args,
                                        const char* password = st::SambaServer::password(), int timeout_s = 120) {
    return run_smbkit(args, password, timeout_s);
  }
  static std::string url(const std::string& path = "") {
    return server().url("share") + (path.empty() ? "" : "/" + path);
  }
  static size_t lines(const std::string& s) {
    size_t n = 0;
    for (char c : s) n += c == '\n';
    if (!s.empty() && s.back() != '\n') n++;
    return n;
  }
};

// Files (relative path -> bytes) and directories (relative path -> empty
// marker) under root.
std::map<std::string, std::optional<Bytes>> snapshot(const std::string& root) {
  std::map<std::string, std::optional<Bytes>> m;
  for (auto& e : fs::recursive_directory_iterator(root)) {
    std::string rel = fs::relative(e.path(), root).string();
    if (e.is_directory())
      m[rel] = std::nullopt;
    else
      m[rel] = read_local(e.path().string());
  }
  return m;
}

// smbclient in the same cell as smbkit: the cell's highest dialect and
// its protection, so the cross-check below is made per cell on both sides.
std::vector<std::string> smbclient_cell_args(const EnvCell& c) {
  std::vector<std::string> a;
  if (!c.vers.empty()) {
    switch (c.expected_dialect()) {
      case pr::SMB2_DIALECT_0202:
        a = {"--max-protocol", "SMB2_02"};
        break;
      case pr::SMB2_DIALECT_0210:
        a = {"--max-protocol", "SMB2_10"};
        break;
      case pr::SMB2_DIALECT_0300:
        a = {"--max-protocol", "SMB3_00"};
        break;
      case pr::SMB2_DIALECT_0302:
        a = {"--max-protocol", "SMB3_02"};
        break;
      default:
        a = {"--max-protocol", "SMB3_11"};
        break;
    }
  }
  if (c.sign) a.push_back("--client-protection=sign");
  if (c.seal) a.push_back("--client-protection=encrypt");
  return a;
}

// The matrix must not silently run the default cell: the session smbkit
// sets up (its -v line) has the cell's dialect and security.
TEST_F(Cli, SessionIsTheMatrixCell) {
  auto cell = env_cell_spec();
  IT_ASSERT_OK(cell);
  auto o = smbkit({"-v", "ls", url()});
  ASSERT_EQ(o.status, 0) << o.out;
  std::smatch m;
  const std::regex re("dialect 0x([0-9a-f]+) signing=(true|false) encryption=(true|false)");
  ASSERT_TRUE(std::regex_search(o.out, m, re)) << o.out;
  EXPECT_EQ(std::stoul(m[1].str(), nullptr, 16), cell->expected_dialect()) << o.out;
  // A sealed session is not also signed (encryption authenticates).
  EXPECT_EQ(m[2].str() == "true", cell->sign) << o.out;
  EXPECT_EQ(m[3].str() == "true", cell->seal) << o.out;
}

// What smbkit writes (put, cp -r, mkdir), smbclient reads back byte for
// byte, and what smbclient writes smbkit reads (get, cat, ls), both in
// the cell.
TEST_F(Cli, AgreesWithSmbclientBothWays) {
  auto cell = env_cell_spec();
  IT_ASSERT_OK(cell);
  const auto sc = smbclient_cell_args(*cell);
  st::TempDir tmp("smbkit-it");
  const std::string d = unique_name("cli-x");
  Bytes a = random_bytes((1u << 20) + 333, 7001), b = random_bytes(70001, 7002);
  ASSERT_TRUE(write_local(tmp.path() + "/a.bin", a));
  ASSERT_TRUE(fs::create_directories(tmp.path() + "/tree/sub"));
  ASSERT_TRUE(write_local(tmp.path() + "/tree/sub/b.bin", b));

  auto o = smbkit({"mkdir", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  o = smbkit({"put", tmp.path() + "/a.bin", url(d + "/a.bin")});
  ASSERT_EQ(o.status, 0) << o.out;
  o = smbkit({"cp", "-r", tmp.path() + "/tree", url(d + "/tree")});
  ASSERT_EQ(o.status, 0) << o.out;
  auto g = server().smbclient("share", "get " + d + "/a.bin " + tmp.path() + "/a.sc", sc);
  ASSERT_EQ(g.status, 0) << g.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/a.sc"), a);
  g = server().smbclient("share", "get " + d + "/tree/sub/b.bin " + tmp.path() + "/b.sc", sc);
  ASSERT_EQ(g.status, 0) << g.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/b.sc"), b);

  Bytes e = random_bytes((3u << 20) + 17, 7003);
  const std::string text = "written by smbclient\n";
  ASSERT_TRUE(write_local(tmp.path() + "/e.bin", e));
  ASSERT_TRUE(write_local(tmp.path() + "/f.txt", to_bytes(text)));
  g = server().smbclient(
      "share", "put " + tmp.path() + "/e.bin " + d + "/e.bin; put " + tmp.path() + "/f.txt " + d + "/f.txt", sc);
  ASSERT_EQ(g.status, 0) << g.out;
  o = smbkit({"get", url(d + "/e.bin"), tmp.path() + "/e.back"});
  ASSERT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/e.back"), e);
  o = smbkit({"cat", url(d + "/f.txt")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, text);
  o = smbkit({"ls", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lines(o.out), 4u) << o.out;
  for (const char* n : {"a.bin\n", "e.bin\n", "f.txt\n", "tree/\n"})
    EXPECT_NE(o.out.find(n), std::string::npos) << n << " in\n" << o.out;
  // And the tree smbkit copied up, as smbclient lists it.
  g = server().smbclient("share", "ls " + d + "/tree/sub/*", sc);
  ASSERT_EQ(g.status, 0) << g.out;
  EXPECT_TRUE(std::regex_search(g.out, std::regex("b\\.bin +A? *70001 "))) << g.out;
}

TEST_F(Cli, UnknownShareOneLineBadNetworkName) {
  std::string u = "smb://smbkit@127.0.0.1:" + std::to_string(server().port()) + "/nope";
  auto o = smbkit({"ls", u});
  EXPECT_EQ(o.status, 5) << o.out;  // not found
  EXPECT_EQ(lines(o.out), 1u) << o.out;
  EXPECT_NE(o.out.find("STATUS_BAD_NETWORK_NAME (no such share)"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.rfind("smbkit: ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("smb://"), std::string::npos) << "the error should name the target: " << o.out;
}

// smb://host/ lists the server's shares (srvsvc NetrShareEnum over IPC$),
// the same ones with the same types and comments as smbclient -L -g.
TEST_F(Cli, LsOfAHostListsItsSharesAsSmbclientDoes) {
  std::string u = "smb://smbkit@127.0.0.1:" + std::to_string(server().port()) + "/";
  auto o = smbkit({"ls", u});
  ASSERT_EQ(o.status, 0) << o.out;
  std::set<std::string> ours;
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, std::regex(R"((\S+) +(Disk|IPC|Printer|Device) *(.*))"))) << line;
    ours.insert(m[2].str() + "|" + m[1].str() + "|" + m[3].str());
  }
  auto ref = st::run_command({"smbclient", "-g", "-L", "//127.0.0.1", "-p", std::to_string(server().port()), "-U",
                              std::string(st::SambaServer::user())},
                             120, st::password_env(st::SambaServer::password()));
  ASSERT_EQ(ref.status, 0) << ref.out;
  std::set<std::string> theirs;
  std::istringstream rin(ref.out);
  for (std::string line; std::getline(rin, line);)
    if (line.rfind("Disk|", 0) == 0 || line.rfind("IPC|", 0) == 0) theirs.insert(line);
  EXPECT_TRUE(
      ours.count("Disk|share|") ||
      std::any_of(ours.begin(), ours.end(), [](const std::string& e) { return e.rfind("Disk|share|", 0) == 0; }))
      << o.out;
  EXPECT_EQ(ours, theirs) << "smbkit:\n" << o.out << "smbclient:\n" << ref.out;
}

TEST_F(Cli, WrongPasswordIsLogonFailure) {
  auto o = smbkit({"ls", url()}, "wrong-password");
  EXPECT_EQ(o.status, 4) << o.out;  // authentication failed
  EXPECT_EQ(lines(o.out), 1u) << o.out;
  EXPECT_NE(o.out.find("STATUS_LOGON_FAILURE"), std::string::npos) << o.out;
}

TEST_F(Cli, CredentialsFile) {
  st::TempDir tmp("smbkit-it");
  std::string good = tmp.path() + "/good.cred", bad = tmp.path() + "/bad.cred";
  {
    std::ofstream(good) << "# test\nusername=" << st::SambaServer::user()
                        << "\npassword=" << st::SambaServer::password() << "\n";
    std::ofstream(bad) << "username=" << st::SambaServer::user() << "\npassword=nope\n";
  }
  ASSERT_TRUE(write_local(share_dir() + "/cred-visible.txt", to_bytes("x")));
  // The URL carries no user: it comes from the file.
  std::string u = "smb://127.0.0.1:" + std::to_string(server().port()) + "/share";
  auto o = smbkit({"--credentials", good, "ls", u}, nullptr);
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("cred-visible.txt"), std::string::npos) << o.out;
  o = smbkit({"--credentials", bad, "ls", url()}, nullptr);
  EXPECT_EQ(o.status, 4) << o.out;  // authentication failed
  EXPECT_NE(o.out.find("STATUS_LOGON_FAILURE"), std::string::npos) << o.out;
}

TEST_F(Cli, RefusedPortWithinTimeout) {
  std::string u = "smb://smbkit@127.0.0.1:" + std::to_string(st::free_port()) + "/share";
  auto t0 = std::chrono::steady_clock::now();
  auto o = smbkit({"--timeout", "5", "ls", u}, st::SambaServer::password(), 30);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(o.status, 6) << o.out;  // connection failed
  EXPECT_EQ(lines(o.out), 1u) << o.out;
  EXPECT_NE(o.out.find("Connection refused"), std::string::npos) << o.out;
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(Cli, PutGetRoundTrip) {
  st::TempDir tmp("smbkit-it");
  Bytes data = random_bytes((1u << 20) + 12345, 99);
  std::string src = tmp.path() + "/up.bin", dst = tmp.path() + "/down.bin";
  ASSERT_TRUE(write_local(src, data));
  const std::string name = unique_name("cli-put") + ".bin";
  auto o = smbkit({"put", src, url(name)});
  ASSERT_EQ(o.status, 0) << o.out;
  auto remote = read_local(share_dir() + "/" + name);
  ASSERT_TRUE(remote.has_value());
  IT_EXPECT_SAME_BYTES(*remote, data);
  // No temporary upload names are left behind.
  for (auto& e : fs::directory_iterator(share_dir()))
    EXPECT_EQ(e.path().filename().string().find(".smbkit-part"), std::string::npos) << e.path();

  o = smbkit({"get", url(name), dst});
  ASSERT_EQ(o.status, 0) << o.out;
  auto down = read_local(dst);
  ASSERT_TRUE(down.has_value());
  IT_EXPECT_SAME_BYTES(*down, data);
  EXPECT_FALSE(fs::exists(dst + ".smbkit-part"));

  // Over a signed and a sealed session too.
  o = smbkit({"--seal", "get", url(name), tmp.path() + "/sealed.bin"});
  ASSERT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/sealed.bin"), data);
  o = smbkit({"--sign", "--vers", "2.1", "get", url(name), tmp.path() + "/signed.bin"});
  ASSERT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/signed.bin"), data);
}

TEST_F(Cli, SealOn2xFails) {
  auto o = smbkit({"--seal", "--vers", "2.1", "ls", url()});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_EQ(lines(o.out), 1u) << o.out;
  EXPECT_NE(o.out.find("encrypt"), std::string::npos) << o.out;
}

TEST_F(Cli, RecursiveCopyUpAndDown) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src + "/a/b/c"));
  ASSERT_TRUE(fs::create_directories(src + "/empty-dir"));
  ASSERT_TRUE(fs::create_directories(src + "/d"));
  const char* dirs[] = {"", "a", "a/b", "a/b/c", "d"};
  for (int i = 0; i < 20; i++) {
    std::string p = src + "/" + dirs[i % 5] + (dirs[i % 5][0] ? "/" : "") + "file" + std::to_string(i) + ".dat";
    ASSERT_TRUE(write_local(p, random_bytes(static_cast<size_t>(i) * 7919 + (i == 3 ? 0 : 1), 500 + i)));
  }
  auto want = snapshot(src);
  ASSERT_EQ(want.size(), 20u + 5u);  // 20 files, 5 directories

  const std::string remote = unique_name("cli-tree");
  auto o = smbkit({"cp", "-r", src, url(remote)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(snapshot(share_dir() + "/" + remote), want);

  const std::string back = tmp.path() + "/back";
  o = smbkit({"cp", "-r", url(remote), back});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(snapshot(back), want);

  // Without -r a directory is refused.
  o = smbkit({"cp", url(remote), tmp.path() + "/norec"});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_FALSE(fs::exists(tmp.path() + "/norec"));
}

// '*' and '?' in the last component pick the directory's entries by name
// (case-insensitive, as SMB names compare) for ls, get, cp and rm; a
// directory a file glob matches is skipped with a word; no match fails.
TEST_F(Cli, GlobsPickEntriesByTheLastComponent) {
  const std::string d = unique_name("cli-glob");
  ASSERT_EQ(smbkit({"mkdir", url(d)}).status, 0);
  ASSERT_EQ(smbkit({"mkdir", url(d + "/file_dir")}).status, 0);
  for (const char* n : {"file_000.txt", "file_001.txt", "file_002.log", "other.txt"})
    ASSERT_TRUE(write_local(share_dir() + "/" + d + "/" + n, to_bytes(std::string("content of ") + n)));

  auto o = smbkit({"ls", url(d + "/file_0*")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, "file_000.txt\nfile_001.txt\nfile_002.log\n");
  o = smbkit({"ls", url(d + "/*.TXT")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, "file_000.txt\nfile_001.txt\nother.txt\n");

  st::TempDir tmp("smbkit-it");
  o = smbkit({"get", url(d + "/file_00?.txt"), tmp.path()});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(slurp_str(tmp.path() + "/file_000.txt"), "content of file_000.txt");
  EXPECT_EQ(slurp_str(tmp.path() + "/file_001.txt"), "content of file_001.txt");
  EXPECT_FALSE(fs::exists(tmp.path() + "/file_002.log"));
  EXPECT_FALSE(fs::exists(tmp.path() + "/other.txt"));

  // A directory among the matches of get: skipped, the files still come.
  st::TempDir tmp2("smbkit-it");
  o = smbkit({"get", url(d + "/file_*"), tmp2.path()});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("file_dir: a directory, skipped"), std::string::npos) << o.out;
  EXPECT_EQ(slurp_str(tmp2.path() + "/file_002.log"), "content of file_002.log");
  EXPECT_FALSE(fs::exists(tmp2.path() + "/file_dir"));
  // Into a file rather than a directory: refused before anything moves.
  o = smbkit({"get", url(d + "/file_*"), tmp2.path() + "/file_002.log"});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("a pattern downloads into a directory"), std::string::npos) << o.out;
  // cp -r takes the directory too.
  st::TempDir tmp3("smbkit-it");
  o = smbkit({"cp", "-r", url(d + "/file_*"), tmp3.path()});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(fs::is_directory(tmp3.path() + "/file_dir"));
  EXPECT_EQ(slurp_str(tmp3.path() + "/file_001.txt"), "content of file_001.txt");

  o = smbkit({"rm", url(d + "/file_00?.*")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d + "/file_000.txt"));
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d + "/file_002.log"));
  EXPECT_TRUE(fs::exists(share_dir() + "/" + d + "/other.txt"));
  EXPECT_TRUE(fs::is_directory(share_dir() + "/" + d + "/file_dir"));

  o = smbkit({"ls", url(d + "/nothing*")});
  EXPECT_EQ(o.status, 5) << o.out;  // not found
  EXPECT_NE(o.out.find("no match"), std::string::npos) << o.out;
}

// A glob whose matches partly fail goes on with the rest and exits 3
// (partial), each failure named by its URL, as a tree copy does.
TEST_F(Cli, GlobWithSomeFailuresIsPartial) {
  const std::string d = unique_name("cli-glob-part");
  const std::string dir = share_dir() + "/" + d;
  // root's sticky directory: the session's user may delete its own files
  // in it, not root's (and root's is read-only as well).
  ASSERT_TRUE(fs::create_directory(dir));
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  for (const char* n : {"f1.txt", "f2.txt", "f3.txt"})
    ASSERT_TRUE(write_local(dir + "/" + n, to_bytes(std::string("content of ") + n)));
  ASSERT_EQ(::chown((dir + "/f2.txt").c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod((dir + "/f2.txt").c_str(), 0444), 0);

  // get: a directory where f2.txt would land is not replaced.
  st::TempDir tmp("smbkit-it");
  ASSERT_TRUE(fs::create_directory(tmp.path() + "/f2.txt"));
  const std::string shown = "/share/" + d + "/f2.txt: ";  // in the match's URL
  auto o = smbkit({"get", url(d + "/f*"), tmp.path()});
  EXPECT_EQ(o.status, 3) << o.out;
  EXPECT_NE(o.out.find("smbkit: smb://"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(shown), std::string::npos) << o.out;
  EXPECT_EQ(lines(o.out), 1u) << o.out;
  EXPECT_EQ(slurp_str(tmp.path() + "/f1.txt"), "content of f1.txt");
  EXPECT_EQ(slurp_str(tmp.path() + "/f3.txt"), "content of f3.txt");
  EXPECT_TRUE(fs::is_directory(tmp.path() + "/f2.txt"));

  // rm: f2.txt cannot be deleted; the others go.
  o = smbkit({"rm", url(d + "/f*")});
  EXPECT_EQ(o.status, 3) << o.out;
  EXPECT_NE(o.out.find(shown), std::string::npos) << o.out;
  EXPECT_EQ(lines(o.out), 1u) << o.out;
  EXPECT_FALSE(fs::exists(dir + "/f1.txt"));
  EXPECT_TRUE(fs::exists(dir + "/f2.txt"));
  EXPECT_FALSE(fs::exists(dir + "/f3.txt"));
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  fs::remove_all(dir);
}

TEST_F(Cli, MkdirRmdirRmMv) {
  const std::string d = unique_name("cli-dir");
  auto o = smbkit({"mkdir", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(fs::is_directory(share_dir() + "/" + d));

  // mkdir of an existing directory fails and says so.
  o = smbkit({"mkdir", url(d)});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("STATUS_OBJECT_NAME_COLLISION"), std::string::npos) << o.out;

  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/one.txt", to_bytes("one")));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/two.txt", to_bytes("two")));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/three.txt", to_bytes("three")));

  // rmdir of a non-empty directory fails and leaves it.
  o = smbkit({"rmdir", url(d)});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("STATUS_DIRECTORY_NOT_EMPTY"), std::string::npos) << o.out;
  EXPECT_TRUE(fs::is_directory(share_dir() + "/" + d));

  // mv with a share-relative path, then with a full URL; replaces a target.
  o = smbkit({"mv", url(d + "/one.txt"), d + "/uno.txt"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d + "/one.txt"));
  EXPECT_EQ(slurp_str(share_dir() + "/" + d + "/uno.txt"), "one");
  o = smbkit({"mv", url(d + "/uno.txt"), url(d + "/two.txt")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d + "/uno.txt"));
  EXPECT_EQ(slurp_str(share_dir() + "/" + d + "/two.txt"), "one");

  // rm several at once.
  o = smbkit({"rm", url(d + "/two.txt"), url(d + "/three.txt")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(fs::is_empty(share_dir() + "/" + d));

  // rm of a missing file.
  o = smbkit({"rm", url(d + "/gone.txt")});
  EXPECT_EQ(o.status, 5) << o.out;  // not found
  EXPECT_NE(o.out.find("STATUS_OBJECT_NAME_NOT_FOUND"), std::string::npos) << o.out;

  o = smbkit({"rmdir", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d));
}

TEST_F(Cli, LsStatCatDf) {
  const std::string d = unique_name("cli-ls");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d));
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d + "/subdir"));
  const std::string text = "hello from the server\nsecond line\n";
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/hello.txt", to_bytes(text)));

  auto o = smbkit({"ls", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, "hello.txt\nsubdir/\n");

  o = smbkit({"ls", "-l", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lines(o.out), 2u) << o.out;
  EXPECT_NE(o.out.find("- "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(std::to_string(text.size()) + " "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("d "), std::string::npos) << o.out;

  o = smbkit({"stat", url(d + "/hello.txt")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("Size: " + std::to_string(text.size()) + "\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("regular file"), std::string::npos) << o.out;
  o = smbkit({"stat", url(d + "/subdir")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("directory"), std::string::npos) << o.out;

  o = smbkit({"cat", url(d + "/hello.txt")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, text);

  o = smbkit({"cat", url(d + "/missing.txt")});
  EXPECT_EQ(o.status, 5) << o.out;  // not found
  EXPECT_NE(o.out.find("STATUS_OBJECT_NAME_NOT_FOUND"), std::string::npos) << o.out;

  o = smbkit({"df", url()});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(lines(o.out), 2u) << o.out;
  EXPECT_NE(o.out.find("//127.0.0.1/share"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Size"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("%"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace smbkit_it
