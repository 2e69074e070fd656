// The server's sessions (MS-SMB2 3.3.1.8 Session, 3.3.1.14 Channel,
// 3.3.1.5 GlobalSessionTable). A session is server-wide: it is reached
// from every connection it has a channel on (multichannel binding,
// 3.3.5.5.2), and it owns what its channels share: who authenticated, its
// trees, its open files (ConnOpens: Session.OpenTable) and the keys of its
// first channel (Session.SigningKey, the sealing keys). What belongs to one
// channel (its signing key, the credit window, requests in progress) stays
// with its connection (Conn, its ServerMachine).
//
// Threads: a session is read and changed from the loops of all its
// channels, so its mutable state sits behind its own mutex; the registry
// has another. Neither calls anything while held: the channel hooks
// (which post to a connection's loop) are copied out and called after.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "server/file_service.h"
#include "session/security.h"

namespace smbkit::server {

struct Snapshot;

// What a session needs from a connection it has a channel on. Called on
// any thread with no lock of ours held; each only posts to the
// connection's loop (and checks there that the connection still exists).
struct ChannelHooks {
  std::function<void(const BreakNotice&)> send_break;
  // The session ended on another channel (logoff, a newer session of the
  // same user, a failed re-authentication): forget it here.
  std::function<void(uint64_t session_id)> session_gone;
};

struct SessionTree {
  std::shared_ptr<TreeCtx> ctx;
  bool encrypt = false;  // requests must be sealed (MS-SMB2 3.3.5.2.11)
};

// Who authenticated; replaced whole by a re-authentication (3.3.5.5.3).
struct SessionAuth {
  std::string user;
  bool guest = false, anonymous = false;
  std::shared_ptr<const SessionIdentity> who;  // for the file layer's access checks
};

// What a session is made with: fixed for its life.
struct SessionParams {
  uint64_t id = 0;
  uint16_t dialect = 0;  // Session.Connection.Dialect: a channel must have the same
  uint16_t cipher = 0;
  uint16_t signing_algorithm = 0;
  std::array<std::byte, 16> client_guid{};
  std::shared_ptr<const Snapshot> snap;  // shares and users it authenticated against
  // The first channel's security: Session.SigningKey (a binding request is
  // signed with it) and the keys every channel seals with.
  session::SessionSecurity sec;
  SessionAuth auth;
};

class ServerSession {
 public:
  // Channels per session: a bound on what one client can make us keep.
  static constexpr size_t kMaxChannels = 32;
  static constexpr size_t kMaxTrees = 1024;

  ServerSession(SessionParams p, FileService& files);
  ~ServerSession();
  // A session whose opens' breaks go to its channels.
  static std::shared_ptr<ServerSession> make(SessionParams p, FileService& files);

  uint64_t id() const { return p_.id; }
  uint16_t dialect() const { return p_.dialect; }
  uint16_t cipher() const { return p_.cipher; }
  uint16_t signing_algorithm() const { return p_.signing_algorithm; }
  const std::array<std::byte, 16>& client_guid() const { return p_.client_guid; }
  const std::shared_ptr<const Snapshot>& snap() const { return p_.snap; }
  const session::SessionSecurity& security() const { return p_.sec; }
  // Session.OpenTable: the opens of every channel.
  const std::shared_ptr<ConnOpens>& opens() const { return opens_; }

  // False once the session ended (its requests answer
  // STATUS_USER_SESSION_DELETED).
  bool alive() const EXCLUDES(mu_);
  SessionAuth auth() const EXCLUDES(mu_);
  void set_auth(SessionAuth a) EXCLUDES(mu_);

  std::optional<SessionTree> tree(uint32_t tree_id) const EXCLUDES(mu_);
  // The new tree's id; 0 when the session has kMaxTrees already or ended.
  uint32_t add_tree(SessionTree t) EXCLUDES(mu_);
  bool remove_tree(uint32_t tree_id) EXCLUDES(mu_);

  enum class Bind { ok, full, ended, already };
  Bind add_channel(uint64_t conn_id, ChannelHooks hooks) EXCLUDES(mu_);
  bool has_channel(uint64_t conn_id) const EXCLUDES(mu_);
  // Whether `conn_id` was its last channel (the session must then end).
  bool remove_channel(uint64_t conn_id) EXCLUDES(mu_);
  size_t channels() const EXCLUDES(mu_);
  // Marks the session ended and returns the hooks of its channels other
  // than `except_conn` (to be told, with no lock held); empty when it had
  // ended already.
  std::vector<ChannelHooks> end(uint64_t except_conn) EXCLUDES(mu_);
  // An oplock or lease break for one of its opens: to its first channel
  // still there.
  void deliver_break(const BreakNotice& n) EXCLUDES(mu_);

 private:
  const SessionParams p_;
  const std::shared_ptr<ConnOpens> opens_;
  // A leaf: nothing is called while it is held.
  mutable Mutex mu_;
  bool alive_ GUARDED_BY(mu_) = true;
  SessionAuth auth_ GUARDED_BY(mu_);
  std::map<uint32_t, SessionTree> trees_ GUARDED_BY(mu_);
  uint32_t next_tree_id_ GUARDED_BY(mu_) = 1;
  std::vector<std::pair<uint64_t, ChannelHooks>> channels_ GUARDED_BY(mu_);
};

// GlobalSessionTable: the authenticated sessions, by SessionId.
class SessionRegistry {
 public:
  void add(std::shared_ptr<ServerSession> s) EXCLUDES(mu_);
  std::shared_ptr<ServerSession> find(uint64_t id) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

  enum class Close { logoff, keep_durable };
  // Ends `s`: out of the table, its opens closed (with keep_durable,
  // durable opens are kept for a reconnect, as on connection loss), its
  // other channels told. `from_conn`'s channel is the caller's to forget.
  void end(const std::shared_ptr<ServerSession>& s, uint64_t from_conn, Close how) EXCLUDES(mu_);

 private:
  // A leaf, taken before no other lock.
  mutable Mutex mu_;
  std::map<uint64_t, std::shared_ptr<ServerSession>> sessions_ GUARDED_BY(mu_);
};

}  // namespace smbkit::server
