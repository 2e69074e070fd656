// POSIX answers where the server's own would differ: names
// longer than 255 bytes are ENAMETOOLONG, read-only files and directories
// can be deleted and replaced (the directory decides, not the file), and
// fsync of a read-only descriptor succeeds. Each in every cache mode.
#include "fuse/fs_ops.h"
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

class PosixErrors : public Mount {};

const char* const kModes[] = {"cache=strict", "cache=none", "cache=loose"};

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; i++) out += s;
  return out;
}

TEST(PosixErrorsNames, LengthIsCountedInBytesBeforeAnythingElse) {
  using smbkit::fuse::ops::name_errno;
  EXPECT_EQ(name_errno(std::string(255, 'x'), EINVAL), 0);
  EXPECT_EQ(name_errno(std::string(256, 'x'), EINVAL), ENAMETOOLONG);
  EXPECT_EQ(name_errno(repeat("\xc3\xa9", 128), EINVAL), ENAMETOOLONG);  // 128 characters, 256 bytes
  EXPECT_EQ(name_errno(repeat("\xc3\xa9", 127), EINVAL), 0);
  EXPECT_EQ(name_errno("a:b", EINVAL), EINVAL);
  EXPECT_EQ(name_errno("a\\b", ENOENT), ENOENT);
  EXPECT_EQ(name_errno(std::string(300, ':'), EINVAL), ENAMETOOLONG);
}

// errno of a call that returned -1, or 0.
int err_of(int rc) { return rc < 0 ? errno : 0; }

TEST_F(PosixErrors, NamesLongerThan255BytesAreENAMETOOLONG) {
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string dir = mp + "/pe-long";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << strerror(errno);
    std::string file = dir + "/f";
    ASSERT_TRUE(write_file(file, "data"));
    for (const std::string& name : {std::string(256, 'x'), repeat("\xc3\xa9", 128), std::string(1000, 'y')}) {
      std::string p = dir + "/" + name;
      struct stat s{};
      EXPECT_EQ(err_of(::open(p.c_str(), O_WRONLY | O_CREAT, 0644)), ENAMETOOLONG) << "create";
      EXPECT_EQ(err_of(::mkdir(p.c_str(), 0755)), ENAMETOOLONG) << "mkdir";
      EXPECT_EQ(err_of(::stat(p.c_str(), &s)), ENAMETOOLONG) << "lookup";
      EXPECT_EQ(err_of(::unlink(p.c_str())), ENAMETOOLONG) << "unlink";
      EXPECT_EQ(err_of(::rmdir(p.c_str())), ENAMETOOLONG) << "rmdir";
      EXPECT_EQ(err_of(::rename(file.c_str(), p.c_str())), ENAMETOOLONG) << "rename to";
      EXPECT_EQ(err_of(::rename(p.c_str(), (dir + "/g").c_str())), ENAMETOOLONG) << "rename from";
      EXPECT_EQ(err_of(::link(file.c_str(), p.c_str())), ENAMETOOLONG) << "link";
    }
    // 255 bytes is still a name, in ASCII and in two-byte characters.
    for (const std::string& name : {std::string(255, 'x'), repeat("\xc3\xa9", 127)}) {
      std::string p = dir + "/" + name;
      EXPECT_TRUE(write_file(p, "ok")) << strerror(errno);
      EXPECT_EQ(slurp(p), "ok");
      EXPECT_EQ(::unlink(p.c_str()), 0) << strerror(errno);
    }
    EXPECT_EQ(::unlink(file.c_str()), 0) << strerror(errno);
    EXPECT_EQ(::rmdir(dir.c_str()), 0) << strerror(errno);
  }
}

