#include "cli/context.h"

#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "client/credentials.h"
#include "client/names.h"
#include "client/user_input.h"
#include "proto/constants.h"

namespace smbkit::cli {

using namespace proto;

Result<std::vector<uint16_t>> dialects_for(const std::string& v) {
  auto d = client::dialects_for_vers(v);
  if (!d) return nt_error(STATUS_INVALID_PARAMETER, "--vers " + d.error().context);
  return d;
}

Result<client::Credentials> Context::credentials(const client::SmbUrl& u) {
  client::Credentials c;
  c.allow_guest = g_.guest;
  c.user = u.user;
  c.domain = u.domain;
  bool have_password = false;
  if (!g_.credentials_file.empty()) {
    SMBKIT_TRY(auto f, client::read_credentials_file(g_.credentials_file));
    if (c.user.empty()) c.user = f.username;
    if (c.domain.empty()) c.domain = f.domain;
    c.password = f.password;
    have_password = true;
  }
  if (!have_password && g_.env_password) {
    c.password = *g_.env_password;
    have_password = true;
  }
  if (!have_password && !c.user.empty() && !g_.guest) {
    if (g_.no_prompt || !isatty(0))
      return nt_error(STATUS_LOGON_FAILURE, u.str() + ": no password (use --credentials FILE or SMBKIT_PASSWORD)");
    c.password = client::prompt_password(c.user + "@" + u.host);
  }
  return c;
}

Result<client::Client*> Context::client(const client::SmbUrl& u) {
  if (!client_) {
    client::ClientOptions o;
    o.conn.host = u.host;
    o.conn.port = u.port;
    SMBKIT_TRY(o.conn.dialects, dialects_for(g_.vers));
    o.conn.require_signing = g_.sign;
    o.conn.require_encryption = g_.seal;
    o.conn.multichannel = g_.multichannel;
    o.conn.timeout = std::chrono::seconds(g_.timeout_s);
    o.reconnect.enabled = !g_.no_reconnect;
    o.reconnect.hard = g_.hard;
    o.reconnect.soft_timeout = std::chrono::seconds(g_.reconnect_timeout_s);
    SMBKIT_TRY(o.creds, credentials(u));
    auto c = client::Client::connect(o);
    if (!c) {
      Error e = c.take_error();
      if (e.context.find("smb://") == std::string::npos) e.context = u.str() + ": " + e.context;
      return e;
    }
    client_ = std::move(*c);
    client_opts_ = o;
  }
  return client_.get();
}

Result<client::Tree*> Context::tree(const client::SmbUrl& u) {
  if (u.share.empty()) return nt_error(STATUS_OBJECT_PATH_SYNTAX_BAD, u.str() + ": no share in the URL");
  SMBKIT_CHECK(client(u));
  auto it = trees_.find(u.share);
  if (it != trees_.end()) return it->second.get();
  SMBKIT_TRY(auto t, client_->tree_connect(u.share));
  auto* p = t.get();
  trees_[u.share] = std::move(t);
  if (g_.multichannel && g_.max_channels > 1 && client_->channel_count() == 1) {
    // One channel is still a working session (as cifs.ko): say why, go on.
    auto n = client_->add_channels(*p, static_cast<size_t>(g_.max_channels - 1));
    if (!n)
      std::fprintf(stderr, "smbkit: %s: multichannel: %s; going on with one channel\n", u.str().c_str(),
                   n.error().message().c_str());
  }
  return p;
}

std::string Context::channel_summary() const {
  if (!client_ || client_->channel_count() < 2) return {};
  std::string s = fmt::format("channels: {}, MiB out/in per channel:", client_->channel_count());
  for (const auto& c : client_->channel_stats())
    s += fmt::format(" {:.0f}/{:.0f}", static_cast<double>(c.bytes_out) / (1 << 20),
                     static_cast<double>(c.bytes_in) / (1 << 20));
  auto m = client_->multichannel_stats();
  if (m.lost) s += fmt::format(", lost {}, resent {}", m.lost, m.resent);
  return s;
}

Result<std::vector<client::Tree*>> Context::trees(const client::SmbUrl& u, int by_default) {
  SMBKIT_TRY(client::Tree * first, tree(u));
  std::vector<client::Tree*> out{first};
  auto& extra = extra_[u.share];
  const int want = g_.connections > 0 ? g_.connections : by_default;
  while (static_cast<int>(extra.size()) + 1 < want) {
    SMBKIT_TRY(auto c, client::Client::connect(client_opts_));
    SMBKIT_TRY(auto t, c->tree_connect(u.share));
    extra.push_back(Extra{std::move(c), std::move(t)});
  }
  for (size_t i = 0; i < extra.size() && static_cast<int>(out.size()) < want; i++) out.push_back(extra[i].tree.get());
  return out;
}

void Context::file_failed(const std::string& shown_path, const std::string& why) {
  files_failed_++;
  std::lock_guard g(report_mu_);
  std::fprintf(stderr, "smbkit: %s: %s\n", client::escape_controls(shown_path).c_str(),
               client::escape_controls(why).c_str());
}

void Context::plan(const char* action, const std::string& path) {
  std::lock_guard g(report_mu_);
  if (g_.json_summary) planned_.emplace_back(action, path);
  else std::printf("%s %s\n", action, client::escape_controls(path).c_str());
}

std::vector<std::pair<std::string, std::string>> Context::planned() const {
  std::lock_guard g(report_mu_);
  return planned_;
}

bool Context::progress_enabled() const { return !g_.quiet && isatty(2); }

}  // namespace smbkit::cli
