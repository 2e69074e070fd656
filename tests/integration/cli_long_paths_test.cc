// The smbkit binary on paths up to PATH_MAX - 1 (4,095 bytes) from the
// share root: mkdir, put, stat, get and ls succeed and say so. (The
// server returns a file's attributes with its whole path as the name, in
// UTF-16: twice as long as the path.)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "fixture.h"

namespace smbkit_it {
namespace {

class CliLongPaths : public ServerSuite<CliLongPaths> {
 protected:
  static st::SambaServer::Output smbkit(const std::vector<std::string> &args) {
    return run_smbkit(args, st::SambaServer::password(), 120);
  }
  static std::string url(const std::string &path) { return server().url("share") + "/" + path; }
};

constexpr size_t kLongest = PATH_MAX - 1;
constexpr size_t kComponent = 250;  // within NAME_MAX

TEST_F(CliLongPaths, MkdirPutStatGetLsUpToPathMax) {
  st::TempDir tmp("smbkit-it");
  // A chain of long directory names, each made by `smbkit mkdir`, until one
  // more name of at most 255 bytes reaches kLongest.
  std::string dir = unique_name("cli-lp");
  auto o = smbkit({"mkdir", url(dir)});
  ASSERT_EQ(o.status, 0) << o.out;
  for (char c = 'a'; kLongest - dir.size() - 1 > NAME_MAX; c++) {
    dir += "/" + std::string(kComponent, c);
    o = smbkit({"mkdir", url(dir)});
    ASSERT_EQ(o.status, 0) << dir.size() << " bytes: " << o.out;
  }
  const size_t leaf = kLongest - dir.size() - 1;
  const std::string sub = dir + "/" + std::string(leaf, 'd');
  const std::string file = dir + "/" + std::string(leaf, 'f');
  ASSERT_EQ(file.size(), kLongest);
  int share = ::open(share_dir().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(share, 0) << strerror(errno);
  struct stat s {};

  o = smbkit({"mkdir", url(sub)});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(::fstatat(share, sub.c_str(), &s, 0), 0) << "on the server: " << strerror(errno);
  o = smbkit({"stat", url(sub)});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("Type: directory"), std::string::npos) << o.out;

  Bytes data = random_bytes(200001, 4095);
  ASSERT_TRUE(write_local(tmp.path() + "/up.bin", data));
  o = smbkit({"put", tmp.path() + "/up.bin", url(file)});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(::fstatat(share, file.c_str(), &s, 0), 0) << "on the server: " << strerror(errno);
  EXPECT_EQ(s.st_size, static_cast<off_t>(data.size()));
  o = smbkit({"stat", url(file)});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("Size: " + std::to_string(data.size())), std::string::npos) << o.out;
  o = smbkit({"get", url(file), tmp.path() + "/down.bin"});
  EXPECT_EQ(o.status, 0) << o.out;
  IT_EXPECT_SAME_BYTES(slurp(tmp.path() + "/down.bin"), data);
  o = smbkit({"ls", url(dir)});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find(std::string(leaf, 'd') + "/\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(std::string(leaf, 'f') + "\n"), std::string::npos) << o.out;

  o = smbkit({"rm", url(file)});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(::fstatat(share, file.c_str(), &s, 0), 0) << "still on the server";
  ::close(share);
}

}  // namespace
}  // namespace smbkit_it
