#include "server/state.h"

#include <algorithm>

#include "auth/crypto.h"

namespace smbkit::server {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// MS-SRVS 2.2.2.4: share types.
constexpr uint32_t STYPE_DISKTREE = 0x00000000;
constexpr uint32_t STYPE_IPC = 0x00000003;
constexpr uint32_t STYPE_SPECIAL = 0x80000000;

}  // namespace

const Share* Snapshot::find(std::string_view name) const {
  auto it = shares.find(lower(name));
  return it == shares.end() ? nullptr : it->second.get();
}

std::shared_ptr<const Share> Snapshot::share(std::string_view name) const {
  auto it = shares.find(lower(name));
  return it == shares.end() ? nullptr : it->second;
}

Result<std::shared_ptr<const Snapshot>> make_snapshot(Config cfg, UserDb users) {
  auto s = std::make_shared<Snapshot>();
  for (const ShareConfig& sc : cfg.shares) {
    auto sh = open_share(sc);
    if (!sh) {
      Error e = sh.take_error();
      e.context = "share [" + sc.name + "] " + sc.path + ": " + e.context;
      return e;
    }
    s->shares[lower(sc.name)] = std::move(*sh);
  }
  s->shares["ipc$"] = ipc_share(cfg.global);
  s->srvsvc.server_name = cfg.global.netbios_name;
  s->srvsvc.comment = cfg.global.server_string;
  // The list srvsvc answers: browseable shares and IPC$, as configured
  // when the pipe is opened.
  std::vector<rpc::ShareInfo1> list;
  for (const ShareConfig& sc : cfg.shares)
    if (sc.browseable) list.push_back({sc.name, STYPE_DISKTREE, sc.comment});
  list.push_back({"IPC$", STYPE_IPC | STYPE_SPECIAL, "IPC Service (" + cfg.global.server_string + ")"});
  s->srvsvc.shares = [list] { return list; };
  s->cfg = std::move(cfg);
  s->users = std::move(users);
  return std::shared_ptr<const Snapshot>(std::move(s));
}

ServerState::ServerState(std::shared_ptr<const Snapshot> snap, FileServiceOptions fopts)
    : snap_(std::move(snap)), files_(fopts) {
  auth::random_bytes(MutableByteView(guid_.data(), guid_.size()));
  // Session ids start at a random point (the high half) so that a client
  // reconnecting after a restart never names, as its PreviousSessionId,
  // a session of this run that happens to have its old id.
  uint32_t high = 0;
  auth::random_bytes(MutableByteView(reinterpret_cast<std::byte*>(&high), sizeof high));
  next_session_.store((uint64_t{high | 1u} << 32) | 1u, std::memory_order_relaxed);
  auth::random_bytes(MutableByteView(reinterpret_cast<std::byte*>(&nonce_base_), sizeof nonce_base_));
}

std::shared_ptr<const Snapshot> ServerState::snapshot() const {
  MutexLock l(mu_);
  return snap_;
}

void ServerState::set_snapshot(std::shared_ptr<const Snapshot> s) {
  MutexLock l(mu_);
  snap_ = std::move(s);
}

std::vector<proto::NetworkInterfaceInfo> ServerState::interfaces() const {
  MutexLock l(mu_);
  return interfaces_;
}

void ServerState::set_interfaces(std::vector<proto::NetworkInterfaceInfo> list) {
  MutexLock l(mu_);
  interfaces_ = std::move(list);
}

}  // namespace smbkit::server
