// Server names are data, not paths: the smbkit binary
// against a real smbd behind the tamper relay, which renames directory
// entries to what a hostile server could send.
#include <sys/stat.h>

#include <map>
#include <set>

#include "fixture.h"
#include "hostile_names.h"

namespace smbkit_it {
namespace {

using namespace std::string_literals;

class CliNames : public ServerSuite<CliNames> {
 protected:
  // A relay in front of the suite's smbd showing these names.
  static std::unique_ptr<st::TamperRelay> relay(std::map<std::string, std::string> shown_for_real,
                                                bool reach_real_files = true) {
    auto r = st::TamperRelay::start(server().port(),
                                    hostile::rename_hook(std::move(shown_for_real), reach_real_files));
    EXPECT_TRUE(r.ok()) << err_of(r);
    return r ? std::move(*r) : nullptr;
  }
  static std::string relay_url(const st::TamperRelay& r, const std::string& path) {
    return "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" + std::to_string(r.port()) + "/share/" +
           path;
  }
  // Unsigned (so the relay can rewrite) whatever the matrix cell says: the
  // names are the subject here, not the session.
  static st::SambaServer::Output smbkit(std::vector<std::string> args) {
    args.insert(args.begin(), {"--vers", "default"});
    return run_smbkit(args, st::SambaServer::password(), 120);
  }
};

// Every file and directory under root, relative, with a trailing '/' for
// directories.
std::set<std::string> tree_of(const std::string& root) {
  std::set<std::string> s;
  for (auto& e : fs::recursive_directory_iterator(root))
    s.insert(fs::relative(e.path(), root).string() + (e.is_directory() && !e.is_symlink() ? "/" : ""));
  return s;
}

const std::string kTermName = "\x1b]0;pwned\x07term\x1b[31m.txt";

// The share directory `d` with good entries and the ones the relay renames.
std::map<std::string, std::string> make_hostile_dir(const std::string& share, const std::string& d) {
  const std::string p = share + "/" + d;
  EXPECT_TRUE(mkdir_local(p));
  EXPECT_TRUE(write_local(p + "/good1.txt", to_bytes("good one")));
  EXPECT_TRUE(mkdir_local(p + "/gooddir"));
  EXPECT_TRUE(write_local(p + "/gooddir/inner.txt", to_bytes("inner")));
  EXPECT_TRUE(write_local(p + "/term.txt", to_bytes("terminal")));
  for (const char* f : {"esc1.txt", "ab.txt", "xy.txt", "cutname.txt", "dot.txt", "rej.txt"})
    EXPECT_TRUE(write_local(p + "/" + f, to_bytes(std::string("hostile ") + f)));
  EXPECT_TRUE(mkdir_local(p + "/escdir"));
  EXPECT_TRUE(write_local(p + "/escdir/x.txt", to_bytes("escaped")));
  EXPECT_TRUE(mkdir_local(p + "/dotdotdir"));
  EXPECT_TRUE(write_local(p + "/dotdotdir/y.txt", to_bytes("dotdot")));
  return {
      {"esc1.txt", "../ESC1"},
      {"escdir", "../../ESCAPED_DIR"},
      {"ab.txt", "a/b"},
      {"xy.txt", "x\\y"},
      {"cutname.txt", "nul\0cut"s},  // not "nul.txt": Samba mangles DOS device names
      {"dot.txt", "."},
      {"dotdotdir", ".."},  // a second ".." directory
      {"rej.txt", "\x1b[2Jrej/ected"},
      {"term.txt", kTermName},
  };
}

// cp -r through the relay: nothing lands outside the destination, the good
// entries (the one with a terminal sequence in its name included) are
// downloaded, every bad name is reported, escaped, and counted, and the
// status is 3 (some files failed).
TEST_F(CliNames, RecursiveCopyKeepsServerNamesInsideTheDestination) {
  const std::string d = unique_name("hostile");
  auto names = make_hostile_dir(share_dir(), d);
  auto r = relay(names);
  ASSERT_TRUE(r);
  st::TempDir tmp("smbkit-it");
  // ../ and ../../ from dest land in top/a and top.
  const std::string top = tmp.path() + "/top", dest = top + "/a/dest";
  ASSERT_TRUE(fs::create_directories(top + "/a"));

  auto o = smbkit({"cp", "-r", relay_url(*r, d), dest});
  EXPECT_EQ(o.status, 3) << o.out;
  // A second "." or ".." never reaches the walk: a name returned twice in
  // one listing is dropped by the listing itself (client/listing.h).
  EXPECT_NE(o.out.find(", 6 failed"), std::string::npos) << o.out;
  std::set<std::string> want = {"a/", "a/dest/", "a/dest/good1.txt", "a/dest/gooddir/", "a/dest/gooddir/inner.txt",
                                "a/dest/" + kTermName};
  EXPECT_EQ(tree_of(top), want);
  EXPECT_EQ(slurp_str(dest + "/good1.txt"), "good one");
  EXPECT_EQ(slurp_str(dest + "/gooddir/inner.txt"), "inner");
  EXPECT_EQ(slurp_str(dest + "/" + kTermName), "terminal");
  EXPECT_FALSE(fs::exists(dest + "/nul"));  // not cut short at the NUL
  // Each rejected name is reported, escaped; no raw control sequence from
  // the server reaches the terminal.
  for (const char* shown : {"../ESC1", "../../ESCAPED_DIR", "a/b", "x\\\\y", "nul\\x00cut", "\\x1b[2Jrej/ected"})
    EXPECT_NE(o.out.find(shown), std::string::npos) << shown << " in\n" << o.out;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\x07'), std::string::npos) << o.out;
}

// ls shows a server's terminal escape sequence as text.
TEST_F(CliNames, LsEscapesControlCharacters) {
  const std::string d = unique_name("hostile-ls");
  auto names = make_hostile_dir(share_dir(), d);
  auto r = relay(names);
  ASSERT_TRUE(r);
  for (bool long_format : {false, true}) {
    std::vector<std::string> args = {"ls"};
    if (long_format) args.push_back("-l");
    args.push_back(relay_url(*r, d));
    auto o = smbkit(args);
    ASSERT_EQ(o.status, 0) << o.out;
    EXPECT_NE(o.out.find("\\x1b]0;pwned\\x07term\\x1b[31m.txt"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("nul\\x00cut"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find('\x07'), std::string::npos) << o.out;
  }
}

// An error about a file the server named (here: listed, then not there
// when opened: smbd says STATUS_OBJECT_NAME_INVALID) shows the name
// escaped.
TEST_F(CliNames, ErrorLinesEscapeControlCharacters) {
  const std::string d = unique_name("hostile-error");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/gone.txt", to_bytes("x")));
  auto r = relay({{"gone.txt", "\x1b]0;pwned\x07gone"}}, false);
  ASSERT_TRUE(r);
  st::TempDir tmp("smbkit-it");
  auto o = smbkit({"cp", "-r", relay_url(*r, d), tmp.path() + "/dest"});
  EXPECT_EQ(o.status, 3) << o.out;
  EXPECT_NE(o.out.find("\\x1b]0;pwned\\x07gone"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\x07'), std::string::npos) << o.out;
}

// The progress line (only on a terminal: run under script(1)'s pty) shows
// the name escaped too. The file is larger than one READ: a tree copy
// shows progress for the files it transfers in pieces.
TEST_F(CliNames, ProgressEscapesControlCharacters) {
  if (::access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "script(1) not installed";
  const std::string d = unique_name("hostile-progress");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/term.txt", random_bytes((1u << 20) + 100000, 5)));
  auto r = relay({{"term.txt", kTermName}});
  ASSERT_TRUE(r);
  st::TempDir tmp("smbkit-it");
  std::string cmd = "env SMBKIT_PASSWORD=" + std::string(st::SambaServer::password()) + " " + kSmbkitBin +
                    " --vers default cp -r " + relay_url(*r, d) + " " + tmp.path() + "/dest";
  auto o = st::run_command({"/usr/bin/script", "-qec", cmd, "/dev/null"}, 120);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(fs::exists(tmp.path() + "/dest/" + kTermName));
  EXPECT_NE(o.out.find("\\x1b]0;pwned\\x07term\\x1b[31m.txt"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\x1b]0;pwned"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\x1b[31m"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace smbkit_it
