// File and directory operations through Tree against a real smbd, checked
// against the directory behind the share.
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include <sys/statvfs.h>

#include "fixture.h"
#include "proto/fscc_file_info.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;
using smbkit::STATUS_ACCESS_DENIED;
using smbkit::STATUS_DELETE_PENDING;
using smbkit::STATUS_OBJECT_NAME_COLLISION;
using smbkit::STATUS_OBJECT_NAME_NOT_FOUND;
using smbkit::STATUS_SHARING_VIOLATION;

class Files : public TreeSuite<Files> {};

std::set<std::string> names_of(const std::vector<cl::FileStat>& v) {
  std::set<std::string> s;
  for (auto& e : v) s.insert(e.name);
  return s;
}

// ---------------------------------------------------------------- > 4 GiB

TEST_F(Files, ReadWriteBeyond4GiB) {
  constexpr uint64_t k4G = 1ull << 32;
  const std::string name = unique_name("sparse") + ".bin";
  const std::string lp = share_dir() + "/" + name;
  Bytes pattern = random_bytes(64, 4242);
  {
    int fd = ::open(lp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(k4G + 65536)), 0) << strerror(errno);
    ASSERT_EQ(::pwrite(fd, pattern.data(), pattern.size(), static_cast<off_t>(k4G + 100)),
              static_cast<ssize_t>(pattern.size()));
    ::close(fd);
    chown_to_smb_user(lp);
  }

  auto st = tree_->stat(name);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, k4G + 65536);

  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  auto f = tree_->open(name, p);
  IT_ASSERT_OK(f);
  EXPECT_EQ(f->size, k4G + 65536);

  // The pattern, read at an offset that does not fit in 32 bits.
  Bytes buf(64);
  auto n = tree_->read(f->id, k4G + 100, buf);
  IT_ASSERT_OK(n);
  ASSERT_EQ(*n, 64u);
  IT_EXPECT_SAME_BYTES(buf, pattern);

  // Straddling the hole and the pattern.
  Bytes buf2(84);
  n = tree_->read(f->id, k4G + 90, buf2);
  IT_ASSERT_OK(n);
  ASSERT_EQ(*n, 84u);
  for (int i = 0; i < 10; i++) EXPECT_EQ(buf2[i], std::byte{0}) << i;
  IT_EXPECT_SAME_BYTES(ByteView(buf2).subspan(10, 64), ByteView(pattern));
  for (int i = 74; i < 84; i++) EXPECT_EQ(buf2[i], std::byte{0}) << i;

  // A write above 4 GiB lands at that offset on disk.
  Bytes w = random_bytes(1000, 777);
  auto wn = tree_->write(f->id, k4G + 4096, w);
  IT_ASSERT_OK(wn);
  EXPECT_EQ(*wn, w.size());
  // And one past the end of file extends it.
  constexpr uint64_t k5G = 5ull << 30;
  Bytes tail = to_bytes("tail beyond five GiB");
  wn = tree_->write(f->id, k5G, tail);
  IT_ASSERT_OK(wn);
  EXPECT_EQ(*wn, tail.size());
  IT_ASSERT_OK(tree_->flush(f->id));

  auto sh = tree_->stat_handle(f->id);
  IT_ASSERT_OK(sh);
  EXPECT_EQ(sh->size, k5G + tail.size());

  // Reading at end of file gives 0 bytes.
  n = tree_->read(f->id, k5G + tail.size(), buf);
  IT_ASSERT_OK(n);
  EXPECT_EQ(*n, 0u);
  IT_ASSERT_OK(tree_->close(f->id));

  int fd = ::open(lp.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Bytes back(w.size());
  EXPECT_EQ(::pread(fd, back.data(), back.size(), static_cast<off_t>(k4G + 4096)),
            static_cast<ssize_t>(back.size()));
  IT_EXPECT_SAME_BYTES(back, w);
  Bytes back_tail(tail.size());
  EXPECT_EQ(::pread(fd, back_tail.data(), back_tail.size(), static_cast<off_t>(k5G)),
            static_cast<ssize_t>(tail.size()));
  IT_EXPECT_SAME_BYTES(back_tail, tail);
  // The original pattern is untouched.
  Bytes back_pat(pattern.size());
  EXPECT_EQ(::pread(fd, back_pat.data(), back_pat.size(), static_cast<off_t>(k4G + 100)), 64);
  IT_EXPECT_SAME_BYTES(back_pat, pattern);
  struct stat sb{};
  ASSERT_EQ(::fstat(fd, &sb), 0);
  EXPECT_EQ(static_cast<uint64_t>(sb.st_size), k5G + tail.size());
  ::close(fd);

  IT_EXPECT_OK(tree_->unlink(name));
  EXPECT_FALSE(fs::exists(lp));
}

