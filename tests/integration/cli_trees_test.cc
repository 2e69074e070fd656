// Trees through the smbkit binary against the real server: rm -r,
// mkdir -p, put from a pipe, cp -r both ways with modification times kept
// and many files in flight, a file the server refuses skipped with the
// rest copied (exit status 3 and a summary), and sync.
#include <sys/stat.h>

#include <cstring>

#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "fixture.h"
#include "support/tamper_relay.h"

namespace smbkit_it {
namespace {

class CliTrees : public ServerSuite<CliTrees> {
 protected:
  static st::SambaServer::Output smbkit(const std::vector<std::string>& args) { return run_smbkit(args); }
  static std::string url(const std::string& path) { return server().url("share") + "/" + path; }
};

// Every file and directory below root (relative names) with its content.
std::map<std::string, std::optional<Bytes>> snapshot(const std::string& root) {
  std::map<std::string, std::optional<Bytes>> m;
  for (auto& e : fs::recursive_directory_iterator(root)) {
    std::string rel = fs::relative(e.path(), root).string();
    if (e.is_directory()) m[rel] = std::nullopt;
    else m[rel] = read_local(e.path().string());
  }
  return m;
}

// Modification times (seconds) of the files and directories below root,
// and of root itself (as ".").
std::map<std::string, time_t> mtimes(const std::string& root) {
  std::map<std::string, time_t> m;
  struct stat rst {};
  if (::stat(root.c_str(), &rst) == 0) m["."] = rst.st_mtim.tv_sec;
  for (auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() && !e.is_directory()) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) == 0) m[fs::relative(e.path(), root).string()] = st.st_mtim.tv_sec;
  }
  return m;
}

bool set_mtime(const std::string& path, time_t t) {
  timespec ts[2] = {{t, 0}, {t, 0}};
  return ::utimensat(AT_FDCWD, path.c_str(), ts, 0) == 0;
}

// A tree of small files (one READ/WRITE each) and two larger than one
// (1 MiB + 1), in nested directories, with modification times in 2001.
void make_tree(const std::string& root, int files) {
  ASSERT_TRUE(fs::create_directories(root + "/a/b"));
  ASSERT_TRUE(fs::create_directories(root + "/c"));
  const char* dirs[] = {"", "a", "a/b", "c"};
  for (int i = 0; i < files; i++) {
    std::string p = root + "/" + dirs[i % 4] + (dirs[i % 4][0] ? "/" : "") + "f" + std::to_string(i) + ".dat";
    size_t size = i < 2 ? (1u << 20) + 1 + static_cast<size_t>(i) * 4096 : static_cast<size_t>(i) * 997 % 70000;
    ASSERT_TRUE(write_local(p, random_bytes(size, 900 + static_cast<uint64_t>(i))));
    ASSERT_TRUE(set_mtime(p, 1000000000 + i * 3600));
  }
  // The directories' times, after their files were written (in 2004).
  const char* all_dirs[] = {"a/b", "a", "c", ""};
  for (int k = 0; k < 4; k++)
    ASSERT_TRUE(set_mtime(root + (all_dirs[k][0] ? "/" : "") + all_dirs[k], 1080000000 + k * 86400));
}

TEST_F(CliTrees, MkdirParentsAndRecursiveRemove) {
  const std::string d = unique_name("trees-rm");
  auto o = smbkit({"mkdir", "-p", url(d + "/x/y/z")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(fs::is_directory(share_dir() + "/" + d + "/x/y/z"));
  // Again: an existing directory is fine.
  o = smbkit({"mkdir", "-p", url(d + "/x/y/z")});
  EXPECT_EQ(o.status, 0) << o.out;
  // A file where a directory is asked for is not.
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/x/file", to_bytes("f")));
  o = smbkit({"mkdir", "-p", url(d + "/x/file")});
  EXPECT_EQ(o.status, 1) << o.out;
  o = smbkit({"mkdir", "-p", url(d + "/x/file/below")});
  EXPECT_EQ(o.status, 1) << o.out;

  for (int i = 0; i < 40; i++)
    ASSERT_TRUE(write_local(share_dir() + "/" + d + "/x/y/" + std::to_string(i), to_bytes("data")));
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "/x/y/z/deep", to_bytes("deep")));
  // Without -r a directory stays.
  o = smbkit({"rm", url(d)});
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_TRUE(fs::exists(share_dir() + "/" + d + "/x/y/z/deep"));
  o = smbkit({"rm", "-r", url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d));
  // rm -r of a file deletes it.
  ASSERT_TRUE(write_local(share_dir() + "/" + d + "-file", to_bytes("f")));
  o = smbkit({"rm", "-r", url(d + "-file")});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/" + d + "-file"));
}

