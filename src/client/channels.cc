// Multichannel on the client (docs/design/multichannel.md): binding more
// connections to the session (MS-SMB2 3.2.4.2.3, 3.2.5.3), spreading READs
// and WRITEs over them, taking a lost one out and binding it again in the
// background, a bounded number of times.
#include <arpa/inet.h>

#include <algorithm>
#include <chrono>

#include "auth/signing.h"
#include "auth/spnego_initiator.h"
#include "base/log.h"
#include "client/client.h"
#include "proto/ioctl.h"
#include "proto/session_setup.h"

namespace smbkit::client {

using namespace proto;

namespace {

// How long a connection to a listed interface may take to connect before
// the binding falls back to the first connection's address: a server's
// interface that does not answer (filtered, another network) must not
// cost the whole request timeout per channel.
constexpr std::chrono::milliseconds kInterfaceConnectTimeout{3000};

// Attempts to bind one lost channel again, and the waits before them.
constexpr std::chrono::milliseconds kRebindBackoff[] = {std::chrono::milliseconds(100),
                                                        std::chrono::milliseconds(1000),
                                                        std::chrono::milliseconds(5000)};

bool is_loopback(const std::string& host) {
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, host.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return host == "localhost";
}

// An address from the server we would connect to: IPv4 or IPv6 that names
// one host (not unspecified, multicast or broadcast) and, for IPv6, not
// link-local (it would need the scope of one of our interfaces).
std::optional<std::string> usable_address(const NetworkInterfaceInfo& i) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (i.Address.size() == 4) {
    uint32_t a = (std::to_integer<uint32_t>(i.Address[0]) << 24) | (std::to_integer<uint32_t>(i.Address[1]) << 16) |
                 (std::to_integer<uint32_t>(i.Address[2]) << 8) | std::to_integer<uint32_t>(i.Address[3]);
    if (a == 0 || a == 0xFFFFFFFFu || (a >> 28) == 0xE) return std::nullopt;
    if (!inet_ntop(AF_INET, i.Address.data(), buf, sizeof buf)) return std::nullopt;
    return std::string(buf);
  }
  if (i.Address.size() == 16) {
    in6_addr a6;
    std::memcpy(&a6, i.Address.data(), 16);
    if (IN6_IS_ADDR_UNSPECIFIED(&a6) || IN6_IS_ADDR_MULTICAST(&a6) || IN6_IS_ADDR_LINKLOCAL(&a6))
      return std::nullopt;
    if (!inet_ntop(AF_INET6, &a6, buf, sizeof buf)) return std::nullopt;
    return std::string(buf);
  }
  return std::nullopt;
}

}  // namespace

