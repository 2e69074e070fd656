#include "server/server.h"

#include <sys/resource.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <thread>

#include "base/log.h"
#include "base/worker_pool.h"
#include "server/control.h"
#include "server/identity.h"
#include "server/interfaces.h"
#include "server/loop.h"
#include "server/state.h"
#include "server/status.h"

namespace smbkit::server {

namespace {

constexpr int kListenBacklog = 512;
constexpr unsigned kWorkersPerLoop = 4;

struct Address {
  int family = AF_INET6;
  sockaddr_storage ss{};
  socklen_t len = 0;
};

// "interfaces" entries: IPv4 or IPv6 literals (an "/mask" is ignored) and
// "lo" for the loopback addresses.
Result<std::vector<Address>> listen_addresses(const GlobalConfig& g, uint16_t port) {
  std::vector<std::string> names;
  if (g.bind_interfaces_only && !g.interfaces.empty()) {
    for (const std::string& i : g.interfaces) {
      std::string a = i.substr(0, i.find('/'));
      if (a == "lo") {
        names.push_back("127.0.0.1");
      } else {
        names.push_back(a);
      }
    }
  } else {
    names.push_back("::");
  }
  std::vector<Address> out;
  for (const std::string& n : names) {
    Address a;
    if (auto* s4 = reinterpret_cast<sockaddr_in*>(&a.ss); inet_pton(AF_INET, n.c_str(), &s4->sin_addr) == 1) {
      s4->sin_family = AF_INET;
      s4->sin_port = htons(port);
      a.family = AF_INET;
      a.len = sizeof(sockaddr_in);
    } else if (auto* s6 = reinterpret_cast<sockaddr_in6*>(&a.ss); inet_pton(AF_INET6, n.c_str(), &s6->sin6_addr) == 1) {
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons(port);
      a.family = AF_INET6;
      a.len = sizeof(sockaddr_in6);
    } else {
      return nt_error(STATUS_INVALID_PARAMETER, "interfaces: cannot listen on '" + n + "' (an IP address or lo)");
    }
    out.push_back(a);
  }
  return out;
}

Result<int> listen_on(const Address& a) {
  int fd = ::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_error(errno, "socket");
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (a.family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a.ss), a.len) < 0 || ::listen(fd, kListenBacklog) < 0) {
    int e = errno;
    ::close(fd);
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (a.family == AF_INET) {
      auto* s = reinterpret_cast<const sockaddr_in*>(&a.ss);
      inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
      port = ntohs(s->sin_port);
    } else {
      auto* s = reinterpret_cast<const sockaddr_in6*>(&a.ss);
      inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
      port = ntohs(s->sin6_port);
    }
    return sys_error(e, fmt::format("listen on [{}]:{}", host, port));
  }
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) < 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

// Descriptors kept from the open-files budget: rings, eventfds, share
// roots, inotify, logs, and the descriptors listings and path walks hold
// for a moment on each worker.
constexpr uint64_t kReservedDescriptors = 256;
constexpr uint32_t kMinOpenFiles = 64;

}  // namespace

struct Server::Impl {
  std::unique_ptr<ServerState> st;
  std::unique_ptr<WorkerPool> workers;
  std::vector<std::unique_ptr<Loop>> loops;
  std::vector<int> listen_fds;
  std::vector<uint16_t> ports;
  std::atomic<unsigned> next_loop{0};
  std::atomic<bool> stopped{false};
  // After st: destroyed (its thread joined) before the state it reports.
  std::unique_ptr<ControlSocket> control;