// put - reads standard input (a pipe: no size known) to its end.
TEST_F(CliTrees, PutFromAPipe) {
  st::TempDir tmp("smbkit-it");
  auto cell = env_cli_args();
  ASSERT_TRUE(cell) << cell.error().message();
  for (size_t size : {size_t{0}, size_t{5000}, size_t{(9u << 20) + 3}}) {
    const std::string src = tmp.path() + "/in-" + std::to_string(size), name = unique_name("trees-pipe");
    Bytes data = random_bytes(size, 70 + size);
    ASSERT_TRUE(write_local(src, data));
    // cat FILE | smbkit ...: the password through env, as run_smbkit passes it.
    std::vector<std::string> argv = {"env", std::string("SMBKIT_PASSWORD=") + st::SambaServer::password(), "sh",
                                     "-c", "f=\"$1\"; shift; cat \"$f\" | \"$@\"", "sh", src, kSmbkitBin};
    argv.insert(argv.end(), cell->begin(), cell->end());
    argv.insert(argv.end(), {"put", "-", url(name)});
    auto o = st::run_command(argv);
    ASSERT_EQ(o.status, 0) << o.out;
    IT_EXPECT_SAME_BYTES(slurp(share_dir() + "/" + name), data);
    EXPECT_FALSE(fs::exists(share_dir() + "/" + name + ".smbkit-part"));
  }
}

