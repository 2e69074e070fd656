// Paths up to PATH_MAX - 1 (4,095 bytes) from the share root work through
// the mount: every operation on them succeeds and says so, in every cache
// mode. (The file name the server returns with a file's attributes is the
// whole path, in UTF-16: twice as long as the path itself.)
#include <climits>

#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

class LongPaths : public Mount {};

const char *const kModes[] = {"cache=strict", "cache=none", "cache=loose"};

// The longest path a program can name relative to a directory fd.
constexpr size_t kLongest = PATH_MAX - 1;
// Directory names in the chain: long, but within NAME_MAX.
constexpr size_t kComponent = 250;

int err_of(int rc) { return rc < 0 ? errno : 0; }

std::vector<std::string> names_in(int root, const std::string &rel) {
  std::vector<std::string> out;
  int fd = ::openat(root, rel.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return out;
  DIR *d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return out;
  }
  while (dirent *e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

bool lists(int root, const std::string &rel, const std::string &name) {
  auto v = names_in(root, rel);
  return std::find(v.begin(), v.end(), name) != v.end();
}

TEST_F(LongPaths, UpToPathMaxWorkInEveryCacheMode) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    int root = ::open(mp.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(root, 0) << strerror(errno);
    int share = ::open(share_dir().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(share, 0) << strerror(errno);
    // A chain of long directory names, each made through the mount, until
    // one more name of at most 255 bytes reaches kLongest.
    std::string base = std::string("lp-") + (opts + 6);
    ASSERT_EQ(::mkdirat(root, base.c_str(), 0755), 0) << strerror(errno);
    std::vector<std::string> chain = {base};
    std::string dir = base;
    while (kLongest - dir.size() - 1 > NAME_MAX) {
      dir += "/" + std::string(kComponent, static_cast<char>('a' + chain.size() % 26));
      ASSERT_EQ(::mkdirat(root, dir.c_str(), 0755), 0) << dir.size() << " bytes: " << strerror(errno);
      chain.push_back(dir);
    }
    const size_t leaf = kLongest - dir.size() - 1;
    const std::string sub = dir + "/" + std::string(leaf, 'd');
    const std::string file = dir + "/" + std::string(leaf, 'f');
    const std::string moved = dir + "/" + std::string(leaf, 'g');
    ASSERT_EQ(sub.size(), kLongest);
    struct stat s {};

    // mkdir says it made the directory, and the server has it.
    EXPECT_EQ(err_of(::mkdirat(root, sub.c_str(), 0755)), 0) << "mkdir";
    EXPECT_EQ(err_of(::fstatat(share, sub.c_str(), &s, 0)), 0) << "on the server";
    EXPECT_EQ(err_of(::fstatat(root, sub.c_str(), &s, 0)), 0) << "stat of the directory";
    EXPECT_TRUE(S_ISDIR(s.st_mode));
    EXPECT_EQ(names_in(root, sub).size(), 0u) << "readdir of the empty directory";

    // create (touch), write, fstat, read back.
    const std::string data = random_bytes(300000, 21);
    int fd = ::openat(root, file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0) << "create: " << strerror(errno);
    if (fd >= 0) {
      EXPECT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size())) << strerror(errno);
      EXPECT_EQ(err_of(::fstat(fd, &s)), 0) << "fstat";
      EXPECT_EQ(err_of(::futimens(fd, nullptr)), 0) << "touch through the descriptor";
      EXPECT_EQ(::close(fd), 0) << strerror(errno);
    }
    EXPECT_EQ(err_of(::utimensat(root, file.c_str(), nullptr, 0)), 0) << "touch by path";
    EXPECT_EQ(err_of(::fstatat(root, file.c_str(), &s, 0)), 0) << "stat of the file";
    EXPECT_EQ(s.st_size, static_cast<off_t>(data.size()));
    std::string back;
    fd = ::openat(root, file.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << "open to read: " << strerror(errno);
    if (fd >= 0) {
      back.resize(data.size() + 1);
      size_t got = 0;
      for (ssize_t n; (n = ::read(fd, &back[got], back.size() - got)) > 0;) got += static_cast<size_t>(n);
      back.resize(got);
      ::close(fd);
    }
    EXPECT_TRUE(same(back, data));
    EXPECT_TRUE(lists(root, dir, std::string(leaf, 'd'))) << "readdir";
    EXPECT_TRUE(lists(root, dir, std::string(leaf, 'f'))) << "readdir";

    // rename, then the old name is gone and the new one has the data.
    EXPECT_EQ(err_of(::renameat(root, file.c_str(), root, moved.c_str())), 0) << "rename";
    EXPECT_EQ(err_of(::fstatat(root, file.c_str(), &s, 0)), ENOENT) << "old name";
    EXPECT_EQ(err_of(::fstatat(root, moved.c_str(), &s, 0)), 0) << "new name";
    EXPECT_EQ(s.st_size, static_cast<off_t>(data.size()));
    EXPECT_EQ(err_of(::fstatat(share, moved.c_str(), &s, 0)), 0) << "new name on the server";

    // unlink and rmdir, through the whole chain.
    EXPECT_EQ(err_of(::unlinkat(root, moved.c_str(), 0)), 0) << "unlink";
    EXPECT_EQ(err_of(::fstatat(share, moved.c_str(), &s, 0)), ENOENT) << "unlinked on the server";
    EXPECT_EQ(err_of(::unlinkat(root, sub.c_str(), AT_REMOVEDIR)), 0) << "rmdir";
    EXPECT_EQ(err_of(::fstatat(share, sub.c_str(), &s, 0)), ENOENT) << "removed on the server";
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      EXPECT_EQ(err_of(::unlinkat(root, it->c_str(), AT_REMOVEDIR)), 0) << it->size() << " bytes";
    ::close(share);
    ::close(root);
  }
}

}  // namespace
