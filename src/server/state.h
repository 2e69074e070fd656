// What every connection of a server shares: the configuration snapshot
// (shares opened, users, srvsvc's view), the file service, the session id
// source, the sessions (server-wide: a session may have channels on
// several connections) and the server's identity. A snapshot is immutable; a reload
// swaps in a new one, and sessions and trees keep the one they started on.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "proto/ioctl.h"
#include "rpc/pipe.h"
#include "server/config.h"
#include "server/file_service.h"
#include "server/sessions.h"
#include "server/share.h"
#include "server/users.h"

namespace smbkit::server {

struct Snapshot {
  Config cfg;
  UserDb users;
  // By name folded to lower case; IPC$ included.
  std::map<std::string, std::shared_ptr<const Share>> shares;
  rpc::SrvsvcOptions srvsvc;
  const Share* find(std::string_view name) const;
  std::shared_ptr<const Share> share(std::string_view name) const;
};

// Opens every share of cfg (an error names the share) and builds srvsvc's
// list from them.
Result<std::shared_ptr<const Snapshot>> make_snapshot(Config cfg, UserDb users);

class ServerState {
 public:
  ServerState(std::shared_ptr<const Snapshot> snap, FileServiceOptions fopts);

  std::shared_ptr<const Snapshot> snapshot() const EXCLUDES(mu_);
  void set_snapshot(std::shared_ptr<const Snapshot> s) EXCLUDES(mu_);
  // The interfaces the server is reached on (FSCTL_QUERY_NETWORK_INTERFACE_INFO).
  std::vector<proto::NetworkInterfaceInfo> interfaces() const EXCLUDES(mu_);
  void set_interfaces(std::vector<proto::NetworkInterfaceInfo> l) EXCLUDES(mu_);

  FileService& files() { return files_; }
  // Session ids unique across the server's connections (MS-SMB2 3.3.5.5.1).
  uint64_t next_session_id() { return next_session_.fetch_add(1, std::memory_order_relaxed); }
  const std::array<std::byte, 16>& guid() const { return guid_; }
  // GlobalSessionTable (MS-SMB2 3.3.1.5): the sessions of every connection.
  SessionRegistry& sessions() { return sessions_; }
  // A server-wide name for a connection (a session's channels are told
  // apart by it).
  uint64_t next_conn_id() { return next_conn_.fetch_add(1, std::memory_order_relaxed); }
  // The nonce prefix a connection seals with (session::NonceSource). The
  // channels of a session seal with one key, so their nonces must never
  // meet: prefixes follow the connection's id from a random start, and
  // differ in the 24 bits an AES-CCM nonce keeps until 2^24 connections
  // later (a random prefix each would collide once in 2^24 pairs).
  uint32_t nonce_prefix_for(uint64_t conn_id) const { return nonce_base_ + static_cast<uint32_t>(conn_id); }

  std::atomic<uint32_t> connections{0};

 private:
  // A leaf.
  mutable Mutex mu_;
  std::shared_ptr<const Snapshot> snap_ GUARDED_BY(mu_);
  std::vector<proto::NetworkInterfaceInfo> interfaces_ GUARDED_BY(mu_);
  FileService files_;
  std::atomic<uint64_t> next_session_{1};
  std::atomic<uint64_t> next_conn_{1};
  uint32_t nonce_base_ = 0;
  SessionRegistry sessions_;
  std::array<std::byte, 16> guid_{};
};

}  // namespace smbkit::server
