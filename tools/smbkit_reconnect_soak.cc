// smbkit-reconnect-soak: reconnect under load, by hand. Uploads SIZE bytes
// (default 2 GiB) to a throwaway smbd while killing and restarting it
// RESTARTS times (default 3), checks the server's file byte for byte, then
// downloads it with as many restarts, checking every chunk. Data is a
// function of the offset, so nothing is held in memory.
//
//   smbkit-reconnect-soak [SIZE_MIB] [RESTARTS]
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "client/client.h"
#include "client/transfer.h"
#include "proto/create.h"
#include "support/samba_server.h"

using namespace smbkit;
namespace cl = smbkit::client;
namespace pr = smbkit::proto;

namespace {
// Deterministic bytes for [off, off+n): 8-byte words derived from their
// offset, so any range can be produced or checked alone.
void fill(uint64_t off, std::byte* p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t pos = off + i, w = pos / 8;
    uint64_t x = w * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    p[i] = static_cast<std::byte>(x >> (8 * (pos % 8)));
  }
}
double secs_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  uint64_t size = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2048) << 20;
  int restarts = argc > 2 ? std::atoi(argv[2]) : 3;
  testing::SambaOptions so;
  so.share = {"kernel share modes = no", "kernel oplocks = no"};
  auto srv = testing::SambaServer::start(so);
  if (!srv) return std::fprintf(stderr, "smbd: %s\n", srv.error().message().c_str()), 1;
  auto& server = **srv;
  cl::ClientOptions o;
  o.conn.host = "127.0.0.1";
  o.conn.port = server.port();
  o.creds.user = testing::SambaServer::user();
  o.creds.password = testing::SambaServer::password();
  o.reconnect.soft_timeout = std::chrono::seconds(60);
  auto c = cl::Client::connect(o);
  if (!c) return std::fprintf(stderr, "connect: %s\n", c.error().message().c_str()), 1;
  auto t = (*c)->tree_connect("share");
  if (!t) return std::fprintf(stderr, "tree: %s\n", t.error().message().c_str()), 1;
  int done_restarts = 0;
  Result<void> restart_ok;
  auto maybe_restart = [&](uint64_t done) {
    if (done_restarts < restarts &&
        done >= (static_cast<uint64_t>(done_restarts) + 1) * size / static_cast<uint64_t>(restarts + 1)) {
      done_restarts++;
      std::fprintf(stderr, "  restarting smbd at %.0f MiB\n", static_cast<double>(done) / (1 << 20));
      auto r = server.restart();
      if (!r) restart_ok = r;
    }
  };

  // Upload.
  cl::OpenParams wp;
  wp.access = pr::FILE_WRITE_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
  wp.disposition = pr::FILE_OVERWRITE_IF;
  wp.options = pr::FILE_NON_DIRECTORY_FILE;
  wp.durable = true;
  auto t0 = std::chrono::steady_clock::now();
  auto f = (*t)->open("soak.bin", wp);
  if (!f) return std::fprintf(stderr, "open: %s\n", f.error().message().c_str()), 1;
  cl::TransferOptions to;
  to.progress = [&](uint64_t d, uint64_t) { maybe_restart(d); };
  auto up = cl::upload(**t, f->id, size, [](uint64_t off, MutableByteView b) -> Result<void> {
    fill(off, b.data(), b.size());
    return {};
  }, to);
  auto closed = (*t)->close(f->id);
  double up_s = secs_since(t0);
  if (!restart_ok) return std::fprintf(stderr, "restart: %s\n", restart_ok.error().message().c_str()), 1;
  if (!up) return std::fprintf(stderr, "put FAILED: %s\n", up.error().message().c_str()), 1;
  if (!closed) return std::fprintf(stderr, "close FAILED: %s\n", closed.error().message().c_str()), 1;
  int up_restarts = done_restarts;
  // Server-side check, byte for byte.
  {
    int fd = ::open((server.share_path("share") + "/soak.bin").c_str(), O_RDONLY);
    std::vector<std::byte> a(8 << 20), b(8 << 20);
    uint64_t off = 0;
    for (;;) {
      ssize_t n = ::read(fd, a.data(), a.size());
      if (n <= 0) break;
      fill(off, b.data(), static_cast<size_t>(n));
      if (std::memcmp(a.data(), b.data(), static_cast<size_t>(n)) != 0)
        return std::fprintf(stderr, "put: server file differs near offset %llu\n", (unsigned long long)off), 1;
      off += static_cast<uint64_t>(n);
    }
    ::close(fd);
    if (off != size) return std::fprintf(stderr, "put: server file has %llu bytes\n", (unsigned long long)off), 1;
  }
  auto s1 = (*c)->reconnect_stats();
  std::printf("put %.0f MiB with %d smbd restarts: OK, server file identical, %.1f s; reconnects %llu, "
              "durable reopens %llu, reopens by name %llu, lost %llu, re-sent %llu\n",
              static_cast<double>(size) / (1 << 20), up_restarts, up_s, (unsigned long long)s1.reconnects,
              (unsigned long long)s1.durable_reopens, (unsigned long long)s1.path_reopens,
              (unsigned long long)s1.lost_handles, (unsigned long long)s1.resent);

  // Download.
  done_restarts = 0;
  cl::OpenParams rp;
  rp.access = pr::FILE_READ_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
  rp.options = pr::FILE_NON_DIRECTORY_FILE;
  rp.share = pr::FILE_SHARE_READ;
  rp.durable = true;
  t0 = std::chrono::steady_clock::now();
  auto g = (*t)->open("soak.bin", rp);
  if (!g) return std::fprintf(stderr, "open: %s\n", g.error().message().c_str()), 1;
  std::vector<std::byte> want;
  auto got = cl::download(**t, g->id, size, [&](uint64_t off, ByteView chunk) -> Result<void> {
    want.resize(chunk.size());
    fill(off, want.data(), want.size());
    if (std::memcmp(want.data(), chunk.data(), chunk.size()) != 0)
      return sys_error(EIO, "downloaded data differs near offset " + std::to_string(off));
    maybe_restart(off + chunk.size());
    return {};
  });
  (void)(*t)->close(g->id);
  double down_s = secs_since(t0);
  if (!got) return std::fprintf(stderr, "get FAILED: %s\n", got.error().message().c_str()), 1;
  if (*got != size) return std::fprintf(stderr, "get FAILED: %llu bytes\n", (unsigned long long)*got), 1;
  auto s2 = (*c)->reconnect_stats();
  std::printf("get %.0f MiB with %d smbd restarts: OK, every chunk identical, %.1f s; reconnects %llu, "
              "durable reopens %llu, reopens by name %llu, lost %llu, re-sent %llu\n",
              static_cast<double>(size) / (1 << 20), done_restarts, down_s,
              (unsigned long long)(s2.reconnects - s1.reconnects),
              (unsigned long long)(s2.durable_reopens - s1.durable_reopens),
              (unsigned long long)(s2.path_reopens - s1.path_reopens),
              (unsigned long long)(s2.lost_handles - s1.lost_handles), (unsigned long long)(s2.resent - s1.resent));
  return 0;
}