// ---------------------------------------------------------- 5,000 entries

TEST_F(Files, ListFiveThousandEntries) {
  const std::string dir = unique_name("many");
  const std::string ld = share_dir() + "/" + dir;
  ASSERT_TRUE(mkdir_local(ld));
  std::set<std::string> want;
  char nm[32];
  for (int i = 0; i < 5000; i++) {
    std::snprintf(nm, sizeof nm, "f%05d.txt", i);
    int fd = ::open((ld + "/" + nm).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << nm << ": " << strerror(errno);
    ::close(fd);
    want.insert(nm);
  }
  auto ls = tree_->list(dir);
  IT_ASSERT_OK(ls);
  EXPECT_EQ(ls->size(), 5002u);  // + "." and ".."
  auto got = names_of(*ls);
  EXPECT_EQ(got.size(), ls->size()) << "duplicate names in the listing";
  EXPECT_TRUE(got.count(".") && got.count(".."));
  got.erase(".");
  got.erase("..");
  EXPECT_EQ(got.size(), 5000u);
  std::vector<std::string> missing;
  for (auto& w : want)
    if (!got.count(w)) missing.push_back(w);
  EXPECT_TRUE(missing.empty()) << missing.size() << " missing, first " << missing.front();
  EXPECT_TRUE(got == want);

  // A server-side pattern: f00010 .. f00019.
  auto some = tree_->list(dir, "f0001?.txt");
  IT_ASSERT_OK(some);
  EXPECT_EQ(some->size(), 10u);
  for (auto& e : *some) EXPECT_EQ(e.name.rfind("f0001", 0), 0u) << e.name;
}

// A listing is one compound frame (CREATE, QUERY_DIRECTORY twice, CLOSE)
// when it fits one response; a longer one (here about 1.7 MB of entries
// against 1 MiB responses) is then read again step by step, and every name
// comes back exactly once either way. A pattern that matches nothing is an
// empty listing.
TEST_F(Files, ListingsInOneFrameAndLongerOnes) {
  const std::string small = unique_name("few"), big = unique_name("long");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + small));
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + big));
  for (int i = 0; i < 3; i++) ASSERT_TRUE(write_local(share_dir() + "/" + small + "/s" + std::to_string(i), to_bytes("x")));
  std::set<std::string> want;
  std::string pad(180, 'n');
  for (int i = 0; i < 3000; i++) {
    std::string nm = pad + std::to_string(i);
    int fd = ::open((share_dir() + "/" + big + "/" + nm).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    ::close(fd);
    want.insert(nm);
  }
  auto frames = [&] { return client_->conn().stats().frames_out; };
  uint64_t f0 = frames();
  auto few = tree_->list(small);
  IT_ASSERT_OK(few);
  EXPECT_EQ(few->size(), 5u);
  EXPECT_EQ(frames() - f0, 1u);
  f0 = frames();
  auto none = tree_->list(small, "nothing*");
  IT_ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(frames() - f0, 1u);
  f0 = frames();
  auto lots = tree_->list(big);
  IT_ASSERT_OK(lots);
  EXPECT_GT(frames() - f0, 1u) << "the listing fit one response: make the names longer";
  auto got = names_of(*lots);
  EXPECT_EQ(got.size(), lots->size()) << "duplicate names in the listing";
  got.erase(".");
  got.erase("..");
  EXPECT_TRUE(got == want) << got.size() << " names";
}

// ------------------------------------------------------------------ names