TEST_F(PosixErrors, ReadOnlyFilesAndDirectoriesCanBeDeletedAndReplaced) {
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    struct stat s{};
    // Each mode in its own directory: one mode's leftovers stay out of the next.
    std::string rel = std::string("/pe-ro-") + (opts + 6);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string base = mp + rel, sbase = share_dir() + rel;
    // rm -f of a chmod 444 file.
    std::string ro = base + "/pe-ro";
    ASSERT_TRUE(write_file(ro, "read-only"));
    ASSERT_EQ(::chmod(ro.c_str(), 0444), 0) << strerror(errno);
    EXPECT_EQ(::unlink(ro.c_str()), 0) << "unlink of a read-only file: " << strerror(errno);
    EXPECT_NE(::stat((sbase + "/pe-ro").c_str(), &s), 0) << "still on the server";
    // rmdir of a chmod 555 directory.
    std::string d = base + "/pe-rodir";
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << strerror(errno);
    ASSERT_EQ(::chmod(d.c_str(), 0555), 0) << strerror(errno);
    EXPECT_EQ(::rmdir(d.c_str()), 0) << "rmdir of a read-only directory: " << strerror(errno);
    EXPECT_NE(::stat((sbase + "/pe-rodir").c_str(), &s), 0) << "still on the server";
    // rename over a read-only file replaces it (Samba allows it as it is).
    std::string from = base + "/pe-new", to = base + "/pe-old";
    ASSERT_TRUE(write_file(from, "new"));
    ASSERT_TRUE(write_file(to, "old"));
    ASSERT_EQ(::chmod(to.c_str(), 0444), 0) << strerror(errno);
    EXPECT_EQ(::rename(from.c_str(), to.c_str()), 0) << "rename over a read-only file: " << strerror(errno);
    EXPECT_EQ(slurp(sbase + "/pe-old"), "new");
    EXPECT_NE(::stat((sbase + "/pe-new").c_str(), &s), 0);
    // A read-only file or directory can be renamed (to a free name, or over
    // a file).
    EXPECT_EQ(::rename(to.c_str(), from.c_str()), 0) << "rename of a read-only file: " << strerror(errno);
    ASSERT_TRUE(write_file(to, "old"));
    EXPECT_EQ(::rename(from.c_str(), to.c_str()), 0) << "rename of a read-only file over one: " << strerror(errno);
    EXPECT_EQ(::unlink(to.c_str()), 0) << "unlink of the renamed read-only file: " << strerror(errno);
    std::string mv = base + "/pe-rodir-mv";
    ASSERT_EQ(::mkdir(mv.c_str(), 0755), 0) << strerror(errno);
    ASSERT_EQ(::chmod(mv.c_str(), 0555), 0) << strerror(errno);
    EXPECT_EQ(::rename(mv.c_str(), (mv + "2").c_str()), 0) << "rename of a read-only directory: " << strerror(errno);
    EXPECT_EQ(::rmdir((mv + "2").c_str()), 0) << strerror(errno);
    // A read-only directory that is not empty stays, and stays read-only.
    std::string full = base + "/pe-rodir-full";
    ASSERT_EQ(::mkdir(full.c_str(), 0755), 0) << strerror(errno);
    ASSERT_TRUE(write_file(full + "/inside", "x"));
    ASSERT_EQ(::chmod(full.c_str(), 0555), 0) << strerror(errno);
    EXPECT_EQ(err_of(::rmdir(full.c_str())), ENOTEMPTY);
    std::string fresh = mounted("cache=none,actimeo=0");
    ASSERT_EQ(::stat((fresh + rel + "/pe-rodir-full").c_str(), &s), 0) << strerror(errno);
    EXPECT_EQ(s.st_mode & 0222, 0u) << "the read-only attribute was not restored";
    ASSERT_EQ(::chmod(full.c_str(), 0755), 0) << strerror(errno);
    EXPECT_EQ(::unlink((full + "/inside").c_str()), 0) << strerror(errno);
    EXPECT_EQ(::rmdir(full.c_str()), 0) << strerror(errno);
    EXPECT_EQ(::rmdir(base.c_str()), 0) << strerror(errno);
  }
}

TEST_F(PosixErrors, FsyncOfAReadOnlyDescriptorSucceeds) {
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string p = mp + "/pe-fsync";
    ASSERT_TRUE(write_file(p, "written"));
    int rd = ::open(p.c_str(), O_RDONLY);
    ASSERT_GE(rd, 0) << strerror(errno);
    EXPECT_EQ(::fsync(rd), 0) << "fsync of O_RDONLY: " << strerror(errno);
    EXPECT_EQ(::fdatasync(rd), 0) << "fdatasync of O_RDONLY: " << strerror(errno);
    // With a writer's data still pending, fsync through the reader flushes it.
    int wr = ::open(p.c_str(), O_WRONLY);
    ASSERT_GE(wr, 0) << strerror(errno);
    std::string data = random_bytes(300000, 21);
    ASSERT_EQ(::pwrite(wr, data.data(), data.size(), 0), static_cast<ssize_t>(data.size())) << strerror(errno);
    EXPECT_EQ(::fsync(rd), 0) << "fsync of O_RDONLY with a writer open: " << strerror(errno);
    EXPECT_TRUE(same(slurp(share_dir() + "/pe-fsync"), data)) << "fsync left data unwritten";
    EXPECT_EQ(::close(wr), 0);
    EXPECT_EQ(::close(rd), 0);
    EXPECT_EQ(::unlink(p.c_str()), 0) << strerror(errno);
  }
}

}  // namespace
