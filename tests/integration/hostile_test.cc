// A hostile server cannot make the client hold unbounded memory or wait
// forever. The real smbd sits behind the tampering
// relay (tests/support/tamper_relay.h), which plays a server that repeats
// listing pages, answers a READ with nothing but interim responses, or
// sends frames longer than anything we asked for.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <mutex>

#include "client/lock.h"
#include "client/query_info.h"
#include "relay_util.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;
using smbkit::STATUS_INVALID_NETWORK_RESPONSE;
using smbkit::STATUS_IO_TIMEOUT;
using st::Toward;
using st::Verdict;
namespace smb2 = st::smb2;
using Seconds = std::chrono::duration<double>;

class Hostile : public ServerSuite<Hostile> {
 public:
  // Small negotiated sizes keep the test directories and frames small:
  // a listing of 2,000 short names takes several 64 KiB responses, and
  // the frame limit is 2 MiB + 64 KiB (Connection::frame_limit_for).
  static st::SambaOptions options() {
    st::SambaOptions o;
    o.global = {"smb2 max trans = 65536", "smb2 max read = 65536", "smb2 max write = 65536"};
    return o;
  }

 protected:
  static cl::ClientOptions through(const st::TamperRelay& relay, std::chrono::milliseconds timeout) {
    return through_relay(server(), relay, {}, false, false, timeout);
  }
};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

bool single_plain(const Bytes& f) {
  return smb2::is_plain(f) && f.size() >= smb2::kHeaderSize &&
         smbkit::load_le32(f.data() + smb2::kNextCommand) == 0;
}

struct Measured {
  int status = -1;  // exit status, 128+signal
  long max_rss_kb = 0;
  double seconds = 0;
  std::string err;  // stderr (its first 64 KiB)
};

// Runs argv with `env` added, stdout to /dev/null, its address
// space capped at `as_limit` bytes (so a client that does grow without
// bound fails fast instead of taking the machine), killed after
// timeout_s. Its peak RSS from wait4's rusage.
Measured run_measured(const std::vector<std::string>& argv, const std::vector<std::string>& env, int timeout_s,
                      rlim_t as_limit) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; e++) envs.emplace_back(*e);
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> a, ev;
  for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (auto& s : envs) ev.push_back(const_cast<char*>(s.c_str()));
  ev.push_back(nullptr);
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  FILE* errf = std::tmpfile();
  int errfd = fileno(errf);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(errfd, 2);
    // (Not under AddressSanitizer, which reserves terabytes of address
    // space for its shadow: the peak RSS, measured below, is the check.)
    if (!kAddressSanitizer) {
      rlimit rl{as_limit, as_limit};
      setrlimit(RLIMIT_AS, &rl);
    }
    execve(a[0], a.data(), ev.data());
    _exit(127);
  }
  ::close(devnull);
  Measured m;
  int stw = 0;
  rusage ru{};
  for (;;) {
    pid_t r = wait4(pid, &stw, WNOHANG, &ru);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout_s)) {
      kill(pid, SIGKILL);
      wait4(pid, &stw, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  m.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
  m.status = WIFEXITED(stw) ? WEXITSTATUS(stw) : 128 + WTERMSIG(stw);
  m.max_rss_kb = ru.ru_maxrss;
  char buf[65536];
  ::rewind(errf);
  m.err.assign(buf, std::fread(buf, 1, sizeof buf, errf));
  std::fclose(errf);
  return m;
}

// After the first QUERY_DIRECTORY response that stands alone in its frame
// (the step-by-step listing's first page), every later QUERY_DIRECTORY
// request is dropped and answered with a copy of that page: a server that
// never makes progress. Unchecked, the CLI would grow to gigabytes.
TEST_F(Hostile, ARepeatedListingPageEndsTheListingInBoundedMemory) {
  const std::string dir = unique_name("pages");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + dir));
  for (int i = 0; i < 2000; i++) ASSERT_TRUE(write_local(share_dir() + "/" + dir + "/f" + std::to_string(i), {}));
  std::mutex mu;
  Bytes page;
  std::atomic<int> repeated{0};
  auto relay = st::TamperRelay::start(server().port(), [&](Toward to, Bytes& f, st::TamperContext& ctx) {
    if (!single_plain(f) || smb2::command(f) != SMB2_QUERY_DIRECTORY) return Verdict::forward;
    std::lock_guard<std::mutex> g(mu);
    if (to == Toward::client) {
      if (page.empty() && smb2::status(f) == 0) page = f;
      return Verdict::forward;
    }
    if (page.empty()) return Verdict::forward;
    Bytes copy = page;
    smbkit::store_le64(copy.data() + smb2::kMessageId, smb2::message_id(f));
    ctx.send(Toward::client, std::move(copy));
    repeated++;
    return Verdict::drop;
  });
  IT_ASSERT_OK(relay);
  const std::string url = "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                          std::to_string((*relay)->port()) + "/share/" + dir;
  auto m = run_measured({kSmbkitBin, "--timeout", "10", "--no-reconnect", "ls", url},
                        {std::string("SMBKIT_PASSWORD=") + st::SambaServer::password()}, 60, rlim_t{1} << 30);
  EXPECT_EQ(m.status, 1) << "exit status (1: the listing failed; 128+n: killed by signal n)";
  // The documented error: STATUS_INVALID_NETWORK_RESPONSE, no progress.
  EXPECT_NE(m.err.find("made no progress"), std::string::npos) << m.err;
  EXPECT_LT(m.seconds, 20.0);
  EXPECT_LT(m.max_rss_kb, 100 * 1024) << "peak RSS " << m.max_rss_kb / 1024 << " MiB";
  EXPECT_GE(repeated.load(), 1);
  // Without the relay's tampering the same listing is whole.
  (*relay)->set_hook({});
  auto c = cl::Client::connect(through(**relay, std::chrono::seconds(30)));
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  size_t n = 0;
  IT_ASSERT_OK((*t)->list_each(dir, "*", [&](const cl::FileStat& s) -> Result<void> {
    if (s.name != "." && s.name != "..") n++;
    return {};
  }));
  EXPECT_EQ(n, 2000u);
}

