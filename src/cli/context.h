// What every smbkit command shares: global options, and opening a session
// and tree for a URL.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "client/url.h"

namespace smbkit::cli {

struct GlobalOptions {
  std::string credentials_file;
  std::string vers = "default";
  bool sign = false, seal = false;
  int timeout_s = 30;
  int verbose = 0;
  bool quiet = false, stats = false;
  // --connections: TCP connections (each its own session) a large file is
  // striped over or a tree's files are spread over; 0: the command's own
  // default (Context::trees).
  int connections = 0;
  // --multichannel: channels bound to the one session, READs and WRITEs
  // spread over them (docs/design/multichannel.md); max_channels in all.
  bool multichannel = false;
  int max_channels = 2;
  // Reconnect (docs/design/reconnect.md): after a lost connection, retry for
  // reconnect_timeout_s seconds (forever with hard), then fail.
  bool no_reconnect = false;
  bool hard = false;
  int reconnect_timeout_s = 60;
  bool resume = false;  // get/put -c: continue a partial transfer
  bool follow = false;  // put/cp up: follow local symlinks (loops skipped)
  // --guest: a guest or null session is acceptable (Credentials::allow_guest),
  // and no password is prompted for.
  bool guest = false;
  std::optional<SecretString> env_password;  // SMBKIT_PASSWORD, taken at start
  // Never prompt for a password (the shell's completion runs the program:
  // credentials only from --credentials or SMBKIT_PASSWORD).
  bool no_prompt = false;
  // cp, get, put, sync --json: one JSON document with what the command did
  // on stdout at its end (print_transfer_summary).
  bool json_summary = false;
};

// What a transfer command did, for its JSON summary: counted by the
// workers as they go.
struct Totals {
  std::atomic<uint64_t> files{0}, bytes{0}, skipped{0}, unchanged{0}, removed{0};
};

// Dialects for a mount.cifs style vers= value.
Result<std::vector<uint16_t>> dialects_for(const std::string& vers);

class Context {
 public:
  explicit Context(GlobalOptions g) : g_(std::move(g)) {}
  const GlobalOptions& opts() const { return g_; }
  // The session with the URL's server (one per command: the first URL's).
  Result<client::Client*> client(const client::SmbUrl& u);
  // A connected tree for the URL's share (cached per share).
  Result<client::Tree*> tree(const client::SmbUrl& u);
  // tree(u) plus more trees of the same share, each on its own connection
  // and session, for striped transfers and tree copies: --connections in
  // all, or `by_default` without it.
  Result<std::vector<client::Tree*>> trees(const client::SmbUrl& u, int by_default = 1);
  bool progress_enabled() const;
  // One file of many (a tree copy, a sync) failed and the rest go on:
  // prints "smbkit: PATH: WHY" (control characters escaped; PATH is the
  // user's name for it, never a temporary one) and counts it. main then
  // exits with status 3 when the command otherwise succeeded. Callable
  // from several threads.
  void file_failed(const std::string& shown_path, const std::string& why);
  size_t files_failed() const { return files_failed_.load(); }
  Totals& totals() { return totals_; }
  // One step of sync --dry-run's plan: "ACTION PATH" on stdout (control
  // characters escaped), or kept for the JSON summary with --json.
  // Callable from several threads.
  void plan(const char* action, const std::string& path);
  std::vector<std::pair<std::string, std::string>> planned() const;
  // "channels: N, MiB out/in per channel: ..." when --multichannel bound
  // any; empty otherwise.
  std::string channel_summary() const;

 private:
  Result<client::Credentials> credentials(const client::SmbUrl& u);
  GlobalOptions g_;
  std::unique_ptr<client::Client> client_;
  client::ClientOptions client_opts_;
  struct Extra {
    std::unique_ptr<client::Client> client;
    std::unique_ptr<client::Tree> tree;
  };
  std::map<std::string, std::vector<Extra>> extra_;
  std::map<std::string, std::unique_ptr<client::Tree>> trees_;
  std::atomic<size_t> files_failed_{0};
  Totals totals_;
  // One stderr or stdout line at a time from worker threads; guards planned_.
  mutable std::mutex report_mu_;
  std::vector<std::pair<std::string, std::string>> planned_;
};

}  // namespace smbkit::cli