TEST_F(CliTrees, RecursiveCopyBothWaysKeepsContentAndTimes) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  make_tree(src, 120);
  if (HasFatalFailure()) return;
  const auto want = snapshot(src);
  const auto want_times = mtimes(src);
  ASSERT_EQ(want_times.size(), 120u + 4u);  // files, directories and the root

  const std::string remote = unique_name("trees-cp");
  auto o = smbkit({"cp", "-r", src, url(remote)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(snapshot(share_dir() + "/" + remote), want);
  EXPECT_EQ(mtimes(share_dir() + "/" + remote), want_times);
  EXPECT_NE(o.out.find("120 files"), std::string::npos) << o.out;

  // Down: the share's times (move them so they differ from the source's).
  for (auto& [rel, t] : want_times) ASSERT_TRUE(set_mtime(share_dir() + "/" + remote + "/" + rel, t + 7));
  const std::string back = tmp.path() + "/back";
  o = smbkit({"cp", "-r", url(remote), back});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(snapshot(back), want);
  auto got = mtimes(back);
  for (auto& [rel, t] : want_times) EXPECT_EQ(got[rel], t + 7) << rel;
  EXPECT_TRUE(o.out.find(".smbkit-part") == std::string::npos) << o.out;
}

// A name the server refuses: that file fails (named by its local path),
// the rest is copied, a summary counts it, and the status is 3.
TEST_F(CliTrees, RefusedNameIsSkippedAndTheRestCopied) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src + "/sub"));
  ASSERT_TRUE(write_local(src + "/colon:name.txt", to_bytes("refused")));
  for (int i = 0; i < 10; i++)
    ASSERT_TRUE(write_local(src + (i % 2 ? "/sub/" : "/") + "ok" + std::to_string(i), to_bytes("ok")));
  const std::string remote = unique_name("trees-refused");
  auto o = smbkit({"cp", "-r", src, url(remote)});
  EXPECT_EQ(o.status, 3) << o.out;
  EXPECT_NE(o.out.find("smbkit: " + src + "/colon:name.txt: "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find(".smbkit-part"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("10 files"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("1 failed"), std::string::npos) << o.out;
  for (int i = 0; i < 10; i++)
    EXPECT_EQ(slurp_str(share_dir() + "/" + remote + (i % 2 ? "/sub/" : "/") + "ok" + std::to_string(i)), "ok") << i;
  std::set<std::string> left;
  for (auto& e : fs::recursive_directory_iterator(share_dir() + "/" + remote))
    if (e.path().string().find("smbkit-part") != std::string::npos) left.insert(e.path().string());
  EXPECT_TRUE(left.empty()) << *left.begin();
}

// The connection cut between a small upload's two frames (the part made
// and written, its rename on the way): after the reconnect the part is
// removed and the file sent again, so the tree arrives whole and no
// .smbkit-part is left on the server.
TEST_F(CliTrees, ConnectionLostBetweenASmallUploadsFramesLeavesNoPart) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src));
  for (int i = 0; i < 60; i++)
    ASSERT_TRUE(write_local(src + "/f" + std::to_string(i), random_bytes(1000 + static_cast<size_t>(i), 77 + i)));
  std::atomic<int> renames{0};
  // Cut at the fifth second frame of connection 0: SET_INFO (the rename)
  // chained to a CLOSE; the frame never reaches the server.
  auto relay = st::TamperRelay::start(server().port(), [&](st::Toward to, Bytes& f, st::TamperContext& ctx) {
    namespace s2 = st::smb2;
    if (to != st::Toward::server || ctx.connection() != 0 || !s2::is_plain(f)) return st::Verdict::forward;
    const std::vector<uint16_t> cmds = s2::chain_commands(f);
    if (cmds.size() < 2 || cmds[0] != pr::SMB2_SET_INFO || cmds[1] != pr::SMB2_CLOSE) return st::Verdict::forward;
    return ++renames == 5 ? st::Verdict::close : st::Verdict::forward;
  });
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  // Into a directory that is there already: its names may exist, so each
  // file goes through a part file.
  const std::string remote = unique_name("trees-cut");
  ASSERT_TRUE(fs::create_directories(share_dir() + "/" + remote + "/tree"));
  chown_to_smb_user(share_dir() + "/" + remote);
  chown_to_smb_user(share_dir() + "/" + remote + "/tree");
  const std::string target = "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                             std::to_string((*relay)->port()) + "/share/" + remote;
  // Unsigned, so that the relay can read the commands.
  auto o = run_smbkit({"--vers", "default", "cp", "-r", src, target});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_GE(renames.load(), 5);
  // The tree's two connections, and the one that replaced the cut.
  EXPECT_GE((*relay)->connections(), 3);
  const auto got = snapshot(share_dir() + "/" + remote + "/tree"), want = snapshot(src);
  std::set<std::string> names, want_names;
  for (const auto& [k, v] : got) names.insert(k);
  for (const auto& [k, v] : want) want_names.insert(k);
  ASSERT_EQ(names, want_names);  // no .smbkit-part left
  EXPECT_TRUE(got == want);
}