// A READ the relay answers only with STATUS_PENDING, every 0.5 s for 12 s:
// interims extend its timeout to 2 x the timeout at most, so a server that
// keeps sending them cannot hold the read for as long as it likes.
TEST_F(Hostile, InterimResponsesCannotHoldAReadPastTwiceTheTimeout) {
  const std::string name = unique_name("slow");
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(8192, 1)));
  auto relay = st::TamperRelay::start(server().port());
  IT_ASSERT_OK(relay);
  const auto timeout = std::chrono::seconds(2);
  auto c = cl::Client::connect(through(**relay, timeout));
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  cl::OpenParams p;
  p.access = FILE_READ_DATA | SYNCHRONIZE;
  auto f = (*t)->open(name, p);
  IT_ASSERT_OK(f);
  std::atomic<int> interims{0};
  st::ScopedHook hooked(**relay, [&](Toward to, Bytes& fr, st::TamperContext& ctx) {
    if (to != Toward::server || !single_plain(fr) || smb2::command(fr) != SMB2_READ) return Verdict::forward;
    for (int k = 1; k <= 24; k++) {
      ctx.send(Toward::client, smb2::interim_response(fr, 0x5000 + smb2::message_id(fr)),
               std::chrono::milliseconds(500 * k));
      interims++;
    }
    return Verdict::drop;
  });
  Bytes buf(4096);
  auto start = std::chrono::steady_clock::now();
  auto n = (*t)->read(f->id, 0, buf);
  double took = Seconds(std::chrono::steady_clock::now() - start).count();
  IT_EXPECT_STATUS(n, STATUS_IO_TIMEOUT);
  EXPECT_LE(took, 2 * 2.0 + 1.0) << "the READ waited " << took << " s with a 2 s timeout";
  EXPECT_GE(took, 2.0);  // the interims did extend it
  EXPECT_GT(interims.load(), 0);
}

// A blocking LOCK keeps waiting past that bound: its interim means "until
// the holder lets go" (Lock* tests cover the grant; here only that the
// bound does not cut it).
TEST_F(Hostile, ABlockingLockOutlivesThePendingBound) {
  const std::string name = unique_name("locked");
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(4096, 2)));
  auto relay = st::TamperRelay::start(server().port());
  IT_ASSERT_OK(relay);
  auto c1 = cl::Client::connect(through(**relay, std::chrono::seconds(2)));
  auto c2 = cl::Client::connect(client_options(server()));
  IT_ASSERT_OK(c1);
  IT_ASSERT_OK(c2);
  auto t1 = (*c1)->tree_connect("share");
  auto t2 = (*c2)->tree_connect("share");
  IT_ASSERT_OK(t1);
  IT_ASSERT_OK(t2);
  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | SYNCHRONIZE;
  auto f1 = (*t1)->open(name, p);
  auto f2 = (*t2)->open(name, p);
  IT_ASSERT_OK(f1);
  IT_ASSERT_OK(f2);
  IT_ASSERT_OK(cl::lock_range(**t2, f2->id, 0, 100, true, false));
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5500));  // > 2 x the 2 s timeout
    (void)cl::unlock_range(**t2, f2->id, 0, 100);
  });
  auto start = std::chrono::steady_clock::now();
  auto l = cl::lock_range(**t1, f1->id, 0, 100, true, true);
  double took = Seconds(std::chrono::steady_clock::now() - start).count();
  releaser.join();
  IT_EXPECT_OK(l);
  EXPECT_GE(took, 5.0);
}

