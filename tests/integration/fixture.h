// Shared helpers for the integration tests: a real smbd per test suite,
// clients connected to it, whole-file transfers through the pipelined
// engine, and direct access to the directories behind the shares (the
// server-side truth).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/transfer.h"
#include "client/user_input.h"
#include "proto/constants.h"
#include "proto/create.h"
#include "support/samba_server.h"
#include "support/temp_dir.h"

namespace smbkit_it {

namespace st = smbkit::testing;
namespace cl = smbkit::client;
namespace pr = smbkit::proto;
namespace fs = std::filesystem;
using smbkit::Bytes;
using smbkit::ByteView;
using smbkit::Error;
using smbkit::MutableByteView;
using smbkit::Result;

// "" when ok, else the error's message (for gtest failure messages).
template <class T>
std::string err_of(const Result<T>& r) {
  return r.ok() ? std::string() : r.error().message();
}
template <class T>
uint32_t status_of(const Result<T>& r) {
  return r.ok() ? 0u : r.error().status;
}
inline std::string status_name(uint32_t s) { return s ? smbkit::ntstatus_name(s) : "success"; }

#define IT_ASSERT_OK(r) ASSERT_TRUE((r).ok()) << ::smbkit_it::err_of(r)
#define IT_EXPECT_OK(r) EXPECT_TRUE((r).ok()) << ::smbkit_it::err_of(r)
// Asserts that a Result failed with exactly this NTSTATUS.
#define IT_ASSERT_STATUS(r, st)                                                            \
  ASSERT_EQ(::smbkit_it::status_name(::smbkit_it::status_of(r)), ::smbkit_it::status_name(st)) \
      << ::smbkit_it::err_of(r)
#define IT_EXPECT_STATUS(r, st)                                                            \
  EXPECT_EQ(::smbkit_it::status_name(::smbkit_it::status_of(r)), ::smbkit_it::status_name(st)) \
      << ::smbkit_it::err_of(r)

// Deterministic pseudo-random bytes (a seed per file, so failures repeat).
inline Bytes random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  Bytes b(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = g();
    std::memcpy(b.data() + i, &v, 8);
  }
  uint64_t v = g();
  for (size_t k = 0; i < n; i++, k++) b[i] = static_cast<std::byte>(v >> (8 * k));
  return b;
}

inline Bytes to_bytes(const std::string& s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());  // data() is null when empty
  return b;
}
inline std::string to_string(ByteView b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// First differing offset, for readable failures on large buffers.
inline std::string first_difference(ByteView a, ByteView b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return "first difference at offset " + std::to_string(i);
  if (a.size() != b.size())
    return "sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  return "identical";
}
inline ::testing::AssertionResult same_bytes(ByteView a, ByteView b) {
  if (a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin())) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << first_difference(a, b) << " (" << a.size() << " vs " << b.size()
                                       << " bytes)";
}
#define IT_EXPECT_SAME_BYTES(a, b) EXPECT_TRUE(::smbkit_it::same_bytes((a), (b)))

// Local files (server side truth).
inline std::optional<Bytes> read_local(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(f)), {});
  return to_bytes(s);
}

// A local file's bytes (empty if missing) and text ("<missing>" if missing),
// for comparisons that must not crash when the file is absent.
inline Bytes slurp(const std::string& path) { return read_local(path).value_or(Bytes{}); }
inline std::string slurp_str(const std::string& path) {
  auto b = read_local(path);
  return b ? to_string(*b) : std::string("<missing>");
}

// Runs body(0) .. body(threads - 1) on threads of their own, started
// together: each waits until all exist (started one by one on a loaded
// machine, each could finish before the next began).
inline void run_at_once(int threads, const std::function<void(int)>& body) {
  std::latch ready(threads);
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; i++)
    ts.emplace_back([&, i] {
      ready.arrive_and_wait();
      body(i);
    });
  for (auto& th : ts) th.join();
}

// `threads` threads each read `reads` pieces of 4 KiB (at pseudo-random,
// not always aligned offsets) of the open file whose content is `data`,
// all at once; returns how many reads failed or returned wrong bytes.
inline int concurrent_small_reads(cl::Tree& t, const smbkit::proto::FileId& id, const Bytes& data, int threads,
                                  int reads) {
  std::atomic<int> bad{0};
  run_at_once(threads, [&](int i) {
    std::mt19937 rng(static_cast<uint32_t>(i));
    Bytes buf(4096);
    for (int k = 0; k < reads; k++) {
      uint64_t off = (rng() % (data.size() / 4096)) * 4096 + rng() % 100;
      auto n = t.read(id, off, buf);
      size_t want = std::min<size_t>(4096, data.size() - off);
      if (!n.ok() || *n != want ||
          !std::equal(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(want), data.begin() + static_cast<ptrdiff_t>(off)))
        bad++;
    }
  });
  return bad.load();
}