// Into a directory the copy made, a small file is one frame (CREATE of
// the name itself + WRITE + SET_INFO + CLOSE, no part file, no rename);
// the connection cut as one goes by: the half-made name is removed after
// the reconnect and the file sent again, so the tree arrives whole.
TEST_F(CliTrees, NewDirectoryTakesEachSmallFileInOneFrameAndSurvivesACut) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src));
  const int n = 60;
  for (int i = 0; i < n; i++)
    ASSERT_TRUE(write_local(src + "/f" + std::to_string(i), random_bytes(1000 + static_cast<size_t>(i), 99 + i)));
  std::atomic<int> whole{0}, whole_first{0}, renames{0};
  auto relay = st::TamperRelay::start(server().port(), [&](st::Toward to, Bytes& f, st::TamperContext& ctx) {
    namespace s2 = st::smb2;
    if (to != st::Toward::server || !s2::is_plain(f)) return st::Verdict::forward;
    const std::vector<uint16_t> cmds = s2::chain_commands(f);
    if (cmds.size() == 2 && cmds[0] == pr::SMB2_SET_INFO && cmds[1] == pr::SMB2_CLOSE) renames++;
    if (cmds.size() == 4 && cmds[0] == pr::SMB2_CREATE && cmds[1] == pr::SMB2_WRITE && cmds[3] == pr::SMB2_CLOSE) {
      // The tenth such frame on the first connection never arrives.
      whole++;
      if (ctx.connection() == 0 && ++whole_first == 10) return st::Verdict::close;
    }
    return st::Verdict::forward;
  });
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  const std::string remote = unique_name("trees-new");
  const std::string target = "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                             std::to_string((*relay)->port()) + "/share/" + remote;
  auto o = run_smbkit({"--vers", "default", "cp", "-r", src, target});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_GE(whole_first.load(), 10);
  EXPECT_GE((*relay)->connections(), 3);
  // One frame per file until the cut (the files in flight then went step
  // by step after the reconnect); never a part file's rename.
  EXPECT_GE(whole.load(), 10);
  EXPECT_EQ(renames.load(), 0);
  const auto got = snapshot(share_dir() + "/" + remote), want = snapshot(src);
  std::set<std::string> names, want_names;
  for (const auto& [k, v] : got) names.insert(k);
  for (const auto& [k, v] : want) want_names.insert(k);
  ASSERT_EQ(names, want_names);
  EXPECT_TRUE(got == want);
  EXPECT_EQ(mtimes(share_dir() + "/" + remote), mtimes(src));
}

// A tree's small files go over two connections (each its own session) by
// default, both ways, and over one with --connections 1: the relay counts
// the one-frame uploads (CREATE + WRITE + SET_INFO + CLOSE) and downloads
// (CREATE + READ + CLOSE) each connection carried.
TEST_F(CliTrees, SmallFilesAreSpreadOverTwoConnections) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src));
  const int n = 40;
  for (int i = 0; i < n; i++)
    ASSERT_TRUE(write_local(src + "/f" + std::to_string(i), random_bytes(2000 + static_cast<size_t>(i), 7 + i)));
  std::mutex mu;
  std::map<int, int> ups, downs;  // connection -> frames
  auto relay = st::TamperRelay::start(server().port(), [&](st::Toward to, Bytes& f, st::TamperContext& ctx) {
    namespace s2 = st::smb2;
    if (to != st::Toward::server || !s2::is_plain(f)) return st::Verdict::forward;
    const std::vector<uint16_t> cmds = s2::chain_commands(f);
    std::lock_guard g(mu);
    if (cmds.size() == 4 && cmds[0] == pr::SMB2_CREATE && cmds[1] == pr::SMB2_WRITE) ups[ctx.connection()]++;
    if (cmds.size() == 3 && cmds[0] == pr::SMB2_CREATE && cmds[1] == pr::SMB2_READ) downs[ctx.connection()]++;
    return st::Verdict::forward;
  });
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  const std::string base = "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                           std::to_string((*relay)->port()) + "/share/";
  const std::string remote = unique_name("trees-spread"), remote1 = unique_name("trees-one");
  auto o = run_smbkit({"--vers", "default", "cp", "-r", src, base + remote});
  ASSERT_EQ(o.status, 0) << o.out;
  auto back = run_smbkit({"--vers", "default", "cp", "-r", base + remote, tmp.path() + "/back"});
  ASSERT_EQ(back.status, 0) << back.out;
  EXPECT_TRUE(snapshot(tmp.path() + "/back") == snapshot(src));
  {
    std::lock_guard g(mu);
    // Every file once, and each of two connections carried some.
    int up_total = 0, down_total = 0;
    for (auto [c, k] : ups) up_total += k;
    for (auto [c, k] : downs) down_total += k;
    EXPECT_EQ(up_total, n);
    EXPECT_EQ(down_total, n);
    EXPECT_EQ(ups.size(), 2u);
    EXPECT_EQ(downs.size(), 2u);
    for (auto [c, k] : ups) EXPECT_GE(k, n / 4) << "connection " << c;
    for (auto [c, k] : downs) EXPECT_GE(k, n / 4) << "connection " << c;
    ups.clear();
  }
  auto one = run_smbkit({"--vers", "default", "--connections", "1", "cp", "-r", src, base + remote1});
  ASSERT_EQ(one.status, 0) << one.out;
  std::lock_guard g(mu);
  EXPECT_EQ(ups.size(), 1u);
  int total = 0;
  for (auto [c, k] : ups) total += k;
  EXPECT_EQ(total, n);
}