// A frame longer than any response to what we asked (the negotiated 64 KiB
// reads, 2 MiB compounds) is refused from its Direct TCP length: the
// connection is torn down instead of reading 3 MiB into memory.
TEST_F(Hostile, AFrameLongerThanNegotiatedEndsTheConnection) {
  const std::string name = unique_name("long");
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(4096, 3)));
  auto relay = st::TamperRelay::start(server().port());
  IT_ASSERT_OK(relay);
  auto o = open_through(through(**relay, std::chrono::seconds(10)), "share", name, FILE_READ_DATA);
  IT_ASSERT_OK(o);
  auto* c = &o->client;
  auto* t = &o->tree;
  auto* f = &o->file;
  st::ScopedHook hooked(**relay, [&](Toward to, Bytes& fr, st::TamperContext&) {
    if (to == Toward::client && single_plain(fr) && smb2::command(fr) == SMB2_READ)
      fr.resize(fr.size() + (3u << 20));  // trailing bytes past the READ's data
    return Verdict::forward;
  });
  Bytes buf(4096);
  auto start = std::chrono::steady_clock::now();
  auto n = (*t)->read(f->id, 0, buf);
  IT_EXPECT_STATUS(n, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_TRUE((*c)->conn().dead().has_value());
  EXPECT_LT(Seconds(std::chrono::steady_clock::now() - start).count(), 5.0);
}

// READ DataLength larger than the READ asked for (the data really there):
// the request fails; nothing past the caller's buffer is written.
TEST_F(Hostile, AReadReturningMoreThanAskedFails) {
  const std::string name = unique_name("more");
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(8192, 4)));
  auto relay = st::TamperRelay::start(server().port());
  IT_ASSERT_OK(relay);
  auto o = open_through(through(**relay, std::chrono::seconds(10)), "share", name, FILE_READ_DATA);
  IT_ASSERT_OK(o);
  auto* t = &o->tree;
  auto* f = &o->file;
  st::ScopedHook hooked(**relay, [&](Toward to, Bytes& fr, st::TamperContext&) {
    // MS-SMB2 2.2.20: DataLength at 4 in the body; the data runs to the end.
    if (to == Toward::client && single_plain(fr) && smb2::command(fr) == SMB2_READ && smb2::status(fr) == 0) {
      uint32_t len = smbkit::load_le32(fr.data() + smb2::kHeaderSize + 4);
      smbkit::store_le32(fr.data() + smb2::kHeaderSize + 4, len + 4096);
      fr.resize(fr.size() + 4096);
    }
    return Verdict::forward;
  });
  Bytes buf(8192 + 64, std::byte{0x5a});
  auto n = (*t)->read(f->id, 0, MutableByteView(buf.data(), 4096));
  IT_EXPECT_STATUS(n, STATUS_INVALID_NETWORK_RESPONSE);
  for (size_t i = 4096; i < buf.size(); i++) ASSERT_EQ(buf[i], std::byte{0x5a}) << "written past the buffer at " << i;
}

// A QUERY_INFO OutputBuffer longer than the OutputBufferLength asked (4 KiB
// for FileAllInformation): refused, not decoded.
TEST_F(Hostile, AQueryInfoReturningMoreThanAskedFails) {
  const std::string name = unique_name("info");
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(100, 5)));
  auto relay = st::TamperRelay::start(server().port());
  IT_ASSERT_OK(relay);
  auto o = open_through(through(**relay, std::chrono::seconds(10)), "share", name, FILE_READ_ATTRIBUTES);
  IT_ASSERT_OK(o);
  auto* t = &o->tree;
  auto* f = &o->file;
  IT_ASSERT_OK((*t)->stat_handle(f->id));
  st::ScopedHook hooked(**relay, [&](Toward to, Bytes& fr, st::TamperContext&) {
    // MS-SMB2 2.2.38: OutputBufferLength at 4 in the body; the buffer runs
    // to the end of the message.
    if (to == Toward::client && single_plain(fr) && smb2::command(fr) == SMB2_QUERY_INFO && smb2::status(fr) == 0) {
      uint32_t len = smbkit::load_le32(fr.data() + smb2::kHeaderSize + 4);
      const uint32_t more = smbkit::client::kAllInformationLength + 8;  // than stat_handle asks
      smbkit::store_le32(fr.data() + smb2::kHeaderSize + 4, more);
      fr.resize(fr.size() + (more - len));
    }
    return Verdict::forward;
  });
  IT_EXPECT_STATUS((*t)->stat_handle(f->id), STATUS_INVALID_NETWORK_RESPONSE);
}

}  // namespace
}  // namespace smbkit_it