TEST_F(Files, UnicodeAndSpaceNames) {
  const std::string dir = unique_name("names");
  IT_ASSERT_OK(tree_->mkdir(dir));
  const std::vector<std::string> names = {
      "with spaces in it.txt",
      "caf\xC3\xA9 \xC3\xBC.txt",                     // café ü
      "\xE6\x96\x87\xE4\xBB\xB6.txt",                 // 文件
      "\xF0\x9F\x98\x80 smile.txt",                   // 😀 (U+1F600, a surrogate pair in UTF-16)
      "mix \xC3\xA9\xE6\x96\x87\xF0\x9F\x98\x80.dat",  // é文😀
  };
  for (auto& n : names) {
    IT_ASSERT_OK(put_file(*tree_, dir + "/" + n, to_bytes("content of " + n))) << n;
  }
  auto ls = tree_->list(dir);
  IT_ASSERT_OK(ls);
  auto got = names_of(*ls);
  for (auto& n : names) {
    EXPECT_TRUE(got.count(n)) << "smbkit listing lacks " << n;
    // Same UTF-8 bytes on the server's disk.
    std::string lp = share_dir() + "/" + dir + "/" + n;
    EXPECT_TRUE(fs::exists(lp)) << "not on disk: " << lp;
    auto local = read_local(lp);
    ASSERT_TRUE(local.has_value());
    EXPECT_EQ(to_string(*local), "content of " + n);
    auto s = tree_->stat(dir + "/" + n);
    IT_EXPECT_OK(s);
    if (s.ok()) {
      EXPECT_EQ(s->size, ("content of " + n).size());
    }
  }
  EXPECT_EQ(got.size(), names.size() + 2);

  // A name made on the server's disk shows through smbkit unchanged.
  const std::string local_name = "local \xE6\x96\x87\xE4\xBB\xB6 \xF0\x9F\x98\x80.txt";
  ASSERT_TRUE(write_local(share_dir() + "/" + dir + "/" + local_name, to_bytes("from disk")));
  ls = tree_->list(dir);
  IT_ASSERT_OK(ls);
  EXPECT_TRUE(names_of(*ls).count(local_name));
  auto d = get_file(*tree_, dir + "/" + local_name);
  IT_ASSERT_OK(d);
  EXPECT_EQ(to_string(*d), "from disk");

  // The reference client sees the same names.
  auto o = server().smbclient("share", "cd \"" + dir + "\"; ls");
  EXPECT_EQ(o.status, 0) << o.out;
  for (auto& n : names) EXPECT_NE(o.out.find(n), std::string::npos) << "smbclient ls lacks " << n << ":\n" << o.out;
  EXPECT_NE(o.out.find(local_name), std::string::npos) << o.out;
}

// ----------------------------------------------------------------- rename

TEST_F(Files, RenameOverExisting) {
  const std::string a = unique_name("src") + ".txt", b = unique_name("dst") + ".txt";
  IT_ASSERT_OK(put_file(*tree_, a, to_bytes("source content")));
  IT_ASSERT_OK(put_file(*tree_, b, to_bytes("target content, longer")));

  auto r = tree_->rename(a, b, /*replace=*/false);
  IT_ASSERT_STATUS(r, STATUS_OBJECT_NAME_COLLISION);
  EXPECT_EQ(slurp_str(share_dir() + "/" + b), "target content, longer");
  EXPECT_TRUE(fs::exists(share_dir() + "/" + a));

  r = tree_->rename(a, b, /*replace=*/true);
  IT_ASSERT_OK(r);
  EXPECT_FALSE(fs::exists(share_dir() + "/" + a));
  auto local = read_local(share_dir() + "/" + b);
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(to_string(*local), "source content");
  auto d = get_file(*tree_, b);
  IT_ASSERT_OK(d);
  EXPECT_EQ(to_string(*d), "source content");
  IT_EXPECT_STATUS(tree_->stat(a), STATUS_OBJECT_NAME_NOT_FOUND);

  // Into a subdirectory, with a new name.
  const std::string sub = unique_name("subdir");
  IT_ASSERT_OK(tree_->mkdir(sub));
  IT_ASSERT_OK(tree_->rename(b, sub + "/moved.txt", false));
  EXPECT_EQ(slurp_str(share_dir() + "/" + sub + "/moved.txt"), "source content");
}

// ---------------------------------------------------- deleting open files