// The Unix user smbd runs file operations as.
inline void chown_to_smb_user(const std::string& path) {
  if (struct passwd* pw = getpwnam(st::SambaServer::user())) {
    if (::chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0) { /* best effort; checked by callers */ }
  }
}

inline bool write_local(const std::string& path, ByteView data) {
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!f) return false;
  }
  chown_to_smb_user(path);
  return true;
}

inline bool mkdir_local(const std::string& path) {
  if (::mkdir(path.c_str(), 0777) != 0) return false;
  chown_to_smb_user(path);
  return true;
}

// A name unique within this process (tests share one server per suite).
inline std::string unique_name(const std::string& prefix) {
  static std::atomic<int> n{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string t = info ? std::string(info->name()) : std::string("t");
  for (char& c : t)
    if (c == '/') c = '_';
  return prefix + "-" + t + "-" + std::to_string(n++);
}

inline cl::ClientOptions client_options(const st::SambaServer& s, std::vector<uint16_t> dialects = {},
                                        bool sign = false, bool seal = false) {
  cl::ClientOptions o;
  o.conn.host = "127.0.0.1";
  o.conn.port = s.port();
  o.conn.dialects = std::move(dialects);
  o.conn.require_signing = sign;
  o.conn.require_encryption = seal;
  o.conn.timeout = std::chrono::seconds(30);
  o.creds.user = st::SambaServer::user();
  o.creds.password = st::SambaServer::password();
  return o;
}

// The matrix runner (scripts/matrix.sh) sets SMBKIT_TEST_VERS (a --vers
// value: 2.1, 3.0, 3.1.1, ...) and SMBKIT_TEST_SEC (plain, sign or seal).
// Unset: the defaults (every dialect, neither signing nor sealing). A
// malformed value is an error naming the variable, rather than silently
// running the default cell.
struct EnvCell {
  std::string vers;                // as given; "" when unset
  std::vector<uint16_t> dialects;  // empty: every dialect
  bool sign = false, seal = false;

  // The dialect a server offering every dialect (as the test smbd does)
  // negotiates: the highest one the cell allows.
  uint16_t expected_dialect() const {
    return dialects.empty() ? uint16_t{pr::SMB2_DIALECT_0311} : *std::max_element(dialects.begin(), dialects.end());
  }
  // False when every dialect the cell allows is 2.x, which cannot encrypt.
  bool can_encrypt() const { return expected_dialect() >= pr::SMB2_DIALECT_0300; }
};

inline Result<EnvCell> env_cell_spec() {
  EnvCell c;
  if (const char* v = std::getenv("SMBKIT_TEST_VERS"); v && *v) {
    auto d = cl::dialects_for_vers(v);
    if (!d) return smbkit::sys_error(EINVAL, std::string("SMBKIT_TEST_VERS=") + v + ": " + d.error().message());
    c.vers = v;
    c.dialects = std::move(*d);
  }
  if (const char* v = std::getenv("SMBKIT_TEST_SEC"); v && *v) {
    std::string m = v;
    if (m == "sign") c.sign = true;
    else if (m == "seal") c.seal = true;
    else if (m != "plain")
      return smbkit::sys_error(EINVAL, "SMBKIT_TEST_SEC=" + m + ": expected plain, sign or seal");
  }
  return c;
}

inline Result<cl::ClientOptions> env_cell(const st::SambaServer& s) {
  SMBKIT_TRY(auto c, env_cell_spec());
  return client_options(s, std::move(c.dialects), c.sign, c.seal);
}

// A test that cannot pass in this matrix cell by design (a share that
// requires encryption in a 2.x cell) says so with a reason; the gtest XML
// records it as skipped with this prefix, which scripts/matrix_report.py
// shows as "n/a" rather than as a pass.
#define IT_NOT_APPLICABLE_IF(cond, why) \
  if (cond) GTEST_SKIP() << "not applicable in this cell: " << why

#ifdef SMBKIT_BIN_DIR
inline const std::string kSmbkitBin = SMBKIT_BIN_DIR "/smbkit";

// The matrix cell as smbkit global options: --vers V, --sign, --seal.
inline Result<std::vector<std::string>> env_cli_args() {
  SMBKIT_TRY(auto c, env_cell_spec());
  std::vector<std::string> a;
  if (!c.vers.empty()) a.insert(a.end(), {"--vers", c.vers});
  if (c.sign) a.push_back("--sign");
  if (c.seal) a.push_back("--seal");
  return a;
}

// Runs the smbkit binary with SMBKIT_PASSWORD set to `password` (unset
// when nullptr), through env(1) so each command has its own environment.
// Like connect(): the matrix cell's options go first unless the test
// names --vers, --sign or --seal itself, in which case it gets exactly
// what it named. A malformed cell fails the test and the command is not
// run.
inline st::SambaServer::Output run_smbkit(const std::vector<std::string>& args,
                                          const char* password = st::SambaServer::password(),
                                          int timeout_s = 120) {
  std::vector<std::string> argv = {"env"};
  if (password) argv.push_back(std::string("SMBKIT_PASSWORD=") + password);
  else argv.push_back("-u"), argv.push_back("SMBKIT_PASSWORD");
  argv.push_back(kSmbkitBin);
  bool names_own = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--vers" || a.rfind("--vers=", 0) == 0 || a == "--sign" || a == "--seal";
  });
  if (!names_own) {
    auto cell = env_cli_args();
    if (!cell) {
      ADD_FAILURE() << cell.error().message();
      return {-1, "matrix cell: " + cell.error().message()};
    }
    argv.insert(argv.end(), cell->begin(), cell->end());
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return st::run_command(argv, timeout_s);
}
#endif

