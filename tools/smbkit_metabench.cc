// smbkit-metabench: metadata operations per second on one connection,
// through the client library (no process start-up in the figure).
//
//   SMBKIT_PASSWORD=... smbkit-metabench [--ops create,stat,rename,unlink]
//       [--count N] [--qd N] [--max-seconds S] smb://user@host:port/share/DIR
//
// In DIR (which must exist), in order, each phase over the same N names:
//   create  CREATE (FILE_CREATE) of a new empty file + CLOSE
//   stat    Tree::stat: CREATE + QUERY_INFO + CLOSE in one compound frame
//   rename  Tree::rename to a second name
//   unlink  Tree::unlink of the renamed file
// `--qd N` threads share the one connection, so up to N operations are in
// flight at once. A phase stops issuing after --max-seconds (default 60);
// later phases then cover only what the earlier ones made. One line per
// phase: op, operations done, seconds, ops/s, p50 and p99 latency in
// microseconds. Exit 1 if any operation failed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "client/client.h"
#include "client/url.h"
#include "proto/create.h"

using namespace smbkit;
namespace cl = smbkit::client;
namespace pr = smbkit::proto;

namespace {

using Clock = std::chrono::steady_clock;

struct PhaseResult {
  size_t done = 0;
  double seconds = 0;
  std::vector<double> lat_us;
};

int usage() {
  std::fputs(
      "usage: smbkit-metabench [--ops create,stat,rename,unlink] [--count N] [--qd N] [--max-seconds S] "
      "smb://user@host:port/share/DIR\n",
      stderr);
  return 2;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

double pct(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> ops = {"create", "stat", "rename", "unlink"};
  size_t count = 2000;
  int qd = 8;
  double max_s = 60;
  std::string url;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--ops" && (v = next())) {
      ops = split(v);
    } else if (a == "--count" && (v = next())) {
      count = std::strtoul(v, nullptr, 10);
    } else if (a == "--qd" && (v = next())) {
      qd = std::atoi(v);
    } else if (a == "--max-seconds" && (v = next())) {
      max_s = std::atof(v);
    } else if (!a.empty() && a[0] != '-' && url.empty()) {
      url = a;
    } else {
      return usage();
    }
  }
  if (url.empty() || count == 0 || count > 10'000'000 || qd < 1 || qd > 256 || max_s <= 0 || max_s > 3600)
    return usage();
  for (auto& o : ops)
    if (o != "create" && o != "stat" && o != "rename" && o != "unlink") return usage();

  auto u = cl::parse_smb_url(url);
  if (!u) {
    std::fprintf(stderr, "smbkit-metabench: %s\n", u.error().message().c_str());
    return 2;
  }
  cl::ClientOptions o;
  o.conn.host = u->host;
  o.conn.port = u->port;
  o.creds.user = u->user;
  o.creds.domain = u->domain;
  if (const char* p = std::getenv("SMBKIT_PASSWORD")) o.creds.password = p;
  o.reconnect.enabled = false;
  auto c = cl::Client::connect(o);
  if (!c) {
    std::fprintf(stderr, "smbkit-metabench: connect: %s\n", c.error().message().c_str());
    return 1;
  }
  auto t = (*c)->tree_connect(u->share);
  if (!t) {
    std::fprintf(stderr, "smbkit-metabench: tree connect: %s\n", t.error().message().c_str());
    return 1;
  }
  cl::Tree& tree = **t;
  const std::string dir = u->path.empty() ? "" : u->path + "/";
  const std::string tag = fmt::format("mb{}", getpid());
  auto name_a = [&](size_t i) { return fmt::format("{}{}-{}", dir, tag, i); };
  auto name_b = [&](size_t i) { return fmt::format("{}{}-{}.r", dir, tag, i); };

  std::atomic<bool> failed{false};
  size_t made = count;  // names the later phases may use
  std::printf("%-7s %8s %8s %10s %9s %9s\n", "op", "ops", "seconds", "ops/s", "p50_us", "p99_us");
  for (const auto& op : ops) {
    const size_t n = op == "create" ? count : made;
    std::atomic<size_t> next{0};
    std::vector<PhaseResult> per(static_cast<size_t>(qd));
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_s));
    // Each worker takes the next index and always finishes it, so the done
    // ones are [0, done) when the deadline stops a phase.
    auto work = [&](PhaseResult& r) {
      for (;;) {
        if (failed.load() || Clock::now() >= deadline) return;
        size_t i = next.fetch_add(1);
        if (i >= n) return;
        const auto t0 = Clock::now();
        Result<void> res;
        if (op == "create") {
          cl::OpenParams p;
          p.access = pr::FILE_READ_ATTRIBUTES | pr::FILE_WRITE_DATA | pr::SYNCHRONIZE;
          p.disposition = pr::FILE_CREATE;
          p.options = pr::FILE_NON_DIRECTORY_FILE;
          auto f = tree.open(name_a(i), p);
          if (f)
            res = tree.close(f->id);
          else
            res = f.take_error();
        } else if (op == "stat") {
          auto s = tree.stat(name_a(i));
          if (!s) res = s.take_error();
        } else if (op == "rename") {
          res = tree.rename(name_a(i), name_b(i), false);
        } else {
          res = tree.unlink(name_b(i));
        }
        if (!res) {
          std::fprintf(stderr, "smbkit-metabench: %s %zu: %s\n", op.c_str(), i, res.error().message().c_str());
          failed = true;
          return;
        }
        r.lat_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        r.done++;
      }
    };
    std::vector<std::thread> th;
    for (auto& r : per) th.emplace_back(work, std::ref(r));
    for (auto& x : th) x.join();
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    PhaseResult all;
    for (auto& r : per) {
      all.done += r.done;
      all.lat_us.insert(all.lat_us.end(), r.lat_us.begin(), r.lat_us.end());
    }
    if (all.done < n) made = std::min(made, all.done);
    std::printf("%-7s %8zu %8.3f %10.1f %9.1f %9.1f\n", op.c_str(), all.done, secs,
                secs > 0 ? static_cast<double>(all.done) / secs : 0.0, pct(all.lat_us, 0.5), pct(all.lat_us, 0.99));
    std::fflush(stdout);
    if (failed) return 1;
  }
  return 0;
}