TEST_F(Files, DeleteOpenFileWithoutShareDelete) {
  const std::string name = unique_name("busy") + ".txt";
  IT_ASSERT_OK(put_file(*tree_, name, to_bytes("still here")));
  for (uint32_t share : {0u, FILE_SHARE_READ | FILE_SHARE_WRITE}) {
    SCOPED_TRACE("share mode " + std::to_string(share));
    cl::OpenParams p;
    p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
    p.share = share;
    auto h = tree_->open(name, p);
    IT_ASSERT_OK(h);
    // The delete needs DELETE access, which the first open does not share.
    IT_EXPECT_STATUS(tree_->unlink(name), STATUS_SHARING_VIOLATION);
    EXPECT_TRUE(fs::exists(share_dir() + "/" + name));
    Bytes buf(64);
    auto n = tree_->read(h->id, 0, buf);
    IT_ASSERT_OK(n);
    EXPECT_EQ(to_string(ByteView(buf).first(*n)), "still here");
    IT_ASSERT_OK(tree_->close(h->id));
  }
  IT_EXPECT_OK(tree_->unlink(name));
  EXPECT_FALSE(fs::exists(share_dir() + "/" + name));
}

TEST_F(Files, DeleteOpenFileWithShareDelete) {
  const std::string name = unique_name("shared") + ".txt";
  const std::string lp = share_dir() + "/" + name;
  IT_ASSERT_OK(put_file(*tree_, name, to_bytes("readable after delete")));
  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  auto h = tree_->open(name, p);
  IT_ASSERT_OK(h);

  IT_ASSERT_OK(tree_->unlink(name));
  // Samba 4.17 keeps NT semantics: the name stays (delete pending) until the
  // last handle closes; new opens of it fail with STATUS_DELETE_PENDING.
  EXPECT_TRUE(fs::exists(lp));
  IT_EXPECT_STATUS(tree_->stat(name), STATUS_DELETE_PENDING);
  Bytes buf(64);
  auto n = tree_->read(h->id, 0, buf);
  IT_ASSERT_OK(n);
  EXPECT_EQ(to_string(ByteView(buf).first(*n)), "readable after delete");
  auto sh = tree_->stat_handle(h->id);
  IT_EXPECT_OK(sh);

  IT_ASSERT_OK(tree_->close(h->id));
  EXPECT_FALSE(fs::exists(lp));
  IT_EXPECT_STATUS(tree_->stat(name), STATUS_OBJECT_NAME_NOT_FOUND);
}

// -------------------------------------------------------- read-only share

TEST_F(Files, ReadOnlyShareRefusesWrites) {
  const std::string ro = share_dir("readonly");
  const std::string existing = unique_name("existing") + ".txt";
  ASSERT_TRUE(write_local(ro + "/" + existing, to_bytes("original")));
  auto before = std::set<std::string>();
  for (auto& e : fs::directory_iterator(ro)) before.insert(e.path().filename().string());

  auto t = client_->tree_connect("readonly");
  IT_ASSERT_OK(t);
  auto& tree = **t;

  // Reading works.
  auto d = get_file(tree, existing);
  IT_ASSERT_OK(d);
  EXPECT_EQ(to_string(*d), "original");

  // Samba 4.17 answers every write-type open on a "read only = yes" share
  // with STATUS_ACCESS_DENIED (the share's access mask lacks write bits).
  cl::OpenParams create;
  create.access = FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  create.disposition = FILE_CREATE;
  IT_EXPECT_STATUS(tree.open("new-file.txt", create), STATUS_ACCESS_DENIED);
  IT_EXPECT_STATUS(put_file(tree, "new-file2.txt", to_bytes("x")), STATUS_ACCESS_DENIED);
  IT_EXPECT_STATUS(tree.mkdir("new-dir"), STATUS_ACCESS_DENIED);

  cl::OpenParams wr;
  wr.access = FILE_WRITE_DATA | SYNCHRONIZE;
  IT_EXPECT_STATUS(tree.open(existing, wr), STATUS_ACCESS_DENIED);
  IT_EXPECT_STATUS(tree.unlink(existing), STATUS_ACCESS_DENIED);
  IT_EXPECT_STATUS(tree.rename(existing, "renamed.txt", true), STATUS_ACCESS_DENIED);

  // A write on a handle opened for reading is refused too.
  cl::OpenParams rd;
  rd.access = FILE_READ_DATA | SYNCHRONIZE;
  auto h = tree.open(existing, rd);
  IT_ASSERT_OK(h);
  IT_EXPECT_STATUS(tree.write(h->id, 0, to_bytes("overwrite")), STATUS_ACCESS_DENIED);
  IT_EXPECT_OK(tree.close(h->id));

  // Nothing changed on disk.
  std::set<std::string> after;
  for (auto& e : fs::directory_iterator(ro)) after.insert(e.path().filename().string());
  EXPECT_EQ(after, before);
  EXPECT_EQ(slurp_str(ro + "/" + existing), "original");
}

}  // namespace
}  // namespace smbkit_it