// Whole-file helpers through the pipelined engine.
inline Result<void> put_file(cl::Tree& t, const std::string& path, ByteView data,
                             const cl::TransferOptions& to = {}) {
  cl::OpenParams p;
  p.access = pr::FILE_READ_DATA | pr::FILE_WRITE_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
  p.disposition = pr::FILE_OVERWRITE_IF;
  p.options = pr::FILE_NON_DIRECTORY_FILE;
  p.share = pr::FILE_SHARE_READ;
  SMBKIT_TRY(auto f, t.open(path, p));
  auto up = cl::upload(
      t, f.id, data.size(),
      [&](uint64_t off, MutableByteView buf) -> Result<void> {
        if (off + buf.size() > data.size()) return smbkit::sys_error(EINVAL, "source past end");
        std::memcpy(buf.data(), data.data() + off, buf.size());
        return {};
      },
      to);
  auto c = t.close(f.id);
  if (!up) return up.take_error();
  if (*up != data.size())
    return smbkit::sys_error(EIO, "upload acknowledged " + std::to_string(*up) + " of " +
                                      std::to_string(data.size()) + " bytes");
  return c;
}

inline Result<Bytes> get_file(cl::Tree& t, const std::string& path, const cl::TransferOptions& to = {}) {
  cl::OpenParams p;
  p.access = pr::FILE_READ_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
  p.options = pr::FILE_NON_DIRECTORY_FILE;
  p.share = pr::FILE_SHARE_READ | pr::FILE_SHARE_WRITE;
  SMBKIT_TRY(auto f, t.open(path, p));
  Bytes out;
  out.reserve(f.size);
  auto got = cl::download(
      t, f.id, f.size,
      [&](uint64_t off, ByteView chunk) -> Result<void> {
        if (off != out.size()) return smbkit::sys_error(EIO, "chunk delivered out of order");
        out.insert(out.end(), chunk.begin(), chunk.end());
        return {};
      },
      to);
  auto c = t.close(f.id);
  if (!got) return got.take_error();
  if (*got != f.size) return smbkit::sys_error(EIO, "download ended early");
  if (!c) return c.take_error();
  return out;
}

// A fixture whose suite shares one smbd, configured by Derived::options()
// (default: the stock configuration).
template <class Derived, class Base = ::testing::Test>
class ServerSuite : public Base {
 public:
  static st::SambaOptions options() { return {}; }
  static void SetUpTestSuite() {
    auto r = st::SambaServer::start(Derived::options());
    if (r) server_ = std::move(*r);
    else start_error_ = r.error().message();
  }
  static void TearDownTestSuite() { server_.reset(); }

 protected:
  void SetUp() override { ASSERT_TRUE(server_ != nullptr) << "smbd did not start: " << start_error_; }
  static st::SambaServer& server() { return *server_; }
  static std::string share_dir(const std::string& share = "share") { return server_->share_path(share); }

  // connect() with no arguments takes the matrix cell's dialect and
  // security from the environment (env_cell); a test that names a
  // dialect, signing or sealing gets exactly what it named.
  static Result<std::unique_ptr<cl::Client>> connect(std::vector<uint16_t> dialects = {}, bool sign = false,
                                                     bool seal = false) {
    if (dialects.empty() && !sign && !seal) {
      SMBKIT_TRY(auto o, env_cell(*server_));
      return cl::Client::connect(o);
    }
    return cl::Client::connect(client_options(*server_, std::move(dialects), sign, seal));
  }

  static inline std::unique_ptr<st::SambaServer> server_;
  static inline std::string start_error_;
};

// A ServerSuite whose every test starts with a client connected (the
// matrix cell's options) to the share "share": client_ and tree_.
template <class Derived>
class TreeSuite : public ServerSuite<Derived> {
 protected:
  void SetUp() override {
    ServerSuite<Derived>::SetUp();
    if (this->HasFatalFailure()) return;
    auto c = ServerSuite<Derived>::connect();
    ASSERT_TRUE(c.ok()) << err_of(c);
    client_ = std::move(*c);
    auto t = client_->tree_connect("share");
    ASSERT_TRUE(t.ok()) << err_of(t);
    tree_ = std::move(*t);
  }
  void TearDown() override {
    tree_.reset();
    client_.reset();
  }
  std::unique_ptr<cl::Client> client_;
  std::unique_ptr<cl::Tree> tree_;
};

}  // namespace smbkit_it