  void assign(int fd, std::string peer) {
    const uint32_t max = st->snapshot()->cfg.global.max_connections;
    if (st->connections.load() >= max) {
      SMBKIT_LOG(warn, "{}: refused: {} connections already", peer, max);
      ::close(fd);
      return;
    }
    loops[next_loop.fetch_add(1) % loops.size()]->adopt(fd, std::move(peer));
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

uint32_t open_files_budget(uint64_t nofile, uint32_t max_connections) {
  const uint64_t used = uint64_t(max_connections) + kReservedDescriptors;
  if (nofile <= used + kMinOpenFiles) return kMinOpenFiles;
  return static_cast<uint32_t>(std::min<uint64_t>(nofile - used, std::numeric_limits<uint32_t>::max()));
}

Result<std::unique_ptr<Server>> Server::start(Config cfg, UserDb users, ServerOptions opts) {
  auto impl = std::make_unique<Impl>();
  FileServiceOptions fo;
  fo.max_open_files = cfg.global.max_open_files;
  // Every open holds a descriptor: as many as the hard limit allows (as
  // smbd raises it), shared out so that no client can take them all.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    if (nofile.rlim_cur < nofile.rlim_max) {
      nofile.rlim_cur = nofile.rlim_max;
      if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) (void)getrlimit(RLIMIT_NOFILE, &nofile);
    }
    fo.max_open_files_total = open_files_budget(nofile.rlim_cur, cfg.global.max_connections);
    SMBKIT_LOG(info, "open files: at most {} at once (RLIMIT_NOFILE {}, {} connections)", fo.max_open_files_total,
               static_cast<uint64_t>(nofile.rlim_cur), cfg.global.max_connections);
  }
  fo.max_read = cfg.global.max_read;
  fo.max_write = cfg.global.max_write;
  fo.max_transact = cfg.global.max_trans;
  fo.nowait_reads = cfg.global.nowait_reads;
  fo.zero_copy_reads = cfg.global.zero_copy_reads;
  fo.zero_copy_min = cfg.global.zero_copy_min;
  fo.zero_copy_same_host = cfg.global.zero_copy_same_host;
  fo.as_session_users = switches_identity();
  SMBKIT_TRY(auto snap, make_snapshot(std::move(cfg), std::move(users)));
  impl->st = std::make_unique<ServerState>(snap, fo);
  const GlobalConfig& g = snap->cfg.global;

  std::vector<std::pair<int, uint16_t>> fds;  // fd, configured port
  for (uint16_t port : g.smb_ports) {
    SMBKIT_TRY(auto addrs, listen_addresses(g, port));
    bool first = true;
    for (const Address& a : addrs) {
      auto fd = listen_on(a);
      if (!fd) {
        for (auto& [f, _] : fds) ::close(f);
        return fd.take_error();
      }
      fds.push_back({*fd, port});
      if (first) impl->ports.push_back(bound_port(*fd));
      first = false;
    }
  }
  std::vector<sockaddr_storage> bound;
  for (auto& [fd, _] : fds) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) bound.push_back(ss);
  }
  impl->st->set_interfaces(local_interfaces(bound));
  unsigned nloops = opts.loops ? opts.loops : std::max(1u, std::thread::hardware_concurrency());
  unsigned nworkers = opts.workers ? opts.workers : kWorkersPerLoop * nloops;
  impl->workers = std::make_unique<WorkerPool>(static_cast<int>(nworkers), SIZE_MAX);
  for (unsigned i = 0; i < nloops; i++) impl->loops.push_back(std::make_unique<Loop>(*impl->st, *impl->workers, i));
  if (!g.private_dir.empty()) {
    ServerState* st = impl->st.get();
    auto c = ControlSocket::start(control_socket_path(g.private_dir), [st](std::string_view req) {
      if (req != "status") return std::string("error: unknown request (status)\n");
      return format_status(st->files().open_files(), st->connections.load());
    });
    // Serving does not depend on it: say why `smbkitd status` will not work.
    if (c) {
      impl->control = std::move(*c);
    } else {
      SMBKIT_LOG(warn, "{}; smbkitd status will not answer", c.error().message());
    }
  }
  Impl* raw = impl.get();
  for (auto& [fd, _] : fds) {
    impl->listen_fds.push_back(fd);
    impl->loops[0]->add_listener(fd, [raw](int c, std::string peer) { raw->assign(c, std::move(peer)); });
  }
  for (auto& l : impl->loops) {
    if (auto r = l->start(); !r) {
      for (int fd : impl->listen_fds) ::close(fd);
      return r.take_error();
    }
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::~Server() {
  stop();
  wait();
  // Workers first: an answer still on one is posted to its loop, which
  // must exist to take it.
  impl_->workers.reset();
  impl_->loops.clear();
  for (int fd : impl_->listen_fds) ::close(fd);
}

Result<void> Server::reload(Config cfg, UserDb users) {
  SMBKIT_TRY(auto snap, make_snapshot(std::move(cfg), std::move(users)));
  impl_->st->set_snapshot(std::move(snap));
  return {};
}

void Server::stop() {
  if (impl_->stopped.exchange(true)) return;
  for (auto& l : impl_->loops) l->stop();
}

void Server::wait() {
  for (auto& l : impl_->loops) l->join();
}

std::vector<uint16_t> Server::ports() const { return impl_->ports; }

}  // namespace smbkit::server