namespace smbkit_it {
namespace {

// Tree::stat sends CREATE, QUERY_INFO and CLOSE as one compound frame
// (MS-SMB2 3.2.4.1.4): one frame out, one round trip, in every cell of the
// matrix (signed: each message signed on its own; sealed: one transform).
TEST_F(Files, StatIsOneCompoundFrame) {
  std::string content(12345, 'x');
  ASSERT_TRUE(write_local(share_dir() + "/compound.bin", to_bytes(content)));
  chown_to_smb_user(share_dir() + "/compound.bin");
  const cl::ConnectionStats before = client_->conn().stats();
  auto s = tree_->stat("compound.bin");
  const cl::ConnectionStats after = client_->conn().stats();
  ASSERT_TRUE(s.ok()) << err_of(s);
  EXPECT_EQ(s->size, content.size());
  EXPECT_FALSE(s->is_dir);
  EXPECT_EQ(s->name, "compound.bin");
  EXPECT_EQ(after.frames_out - before.frames_out, 1u);
  // The related CLOSE closed what the CREATE opened: an open that shares
  // nothing succeeds (any open left would be a sharing violation), on
  // either server.
  cl::OpenParams p;
  p.access = FILE_READ_DATA;
  p.share = 0;
  auto f = tree_->open("compound.bin", p);
  ASSERT_TRUE(f.ok()) << err_of(f);
  // (The check can fail: with the file open, a second such open is refused.)
  auto again = tree_->open("compound.bin", p);
  IT_EXPECT_STATUS(again, STATUS_SHARING_VIOLATION);
  EXPECT_TRUE(tree_->close(f->id).ok());
  auto d = tree_->stat("");
  ASSERT_TRUE(d.ok()) << err_of(d);
  EXPECT_TRUE(d->is_dir);
}

// A failed CREATE fails the related requests after it; stat reports the
// CREATE's status and the connection goes on.
TEST_F(Files, StatOfAMissingNameIsNotFoundInOneFrame) {
  const cl::ConnectionStats before = client_->conn().stats();
  auto s = tree_->stat("no/such/file");
  const cl::ConnectionStats after = client_->conn().stats();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().status == smbkit::STATUS_OBJECT_PATH_NOT_FOUND || s.error().status == STATUS_OBJECT_NAME_NOT_FOUND)
      << err_of(s);
  EXPECT_EQ(after.frames_out - before.frames_out, 1u);
  auto again = tree_->stat("");
  EXPECT_TRUE(again.ok()) << err_of(again);
}

// mkdir, rename, unlink and rmdir are CREATE + (SET_INFO +) CLOSE in one
// compound frame each; the results are on disk.
TEST_F(Files, PathOperationsAreOneFrameEach) {
  auto frames = [&] { return client_->conn().stats().frames_out; };
  uint64_t f0 = frames();
  ASSERT_TRUE(tree_->mkdir("cmpd-dir").ok());
  EXPECT_EQ(frames() - f0, 1u) << "mkdir";
  EXPECT_TRUE(std::filesystem::is_directory(share_dir() + "/cmpd-dir"));
  ASSERT_TRUE(write_local(share_dir() + "/cmpd-dir/a", to_bytes("aaa")));
  chown_to_smb_user(share_dir() + "/cmpd-dir/a");
  f0 = frames();
  ASSERT_TRUE(tree_->rename("cmpd-dir/a", "cmpd-dir/b", false).ok());
  EXPECT_EQ(frames() - f0, 1u) << "rename";
  EXPECT_EQ(slurp_str(share_dir() + "/cmpd-dir/b"), "aaa");
  EXPECT_FALSE(std::filesystem::exists(share_dir() + "/cmpd-dir/a"));
  // A directory that is not empty: the SET_INFO fails, the error is the
  // caller's, and nothing stays open on the server.
  f0 = frames();
  auto r = tree_->rmdir("cmpd-dir");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, smbkit::STATUS_DIRECTORY_NOT_EMPTY) << err_of(r);
  EXPECT_LE(frames() - f0, 2u) << "rmdir (a CLOSE of its own if the server failed the chained one)";
  auto o = server_->open_files();
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("cmpd-dir"), std::string::npos) << o.out;
  f0 = frames();
  ASSERT_TRUE(tree_->unlink("cmpd-dir/b").ok());
  EXPECT_EQ(frames() - f0, 1u) << "unlink";
  EXPECT_FALSE(std::filesystem::exists(share_dir() + "/cmpd-dir/b"));
  ASSERT_TRUE(tree_->rmdir("cmpd-dir").ok());
  EXPECT_FALSE(std::filesystem::exists(share_dir() + "/cmpd-dir"));
  // A rename onto an existing name without replace: refused, source kept.
  ASSERT_TRUE(write_local(share_dir() + "/r1", to_bytes("1")));
  ASSERT_TRUE(write_local(share_dir() + "/r2", to_bytes("2")));
  chown_to_smb_user(share_dir() + "/r1");
  chown_to_smb_user(share_dir() + "/r2");
  auto clash = tree_->rename("r1", "r2", false);
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().status, STATUS_OBJECT_NAME_COLLISION) << err_of(clash);
  EXPECT_EQ(slurp_str(share_dir() + "/r1"), "1");
}

}  // namespace
}  // namespace smbkit_it