ino_t inode(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

// The inode of each file below root: a file rewritten (through a part
// file renamed over it) gets a new one.
std::map<std::string, ino_t> inodes(const std::string& root) {
  std::map<std::string, ino_t> m;
  for (auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) m[fs::relative(e.path(), root).string()] = inode(e.path().string());
  return m;
}

// sync in one direction: SRC and DST are each "local" or "remote"; the
// test changes SRC and checks DST through the share's directory.
void check_sync(const std::function<st::SambaServer::Output(const std::vector<std::string>&)>& smbkit,
                const std::string& src_arg, const std::string& src_dir, const std::string& dst_arg,
                const std::string& dst_dir) {
  make_tree(src_dir, 30);
  if (::testing::Test::HasFatalFailure()) return;
  auto o = smbkit({"sync", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(snapshot(dst_dir), snapshot(src_dir));
  EXPECT_EQ(mtimes(dst_dir), mtimes(src_dir));

  // Unchanged files are not copied again: same inodes on DST.
  auto before = inodes(dst_dir);
  o = smbkit({"sync", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("0 files copied"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("30 unchanged"), std::string::npos) << o.out;
  EXPECT_EQ(inodes(dst_dir), before);

  // A changed size is copied; only that file is rewritten.
  ASSERT_TRUE(write_local(src_dir + "/a/f5.dat", to_bytes("now shorter")));
  // Changes for the plan: a new file, one removed from SRC.
  ASSERT_TRUE(write_local(src_dir + "/c/new.txt", to_bytes("new")));
  fs::remove(src_dir + "/f4.dat");
  o = smbkit({"sync", "--dry-run", "--delete", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("copy "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("f5.dat"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("new.txt"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("delete "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("f4.dat"), std::string::npos) << o.out;
  // The dry run changed nothing.
  EXPECT_EQ(inodes(dst_dir), before);
  EXPECT_FALSE(fs::exists(dst_dir + "/c/new.txt"));
  EXPECT_TRUE(fs::exists(dst_dir + "/f4.dat"));

  o = smbkit({"sync", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(slurp_str(dst_dir + "/a/f5.dat"), "now shorter");
  EXPECT_EQ(slurp_str(dst_dir + "/c/new.txt"), "new");
  EXPECT_NE(inode(dst_dir + "/a/f5.dat"), before["a/f5.dat"]);
  EXPECT_EQ(inode(dst_dir + "/a/b/f6.dat"), before["a/b/f6.dat"]);
  // Without --delete the extra stays; with it, it goes.
  EXPECT_TRUE(fs::exists(dst_dir + "/f4.dat"));
  o = smbkit({"sync", "--delete", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_FALSE(fs::exists(dst_dir + "/f4.dat"));
  EXPECT_EQ(snapshot(dst_dir), snapshot(src_dir));

  // Same size, same time, other content: only --checksum sees it.
  Bytes other = random_bytes(fs::file_size(src_dir + "/c/f7.dat"), 4242);
  struct stat st {};
  ASSERT_EQ(::stat((src_dir + "/c/f7.dat").c_str(), &st), 0);
  ASSERT_TRUE(write_local(src_dir + "/c/f7.dat", other));
  ASSERT_TRUE(set_mtime(src_dir + "/c/f7.dat", st.st_mtim.tv_sec));
  o = smbkit({"sync", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(slurp(dst_dir + "/c/f7.dat"), other);
  o = smbkit({"sync", "--checksum", src_arg, dst_arg});
  ASSERT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(dst_dir + "/c/f7.dat"), other);
  EXPECT_NE(o.out.find("1 files copied"), std::string::npos) << o.out;
}

TEST_F(CliTrees, SyncUp) {
  st::TempDir tmp("smbkit-it");
  const std::string remote = unique_name("trees-sync-up");
  check_sync(smbkit, tmp.path() + "/src", tmp.path() + "/src", url(remote), share_dir() + "/" + remote);
}

// sync --delete into a local directory removes each extra relative to the
// destination's descriptor, never by path: the destination is swapped
// for a link to another directory as the listing starts (the relay does
// it when the first QUERY_DIRECTORY goes by), and the other directory's
// same-named entries stay. A symbolic link is removed as itself.
TEST_F(CliTrees, SyncDeleteLocalIsDescriptorRelative) {
  st::TempDir tmp("smbkit-it");
  const std::string remote = unique_name("trees-sync-del");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + remote));
  ASSERT_TRUE(write_local(share_dir() + "/" + remote + "/kept.txt", to_bytes("kept")));
  const std::string dst = tmp.path() + "/dst", victim = tmp.path() + "/victim";
  for (const std::string& d : {dst, victim}) {
    ASSERT_TRUE(fs::create_directories(d + "/extra/sub"));
    ASSERT_TRUE(write_local(d + "/extra/sub/file", to_bytes("file")));
  }
  ASSERT_TRUE(write_local(victim + "/precious", to_bytes("precious")));
  fs::create_directory_symlink(victim, dst + "/link-out");
  std::atomic<bool> swapped{false};
  auto relay = st::TamperRelay::start(server().port(), [&](st::Toward to, Bytes& f, st::TamperContext&) {
    namespace s2 = st::smb2;
    if (to != st::Toward::server || swapped || !s2::is_plain(f)) return st::Verdict::forward;
    for (uint16_t cmd : s2::chain_commands(f)) {
      if (cmd == pr::SMB2_QUERY_DIRECTORY) {
        std::error_code ec;
        fs::rename(dst, dst + "-moved", ec);
        if (!ec) fs::create_directory_symlink(victim, dst, ec);
        swapped = !ec;
        break;
      }
    }
    return st::Verdict::forward;
  });
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  const std::string src = "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                          std::to_string((*relay)->port()) + "/share/" + remote;
  auto o = run_smbkit({"--vers", "default", "sync", "--delete", src, dst});
  EXPECT_EQ(o.status, 0) << o.out;
  ASSERT_TRUE(swapped.load());
  // What was opened as the destination got the sync.
  EXPECT_FALSE(fs::exists(dst + "-moved/extra"));
  EXPECT_FALSE(fs::is_symlink(dst + "-moved/link-out"));
  EXPECT_EQ(slurp_str(dst + "-moved/kept.txt"), "kept");
  // The directory the path now leads to is untouched.
  EXPECT_EQ(slurp_str(victim + "/extra/sub/file"), "file");
  EXPECT_EQ(slurp_str(victim + "/precious"), "precious");
  EXPECT_FALSE(fs::exists(victim + "/kept.txt"));
}

TEST_F(CliTrees, SyncDown) {
  st::TempDir tmp("smbkit-it");
  const std::string remote = unique_name("trees-sync-down");
  // SRC is the share's directory (written locally, as the server sees it).
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + remote));
  check_sync(
      [](const std::vector<std::string>& a) {
        auto o = run_smbkit(a);
        return o;
      },
      url(remote), share_dir() + "/" + remote, tmp.path() + "/dst", tmp.path() + "/dst");
}

}  // namespace
}  // namespace smbkit_it