Result<void> Client::bind_channel(const std::string& host) {
  std::shared_ptr<Connection> first;
  SessionInfo info;
  uint64_t gen;
  std::optional<session::SessionSecurity> base;
  uint32_t nonce_base;
  {
    MutexLock g(state_mu_);
    first = conn_;
    info = session_;
    gen = session_gen_;
    base = session_keys_;
    nonce_base = nonce_base_;
  }
  const ServerInfo& srv = first->server();
  const std::string where = host_url();
  // MS-SMB2 3.2.4.2.3: only on 3.x, to a server that offered multichannel,
  // for a session with keys.
  if (!opts_.conn.multichannel || srv.dialect < SMB2_DIALECT_0300 ||
      !(srv.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
    return nt_error(STATUS_NOT_SUPPORTED, where + ": multichannel not negotiated (needs SMB 3.x and a server offering it)");
  if (info.guest || info.anonymous)
    return nt_error(STATUS_NOT_SUPPORTED, where + ": a guest or anonymous session has no channels");
  if (!base || base->signing_key.empty())
    return nt_error(STATUS_NOT_SUPPORTED, where + ": the session has no signing key to bind with");

  ConnectionOptions co = opts_.conn;
  if (!host.empty() && host != first->peer()) {
    co.host = host;
    co.connect_timeout = kInterfaceConnectTimeout;
  }
  co.client_guid = client_guid_;
  co.dialects = {srv.dialect};  // the session's dialect, nothing else
  co.multichannel = true;
  SMBKIT_TRY(std::shared_ptr<Connection> conn, Connection::connect(co));
  const ServerInfo& cs = conn->server();
  // The same server (its ServerGuid) settling the same dialect, cipher and
  // signing algorithm: the server refuses a binding otherwise (MS-SMB2
  // 3.3.5.5.2), and an interface address must not lead anywhere else.
  if (cs.server_guid != srv.server_guid || cs.dialect != srv.dialect || cs.cipher != srv.cipher ||
      cs.signing_algorithm != srv.signing_algorithm || !(cs.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL)) {
    conn->close();
    return nt_error(STATUS_REQUEST_NOT_ACCEPTED, where + ": the channel's connection negotiated differently");
  }
  // MS-SMB2 3.1.4.3: every channel seals with the session's key; nonces
  // stay unique across them by prefix.
  uint32_t serial;
  {
    MutexLock g(state_mu_);
    serial = ++channel_serial_;
  }
  conn->set_nonce_prefix(nonce_base + serial);

  // MS-SMB2 3.2.4.2.3: the binding is signed with Session.SigningKey and
  // never sealed; on 3.1.1 its preauth hash starts from this connection's.
  session::SessionSecurity binding = *base;
  binding.signing_required = true;
  binding.encrypt_data = false;
  conn->add_session(binding);
  conn->begin_session_preauth();

  auth::NtlmCredentials nc;
  nc.user = opts_.creds.user;
  nc.password = opts_.creds.password;
  nc.domain = opts_.creds.domain;
  nc.workstation = "SMBKIT";
  auth::SpnegoNtlmClient spnego(nc);
  auto fail = [&](Error e) -> Result<void> {
    conn->close();
    return e;
  };
  if (auto hint = spnego.check_server_hint(cs.security_blob); !hint)
    return fail(nt_error(hint.error().status, "binding a channel: server does not offer NTLM"));
  Bytes token = spnego.initial_token();
  SessionSetupResponse final_rsp;
  session::Response final_msg;
  for (int round = 0;; round++) {
    if (round >= 4) return fail(protocol_error("binding a channel did not finish in 4 rounds"));
    auto r = session_setup_request(info.session_id, opts_.conn.require_signing, token, 0, SMB2_SESSION_FLAG_BINDING);
    if (!r) return fail(r.take_error());
    r->sign = true;
    auto resp = conn->call(std::move(*r));
    if (!resp) return fail(resp.take_error());
    if (resp->hdr.SessionId != info.session_id) return fail(protocol_error("binding answered for another session"));
    const uint32_t st = resp->hdr.Status;
    if (st == STATUS_MORE_PROCESSING_REQUIRED) {
      auto rsp = decode_session_setup_response(resp->msg());
      if (!rsp) return fail(rsp.take_error());
      auto next = spnego.next_token(rsp->SecurityBuffer, filetime_now());
      if (!next) return fail(Error{next.error().status, 0, "binding a channel: " + next.error().context});
      token = std::move(*next);
      continue;
    }
    if (st != STATUS_SUCCESS) return fail(nt_error(st, where + ": binding a channel"));
    auto rsp = decode_session_setup_response(resp->msg());
    if (!rsp) return fail(rsp.take_error());
    final_rsp = std::move(*rsp);
    auto fin = spnego.next_token(final_rsp.SecurityBuffer, filetime_now());
    if (!fin) return fail(Error{fin.error().status, 0, "binding a channel: " + fin.error().context});
    final_msg = std::move(*resp);
    break;
  }
  if (spnego.session_key().empty() || (final_rsp.SessionFlags & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL)))
    return fail(nt_error(STATUS_ACCESS_DENIED, where + ": binding a channel made no keyed session"));

  // MS-SMB2 3.2.5.3.1: Channel.SigningKey from this authentication's key
  // (and on 3.1.1 this connection's preauth hash); the final answer is
  // signed with it. Sealing keys stay the session's.
  Bytes preauth = conn->session_preauth_value();
  auto chan = session::SessionSecurity::derive(session::Role::client, info.session_id, cs.dialect, cs.cipher,
                                               cs.signing_algorithm, spnego.session_key(), preauth);
  if (!final_msg.signature_unchecked)
    return fail(session::security_violation(STATUS_ACCESS_DENIED, "binding a channel: final response not signed"));
  if (!auth::verify_message(chan.sign_alg, chan.signing_key, final_msg.msg()))
    return fail(session::security_violation(STATUS_INVALID_SIGNATURE,
                                            "binding a channel: final response signature"));
  // A channel signs everything (as the servers expect): its requests are
  // told from the other channels' by their key.
  chan.signing_required = true;
  chan.encrypt_data = base->encrypt_data;
  chan.cipher = base->cipher;
  chan.seal_key = base->seal_key;
  chan.unseal_key = base->unseal_key;
  conn->add_session(std::move(chan));

  bool published = false;
  {
    MutexLock g(state_mu_);
    if (gen == session_gen_) {
      published = true;
      if (break_handler_) conn->set_break_handler(*break_handler_);
      channels_.push_back(conn);
      channel_stats_.bound++;
      SMBKIT_LOG(debug, "session {:#x}: channel {} bound to {}", info.session_id, channels_.size() + 1, co.host);
    }
  }
  if (published) {
    publish_channel_sequence();
    return {};
  }
  // A reconnect replaced the session meanwhile.
  return fail(nt_error(STATUS_CONNECTION_DISCONNECTED, where + ": reconnected while binding a channel"));
}

std::optional<std::vector<std::string>> Client::interface_hosts(Tree& tree) {
  auto a = tree.fsctl(FileId{~0ull, ~0ull}, FSCTL_QUERY_NETWORK_INTERFACE_INFO, {}, 64 * 1024,
                      "query network interfaces");
  if (!a) {
    SMBKIT_LOG(debug, "{}: no interface list ({})", host_url(), a.error().message());
    return std::nullopt;
  }
  auto list = decode_network_interface_info(a->output);
  if (!list) return std::nullopt;
  // The fastest first (MS-SMB2 3.2.5.14.11: LinkSpeed, then RSS).
  std::stable_sort(list->begin(), list->end(), [](const NetworkInterfaceInfo& x, const NetworkInterfaceInfo& y) {
    if (x.LinkSpeed != y.LinkSpeed) return x.LinkSpeed > y.LinkSpeed;
    return (x.Capability & RSS_CAPABLE) > (y.Capability & RSS_CAPABLE);
  });
  // From a loopback address, only the server's loopback addresses of the
  // same family: its other interfaces may not lead back to it from here,
  // and the traffic stays on this host (cifs.ko, asked for more channels
  // than it can reach, puts them on the address it has).
  const std::string first = conn().peer().empty() ? opts_.conn.host : conn().peer();
  const bool local = is_loopback(first);
  const bool v6 = first.find(':') != std::string::npos;
  std::vector<std::string> hosts;
  for (const auto& i : *list) {
    auto h = usable_address(i);
    if (!h || std::find(hosts.begin(), hosts.end(), *h) != hosts.end()) continue;
    if (local && (!is_loopback(*h) || (h->find(':') != std::string::npos) != v6)) continue;
    hosts.push_back(*h);
  }
  return hosts;
}

void Client::refresh_interfaces() {
  auto ipc = tree_connect("IPC$");
  if (!ipc) {
    SMBKIT_LOG(debug, "{}: interfaces not asked again: {}", host_url(), ipc.error().message());
    return;
  }
  auto hosts = interface_hosts(**ipc);
  if (!hosts) return;
  MutexLock g(state_mu_);
  interfaces_ = std::move(*hosts);
  unreachable_.clear();
}

std::string Client::next_channel_host() const {
  MutexLock g(state_mu_);
  // peer() is set before a connection is shared and never changes: no
  // lock of the connection is taken under ours.
  std::string best;
  size_t least = ~size_t{0};
  for (const auto& h : interfaces_) {
    if (std::find(unreachable_.begin(), unreachable_.end(), h) != unreachable_.end()) continue;
    size_t n = conn_->peer() == h;
    for (const auto& c : channels_) n += c->peer() == h;
    if (n < least) {
      least = n;
      best = h;
    }
  }
  return best;
}

Result<void> Client::bind_next_channel() {
  const std::string host = next_channel_host();
  auto r = bind_channel(host);
  // An interface we cannot reach: the address we have, and the next
  // channels pass it over.
  if (!r && !host.empty() && host != conn().peer() && !session::is_security_violation(r.error())) {
    SMBKIT_LOG(info, "{}: interface {} not reached ({}): binding on {}", host_url(), host, r.error().message(),
               opts_.conn.host);
    {
      MutexLock g(state_mu_);
      unreachable_.push_back(host);
    }
    r = bind_channel();
  }
  return r;
}

Result<size_t> Client::add_channels(Tree& tree, size_t extra) {
  extra = std::min(extra, kMaxChannels - 1);
  auto hosts = interface_hosts(tree);
  {
    MutexLock g(state_mu_);
    interfaces_ = hosts ? std::move(*hosts) : std::vector<std::string>{};
    unreachable_.clear();
  }
  size_t bound = 0;
  std::optional<Error> first_error;
  for (size_t i = 0; i < extra; i++) {
    auto r = bind_next_channel();
    if (!r) {
      if (!first_error) first_error = r.error();
      // A refusal will not change on the next try.
      break;
    }
    bound++;
  }
  {
    MutexLock g(keeper_mu_);
    want_channels_ = extra;
    if (!keeper_.joinable()) keeper_ = std::thread([this] { keeper_loop(); });
  }
  if (bound == 0 && first_error) return *first_error;
  return bound;
}

Connection* Client::io_channel_locked() {
  if (channels_.empty()) return conn_.get();
  // The channel with the fewest READ and WRITE bytes outstanding: a slow
  // or stalled one gets less; ties (an idle session) go round-robin, from
  // a start that moves on with every pick.
  const size_t n = channels_.size() + 1;
  const size_t start = next_channel_.fetch_add(1, std::memory_order_relaxed) % n;
  Connection* best = nullptr;
  uint64_t least = ~0ull;
  for (size_t i = 0; i < n; i++) {
    const size_t k = (start + i) % n;
    Connection* c = k == 0 ? conn_.get() : channels_[k - 1].get();
    const uint64_t o = c->io_outstanding();
    if (o < least) {
      least = o;
      best = c;
    }
  }
  return best;
}

bool Client::promote_locked(Connection* dead, const Error& why) {
  if (conn_.get() != dead || session::is_security_violation(why)) return false;
  // is_dead(): no lock of the connection under ours.
  auto it = std::find_if(channels_.begin(), channels_.end(), [](const auto& p) { return !p->is_dead(); });
  if (it == channels_.end()) return false;
  SMBKIT_LOG(info, "{}: first connection lost ({}); a bound channel carries everything now, {} others",
             host_url(), why.message(), channels_.size() - 1);
  // The session lives on with its other channels (MS-SMB2 3.3.7.1): its
  // trees and opens stay; only where requests go changes.
  retired_.push_back(conn_);
  lost_channels_.push_back(dead);
  conn_ = *it;
  channels_.erase(it);
  live_.store(conn_.get(), std::memory_order_release);
  gen_++;
  channel_sequence_++;  // MS-SMB2 3.2.7.1
  channel_stats_.promoted++;
  channel_stats_.lost++;
  return true;
}

bool Client::replace_lost_connection() {
  Connection* first = live_.load(std::memory_order_acquire);
  auto why = first->dead();  // outside our lock
  if (!why) return false;
  {
    MutexLock g(state_mu_);
    if (!promote_locked(first, *why)) return false;
  }
  publish_channel_sequence();
  wake_keeper();
  return true;
}

void Client::wake_keeper() {
  {
    MutexLock g(keeper_mu_);
    rebinds_++;
  }
  keeper_cv_.notify_all();
}

bool Client::channel_lost(Connection* c) {
  auto dead = c->dead();
  if (!dead || session::is_security_violation(*dead)) return false;
  {
    MutexLock g(state_mu_);
    if (c == conn_.get()) {
      // The first connection: a READ or WRITE goes on at once on the
      // channel that takes its place; other requests follow through the
      // Reconnector, which finds gen_ moved on.
      if (!promote_locked(c, *dead)) return false;
      channel_stats_.resent++;
    } else if (auto it = std::find_if(channels_.begin(), channels_.end(), [c](const auto& p) { return p.get() == c; });
               it == channels_.end()) {
      // Taken out already by another of its requests: sent again too,
      // unless a reconnect took it (then the reconnect resends).
      bool was = std::find(lost_channels_.begin(), lost_channels_.end(), c) != lost_channels_.end();
      if (was) channel_stats_.resent++;
      return was;
    } else {
      SMBKIT_LOG(info, "{}: channel lost ({}), its requests go to the {} others", host_url(), dead->message(),
                 channels_.size());
      retired_.push_back(*it);
      lost_channels_.push_back(c);
      channels_.erase(it);
      channel_sequence_++;  // MS-SMB2 3.2.7.1
      channel_stats_.lost++;
      channel_stats_.resent++;
    }
  }
  // Before the caller sends again: the resent request carries the new
  // sequence, so the server can tell it from what the lost channel may
  // still deliver.
  publish_channel_sequence();
  wake_keeper();
  return true;
}

void Client::publish_channel_sequence() {
  std::vector<std::shared_ptr<Connection>> cs;
  uint16_t seq;
  uint64_t id;
  {
    MutexLock g(state_mu_);
    cs.push_back(conn_);
    cs.insert(cs.end(), channels_.begin(), channels_.end());
    seq = channel_sequence_;
    id = session_.session_id;
  }
  for (auto& c : cs) c->set_channel_sequence(id, seq);
}

void Client::later(std::chrono::milliseconds pause, std::function<void()> f) {
  WorkerPool* pool;
  {
    MutexLock g(state_mu_);
    if (!later_) later_ = std::make_unique<WorkerPool>(1, 4096);
    pool = later_.get();
  }
  pool->submit([pause, f = std::move(f)] {
    std::this_thread::sleep_for(pause);
    f();
  });
}

uint16_t Client::channel_sequence() const {
  MutexLock g(state_mu_);
  return channel_sequence_;
}

std::vector<std::shared_ptr<Connection>> Client::take_channels() {
  MutexLock g(state_mu_);
  std::vector<std::shared_ptr<Connection>> out;
  out.swap(channels_);
  for (auto& c : out) retired_.push_back(c);
  return out;
}

void Client::rebind_all() {
  {
    MutexLock g(keeper_mu_);
    rebinds_ = want_channels_;
  }
  keeper_cv_.notify_all();
}

void Client::keeper_loop() {
  size_t tries = 0;
  for (;;) {
    {
      MutexLock g(keeper_mu_);
      keeper_cv_.wait(keeper_mu_, [&] {
        keeper_mu_.assert_held();
        return keeper_stop_ || rebinds_ > 0;
      });
      if (keeper_stop_) return;
      // Wait first: the server may need a moment to notice the old
      // socket is gone, and a channel lost with the whole server must not
      // make us spin.
      if (keeper_cv_.wait_for(keeper_mu_, kRebindBackoff[tries], [&] {
            keeper_mu_.assert_held();
            return keeper_stop_;
          }))
        return;
    }
    // Only while the first connection lives: its loss is the reconnect's.
    // The server's interfaces may have changed since (the lost channel's
    // among them): asked again before each attempt.
    Result<void> r = nt_error(STATUS_CONNECTION_DISCONNECTED, "first connection lost");
    if (!connection_dead()) {
      refresh_interfaces();
      r = bind_next_channel();
    }
    bool done = r.ok();
    if (!r) {
      SMBKIT_LOG(info, "{}: binding a channel again failed: {}", host_url(), r.error().message());
      MutexLock s(state_mu_);
      channel_stats_.rebind_failures++;
      // Given up after the last wait.
      done = ++tries >= std::size(kRebindBackoff);
    }
    if (done) {
      tries = 0;
      MutexLock g(keeper_mu_);
      if (rebinds_ > 0) rebinds_--;
    }
  }
}

void Client::stop_keeper() {
  {
    MutexLock g(keeper_mu_);
    keeper_stop_ = true;
  }
  keeper_cv_.notify_all();
  if (keeper_.joinable()) keeper_.join();
}

size_t Client::channel_count() const {
  MutexLock g(state_mu_);
  return channels_.size() + 1;
}

std::vector<std::string> Client::channel_peers() const {
  MutexLock g(state_mu_);
  std::vector<std::string> out{conn_->peer()};
  for (const auto& c : channels_) out.push_back(c->peer());
  return out;
}

std::vector<ConnectionStats> Client::channel_stats() const {
  std::vector<std::shared_ptr<Connection>> cs;
  {
    MutexLock g(state_mu_);
    cs.push_back(conn_);
    cs.insert(cs.end(), channels_.begin(), channels_.end());
  }
  std::vector<ConnectionStats> out;
  for (auto& c : cs) out.push_back(c->stats());
  return out;
}

Client::ChannelStats Client::multichannel_stats() const {
  MutexLock g(state_mu_);
  return channel_stats_;
}

void Client::drop_channel(size_t index) {
  std::vector<std::shared_ptr<Connection>> cs;
  {
    MutexLock g(state_mu_);
    cs = channels_;
  }
  // One lost but not yet noticed (no request of it failed yet) does not count.
  for (auto& c : cs) {
    if (c->dead()) continue;
    if (--index == 0) return c->shutdown_socket();
  }
}

}  // namespace smbkit::client