namespace smbkit_it {
namespace {

// set_info_on_path (truncate, times, attributes by path) is CREATE +
// SET_INFO... + QUERY_INFO + CLOSE in one frame and answers with the
// attributes after the change; statfs is CREATE + two QUERY_INFOs + CLOSE.
TEST_F(Files, SetInfoOnPathAndStatfsAreOneFrameEach) {
  auto frames = [&] { return client_->conn().stats().frames_out; };
  ASSERT_TRUE(write_local(share_dir() + "/setp.bin", to_bytes(std::string(10000, 'z'))));
  chown_to_smb_user(share_dir() + "/setp.bin");
  FileEndOfFileInformation e;
  e.EndOfFile = 1234;
  auto eof = encode_info(e);
  ASSERT_TRUE(eof.ok());
  FileBasicInformation b;
  b.LastWriteTime = 130000000000000000ull;  // 2012-12-09
  auto basic = encode_info(b);
  ASSERT_TRUE(basic.ok());
  uint64_t f0 = frames();
  auto s = tree_->set_info_on_path("setp.bin", FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES,
                                   {{FileEndOfFileInformation::kInfoClass, *eof},
                                    {FileBasicInformation::kInfoClass, *basic}}, "setattr");
  EXPECT_EQ(frames() - f0, 1u);
  ASSERT_TRUE(s.ok()) << err_of(s);
  EXPECT_EQ(s->size, 1234u);
  EXPECT_EQ(s->write_time / 10000000, b.LastWriteTime / 10000000);
  EXPECT_EQ(s->name, "setp.bin");
  EXPECT_EQ(std::filesystem::file_size(share_dir() + "/setp.bin"), 1234u);
  // The server's own view agrees (a fresh stat, not the compound's reply).
  auto again = tree_->stat("setp.bin");
  ASSERT_TRUE(again.ok()) << err_of(again);
  EXPECT_EQ(again->write_time / 10000000, b.LastWriteTime / 10000000);

  // A SET_INFO the handle has no access for fails with the server's
  // status, which is the error; nothing changed and nothing is left open.
  e.EndOfFile = 1;
  auto shrink = encode_info(e);
  ASSERT_TRUE(shrink.ok());
  f0 = frames();
  auto denied = tree_->set_info_on_path("setp.bin", FILE_WRITE_ATTRIBUTES,
                                        {{FileEndOfFileInformation::kInfoClass, *shrink}}, "truncate");
  EXPECT_LE(frames() - f0, 2u);
  // (Samba 4.17 answers STATUS_NO_MEMORY here, the same as to an
  // open-then-SET_INFO; the point is that the error comes back.)
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.error().status, 0u);
  EXPECT_EQ(std::filesystem::file_size(share_dir() + "/setp.bin"), 1234u);
  auto o = server_->open_files();
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("setp.bin"), std::string::npos) << o.out;
  // A missing name: the CREATE's status.
  auto missing = tree_->set_info_on_path("no-such", FILE_WRITE_DATA, {{FileEndOfFileInformation::kInfoClass, *shrink}},
                                         "truncate");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().status, STATUS_OBJECT_NAME_NOT_FOUND) << err_of(missing);

  f0 = frames();
  auto fs = tree_->statfs();
  EXPECT_EQ(frames() - f0, 1u);
  ASSERT_TRUE(fs.ok()) << err_of(fs);
  struct statvfs local{};
  ASSERT_EQ(statvfs(share_dir().c_str(), &local), 0);
  EXPECT_GT(fs->total_bytes, 0u);
  EXPECT_GT(fs->bytes_per_unit, 0u);
  EXPECT_LE(fs->avail_bytes, fs->total_bytes);
  // Samba reports the share's file system: the same total within 1%.
  double local_total = static_cast<double>(local.f_blocks) * local.f_frsize;
  EXPECT_NEAR(static_cast<double>(fs->total_bytes), local_total, local_total / 100);
  EXPECT_GT(fs->max_name, 0u);
  EXPECT_FALSE(fs->fs_name.empty());
}

}  // namespace
}  // namespace smbkit_it

