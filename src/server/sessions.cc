#include "server/sessions.h"

#include <algorithm>

namespace smbkit::server {

ServerSession::ServerSession(SessionParams p, FileService& files)
    : p_(std::move(p)), opens_(std::make_shared<ConnOpens>(files)) {
  auth_ = p_.auth;
}

std::shared_ptr<ServerSession> ServerSession::make(SessionParams p, FileService& files) {
  auto s = std::make_shared<ServerSession>(std::move(p), files);
  // Breaks of the session's opens go to whichever channel is still there
  // when they happen, not necessarily the one that opened the file.
  std::weak_ptr<ServerSession> weak = s;
  s->opens_->set_break_sink([weak](const BreakNotice& n) {
    if (auto self = weak.lock()) self->deliver_break(n);
  });
  return s;
}

ServerSession::~ServerSession() = default;

bool ServerSession::alive() const {
  MutexLock l(mu_);
  return alive_;
}

SessionAuth ServerSession::auth() const {
  MutexLock l(mu_);
  return auth_;
}

void ServerSession::set_auth(SessionAuth a) {
  MutexLock l(mu_);
  auth_ = std::move(a);
}

std::optional<SessionTree> ServerSession::tree(uint32_t tree_id) const {
  MutexLock l(mu_);
  auto it = trees_.find(tree_id);
  if (!alive_ || it == trees_.end()) return std::nullopt;
  return it->second;
}

uint32_t ServerSession::add_tree(SessionTree t) {
  MutexLock l(mu_);
  if (!alive_ || trees_.size() >= kMaxTrees) return 0;
  uint32_t tid = next_tree_id_++;
  if (tid == 0) tid = next_tree_id_++;
  t.ctx->tree_id = tid;
  trees_[tid] = std::move(t);
  return tid;
}

bool ServerSession::remove_tree(uint32_t tree_id) {
  MutexLock l(mu_);
  return trees_.erase(tree_id) > 0;
}

ServerSession::Bind ServerSession::add_channel(uint64_t conn_id, ChannelHooks hooks) {
  MutexLock l(mu_);
  if (!alive_) return Bind::ended;
  if (std::any_of(channels_.begin(), channels_.end(), [&](const auto& c) { return c.first == conn_id; }))
    return Bind::already;
  if (channels_.size() >= kMaxChannels) return Bind::full;
  channels_.emplace_back(conn_id, std::move(hooks));
  return Bind::ok;
}

bool ServerSession::has_channel(uint64_t conn_id) const {
  MutexLock l(mu_);
  return std::any_of(channels_.begin(), channels_.end(), [&](const auto& c) { return c.first == conn_id; });
}

bool ServerSession::remove_channel(uint64_t conn_id) {
  MutexLock l(mu_);
  auto it = std::find_if(channels_.begin(), channels_.end(), [&](const auto& c) { return c.first == conn_id; });
  if (it == channels_.end()) return false;
  channels_.erase(it);
  return channels_.empty();
}

size_t ServerSession::channels() const {
  MutexLock l(mu_);
  return channels_.size();
}

std::vector<ChannelHooks> ServerSession::end(uint64_t except_conn) {
  MutexLock l(mu_);
  std::vector<ChannelHooks> out;
  if (!alive_) return out;
  alive_ = false;
  for (auto& [conn, hooks] : channels_)
    if (conn != except_conn) out.push_back(hooks);
  channels_.clear();
  trees_.clear();
  return out;
}

void ServerSession::deliver_break(const BreakNotice& n) {
  std::function<void(const BreakNotice&)> send;
  {
    MutexLock l(mu_);
    if (!channels_.empty()) send = channels_.front().second.send_break;
  }
  if (send) send(n);
}

void SessionRegistry::add(std::shared_ptr<ServerSession> s) {
  const uint64_t id = s->id();
  MutexLock l(mu_);
  sessions_[id] = std::move(s);
}

std::shared_ptr<ServerSession> SessionRegistry::find(uint64_t id) const {
  MutexLock l(mu_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

size_t SessionRegistry::size() const {
  MutexLock l(mu_);
  return sessions_.size();
}

void SessionRegistry::end(const std::shared_ptr<ServerSession>& s, uint64_t from_conn, Close how) {
  {
    MutexLock l(mu_);
    auto it = sessions_.find(s->id());
    if (it != sessions_.end() && it->second == s) sessions_.erase(it);
  }
  std::vector<ChannelHooks> others = s->end(from_conn);
  // MS-SMB2 3.3.4.18 / 3.3.7.1: the session's opens close with it (durable
  // ones wait for a reconnect when the session was lost, not logged off).
  if (how == Close::keep_durable)
    s->opens()->close_all();
  else
    s->opens()->close_session(s->id());
  for (auto& h : others)
    if (h.session_gone) h.session_gone(s->id());
}

}  // namespace smbkit::server
