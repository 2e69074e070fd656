// The mount behind a hostile network (docs/design/security.md): the
// tampering relay between the mount and the real smbd rewrites what the
// server says. A signed mount never hands a program bytes that did not
// verify, costs one connection per lie, and works again once the lying
// stops; a named user never silently mounts as a guest.
#include <atomic>

#include "integration/hostile_names.h"
#include "mount_fixture.h"
#include "support/tamper_relay.h"

namespace smbkit::fuse_testing {
namespace {

namespace smb2 = st::smb2;
using st::TamperContext;
using st::Toward;
using st::Verdict;

// Reads the whole file with read(2); 0 or the errno of the read that
// failed (an ifstream would stop quietly at the first error).
int read_all(const std::string& path, std::string& out) {
  out.clear();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return errno;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return 0;
}

class HostileMount : public Mount {
 protected:
  void SetUp() override {
    Mount::SetUp();
    auto r = st::TamperRelay::start(server_->port());
    ASSERT_TRUE(r.ok()) << r.error().message();
    relay_ = std::move(*r);
  }
  std::string port_opt() const { return "port=" + std::to_string(relay_->port()); }
  std::unique_ptr<st::TamperRelay> relay_;
};

// The relay flips a byte of every READ payload, clears SIGNED and names
// SessionId 0. A signed mount must not take such an answer as unsigned
// traffic of no session: the program would read the altered bytes.
TEST_F(HostileMount, ASignedMountNeverReturnsAlteredBytes) {
  std::string data = random_bytes(200000, 31);
  std::string path = share_dir() + "/hostile-read.bin";
  ASSERT_TRUE(write_file(path, data));
  chown_to_smb_user(path);
  Foreground fg = mount_foreground(port_opt() + ",sign,cache=none,vers=3.1.1");
  std::string mp = fg.mp;
  std::atomic<int> altered{0};
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == 0x0008 /* READ */ &&
        smb2::status(m) == 0 && m.size() > smb2::kHeaderSize + 16) {
      size_t data_off = static_cast<uint8_t>(m[smb2::kHeaderSize + 2]);  // MS-SMB2 2.2.20 DataOffset
      if (data_off < m.size()) m[data_off] ^= std::byte{0xFF};
      smb2::set_session_id(m, 0);
      smb2::strip_signature(m);
      altered++;
    }
    return Verdict::forward;
  });
  std::string got;
  int err = read_all(mp + "/hostile-read.bin", got);
  EXPECT_GT(altered.load(), 0) << "the relay saw no READ: the test tests nothing";
  // What was read is a prefix of the file (the open's own first READ rides
  // in the CREATE's frame, which the relay left alone).
  EXPECT_EQ(got, data.substr(0, got.size())) << "the mount returned bytes that did not verify";
  EXPECT_NE(err, 0) << "the read did not fail: " << slurp(fg.log);
  // The lie cost that connection, not the mount.
  relay_->set_hook({});
  std::string again;
  bool recovered = false;
  for (int i = 0; i < 50 && !recovered; i++) {
    recovered = read_all(mp + "/hostile-read.bin", again) == 0 && again == data;
    if (!recovered) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(recovered) << "the mount did not recover once the relay stopped lying";
  stop_foreground(fg);
}

// The relay sets SMB2_SESSION_FLAG_IS_GUEST in the answer to the named
// user's SESSION_SETUP: the mount fails (rather than mounting as a guest,
// unsigned), unless -o guest asks for it.
TEST_F(HostileMount, ANamedUserIsNotSilentlyMountedAsAGuest) {
  std::atomic<int> flagged{0};
  st::ScopedHook hooked(*relay_, [&](Toward to, Bytes& m, TamperContext&) {
    if (to == Toward::client && smb2::is_plain(m) && smb2::command(m) == 0x0001 /* SESSION_SETUP */ &&
        smb2::status(m) == 0) {
      std::byte* f = m.data() + smb2::kHeaderSize + 2;  // MS-SMB2 2.2.6 SessionFlags
      store_le16(f, static_cast<uint16_t>(load_le16(f) | 0x0001));
      flagged++;
    }
    return Verdict::forward;
  });
  std::string mp = new_dir();
  auto o = mount_at(mp, port_opt());
  EXPECT_GT(flagged.load(), 0);
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_FALSE(is_mounted(mp));
  EXPECT_NE(o.out.find("guest"), std::string::npos) << o.out;
}


// A server names entries "a/b", "x\\y", with a NUL, and "..": the mount
// lists the good ones and leaves those out (handed to the kernel, the '/'
// would fail the whole readdir with EIO).
TEST_F(HostileMount, NamesThatAreNotFileNamesAreLeftOutOfListings) {
  std::string dir = share_dir() + "/hostile-names";
  ASSERT_EQ(::mkdir(dir.c_str(), 0777), 0);
  chown_to_smb_user(dir);
  for (const char* n : {"good.txt", "slash", "backslash", "withnul", "dots"}) {
    ASSERT_TRUE(write_file(dir + "/" + n, n));
    chown_to_smb_user(dir + "/" + n);
  }
  st::ScopedHook hooked(*relay_, smbkit_it::hostile::rename_hook(
      {{"slash", "a/b"}, {"backslash", "x\\y"}, {"withnul", std::string("n\0ul", 4)}, {"dots", ".."}}));
  // Unsigned and plain whatever the matrix cell: the relay rewrites names.
  std::string mp = mounted(port_opt() + ",cache=none,vers=3.1.1");
  ASSERT_FALSE(mp.empty());
  DIR* d = ::opendir((mp + "/hostile-names").c_str());
  ASSERT_NE(d, nullptr) << strerror(errno);
  std::set<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) names.insert(e->d_name);
  int err = errno;
  ::closedir(d);
  EXPECT_EQ(err, 0) << "readdir failed: " << strerror(err);
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "good.txt"}));
  EXPECT_EQ(slurp(mp + "/hostile-names/good.txt"), "good.txt");
}

}  // namespace
}  // namespace smbkit::fuse_testing