namespace smbkit_it {
namespace {

// Gathering is opportunistic: requests meet only when one is submitted
// while another thread is sending. On two loaded cores the threads can
// fall into lockstep (each response wakes one thread, which sends alone):
// 3 in 60 rounds of 512 writes met none during a CI build. So a test runs
// rounds (at most kGatherRounds) until one gathers; each round checks
// every byte.
constexpr int kGatherRounds = 5;

// Small reads submitted from several threads at once go out gathered in
// compounds of unrelated READs (Connection::submit_gathered): every read
// still gets its own bytes, and fewer frames go out than reads.
TEST_F(Files, ConcurrentSmallReadsAreGatheredIntoCompounds) {
  const size_t size = 1u << 20;
  Bytes data = random_bytes(size, 67);
  ASSERT_TRUE(write_local(share_dir() + "/gather.bin", data));
  chown_to_smb_user(share_dir() + "/gather.bin");
  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  auto f = tree_->open("gather.bin", p);
  ASSERT_TRUE(f.ok()) << err_of(f);
  constexpr int kThreads = 8, kReads = 200;
  cl::ConnectionStats before, after;
  for (int round = 0; round < kGatherRounds; round++) {
    before = client_->conn().stats();
    EXPECT_EQ(concurrent_small_reads(*tree_, f->id, data, kThreads, kReads), 0);
    after = client_->conn().stats();
    if (after.gathered > before.gathered) break;
  }
  EXPECT_GT(after.gathered - before.gathered, 0u) << "no two reads ever went out together";
  EXPECT_LT(after.frames_out - before.frames_out, static_cast<uint64_t>(kThreads * kReads));
  EXPECT_TRUE(tree_->close(f->id).ok());
}

// Small writes carry their data in the request and go out gathered the same
// way: each lands where it was written (8 threads, interleaved 4 KiB
// blocks, the last of each thread a shorter one), checked on disk.
TEST_F(Files, ConcurrentSmallWritesAreGatheredIntoCompounds) {
  constexpr int kThreads = 8, kBlocks = 64;
  constexpr size_t kBlock = 4096;
  Bytes want = random_bytes(kThreads * kBlocks * kBlock, 69);
  cl::OpenParams p;
  p.access = FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.disposition = FILE_OVERWRITE_IF;
  auto f = tree_->open("gather-w.bin", p);
  ASSERT_TRUE(f.ok()) << err_of(f);
  std::atomic<int> bad{0};
  cl::ConnectionStats before, after;
  for (int round = 0; round < kGatherRounds; round++) {  // the same bytes each round
    before = client_->conn().stats();
    run_at_once(kThreads, [&](int i) {
      for (int k = 0; k < kBlocks; k++) {
        size_t off = (static_cast<size_t>(k) * kThreads + i) * kBlock;
        size_t len = k == kBlocks - 1 ? kBlock - 100 * (i + 1) : kBlock;
        auto n = tree_->write(f->id, off, ByteView(want).subspan(off, len));
        if (!n.ok() || *n != len) bad++;
      }
    });
    after = client_->conn().stats();
    if (after.gathered > before.gathered) break;
  }
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(after.gathered - before.gathered, 0u) << "no two writes ever went out together";
  EXPECT_LT(after.frames_out - before.frames_out, static_cast<uint64_t>(kThreads * kBlocks));
  EXPECT_TRUE(tree_->close(f->id).ok());
  // The shortened blocks leave their tails as zeros (the file is longer
  // than the last of them only where another thread wrote past it).
  for (int i = 0; i < kThreads; i++) {
    size_t off = (static_cast<size_t>(kBlocks - 1) * kThreads + i) * kBlock + kBlock - 100 * (i + 1);
    size_t end = std::min(want.size(), off + 100 * (i + 1));
    std::fill(want.begin() + static_cast<ptrdiff_t>(off), want.begin() + static_cast<ptrdiff_t>(end), std::byte{0});
  }
  want.resize(want.size() - 100 * kThreads);  // the last block of the last thread ends short
  Bytes got = slurp(share_dir() + "/gather-w.bin");
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "a gathered write landed in the wrong place";
}

// An open may carry the file's first bytes and its attributes in the
// CREATE's frame (client::Prefetch): CREATE, QUERY_INFO, READ, related.
// The attributes come back for every size, also where the READ fails at
// the end of an empty file, and match what a separate stat says.
TEST_F(Files, AnOpenBringsItsFirstBytesAndItsAttributes) {
  for (size_t size : {size_t{0}, size_t{10}, size_t{100000}}) {
    SCOPED_TRACE(size);
    std::string name = unique_name("prefetch");
    Bytes data = random_bytes(size, 77 + size);
    ASSERT_TRUE(write_local(share_dir() + "/" + name, data));
    for (bool want_stat : {true, false}) {
      Bytes buf(65536);
      cl::Prefetch pf;
      pf.into = MutableByteView(buf.data(), buf.size());
      pf.want_stat = want_stat;
      cl::OpenExtras x;
      x.prefetch = &pf;
      cl::OpenParams p;
      p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
      p.options = FILE_NON_DIRECTORY_FILE;
      auto f = tree_->open(name, p, &x);
      ASSERT_TRUE(f.ok()) << err_of(f);
      ASSERT_TRUE(pf.got.has_value());
      EXPECT_EQ(*pf.got, std::min<size_t>(size, buf.size()));
      EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(*pf.got), data.begin()));
      if (want_stat) {
        ASSERT_TRUE(pf.stat.has_value()) << "no attributes with the open";
        auto s = tree_->stat(name);
        ASSERT_TRUE(s.ok()) << err_of(s);
        EXPECT_EQ(pf.stat->size, size);
        EXPECT_FALSE(pf.stat->is_dir);
        EXPECT_EQ(pf.stat->links, 1u);
        EXPECT_EQ(pf.stat->write_time, s->write_time);
        EXPECT_EQ(pf.stat->file_id, s->file_id);
      } else {
        EXPECT_FALSE(pf.stat.has_value());
      }
      IT_EXPECT_OK(tree_->close(f->id));
    }
  }
}

// A create asks only for the attributes (no READ): the new file is made
// and described in one frame, as the mount's create does.
TEST_F(Files, ACreateBringsItsAttributesInOneFrame) {
  std::string name = unique_name("created");
  cl::Prefetch pf;
  pf.want_stat = true;
  cl::OpenExtras x;
  x.prefetch = &pf;
  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.disposition = FILE_CREATE;
  p.options = FILE_NON_DIRECTORY_FILE;
  auto before = client_->conn().stats();
  auto f = tree_->open(name, p, &x);
  auto after = client_->conn().stats();
  ASSERT_TRUE(f.ok()) << err_of(f);
  EXPECT_EQ(after.frames_out - before.frames_out, 1u);
  EXPECT_FALSE(pf.got.has_value()) << "a READ was sent";
  ASSERT_TRUE(pf.stat.has_value()) << "no attributes with the create";
  EXPECT_EQ(pf.stat->size, 0u);
  EXPECT_EQ(pf.stat->links, 1u);
  EXPECT_NE(pf.stat->write_time, 0u);
  IT_EXPECT_OK(tree_->close(f->id));
  EXPECT_TRUE(fs::exists(share_dir() + "/" + name));
}

}  // namespace
}  // namespace smbkit_it
