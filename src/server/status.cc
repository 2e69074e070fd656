// FileService::open_files: what smbkitd has open, for `smbkitd status`
// (the counterpart of smbstatus -L). Read from the file table under
// nodes_mu, so it is one consistent snapshot.
#include "server/status.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "proto/create.h"
#include "proto/create_contexts.h"
#include "server/file_internal.h"
#include "server/oplock.h"

namespace smbkit::server {

std::vector<FileService::OpenStatus> FileService::open_files() {
  std::vector<OpenStatus> out;
  {
    MutexLock l(impl_->nodes_mu);
    for (const auto& [key, node] : impl_->nodes) {
      for (const Open* o : node->opens) {
        OpenStatus s;
        s.share = o->share ? o->share->cfg.name : std::string();
        s.path = node->path;
        s.session_id = o->session_id;
        s.granted = o->granted;
        s.share_access = o->share_access;
        s.lease = o->lease != nullptr;
        s.caching = o->lease ? o->lease->caching.state : o->oplock.state;
        s.durable = o->durable;
        s.disconnected = o->disconnected;
        out.push_back(std::move(s));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const OpenStatus& a, const OpenStatus& b) {
    return std::tie(a.share, a.path, a.session_id) < std::tie(b.share, b.path, b.session_id);
  });
  return out;
}

namespace {

// Lease bits as the letters smbstatus uses (R, H, W); "" for none.
std::string caching_letters(uint32_t state) {
  std::string s;
  if (state & proto::SMB2_LEASE_READ_CACHING) s += 'R';
  if (state & proto::SMB2_LEASE_HANDLE_CACHING) s += 'H';
  if (state & proto::SMB2_LEASE_WRITE_CACHING) s += 'W';
  return s;
}

// FILE_SHARE_* as the letters of what others may do: read, write, delete.
std::string share_letters(uint32_t share) {
  std::string s;
  s += (share & proto::FILE_SHARE_READ) ? 'R' : '-';
  s += (share & proto::FILE_SHARE_WRITE) ? 'W' : '-';
  s += (share & proto::FILE_SHARE_DELETE) ? 'D' : '-';
  return s;
}

}  // namespace

std::string format_status(const std::vector<FileService::OpenStatus>& opens, uint32_t connections) {
  std::string out = fmt::format("connections: {}\nopen files: {}\n", connections, opens.size());
  if (opens.empty()) return out;
  out += fmt::format("\n{:<18} {:<10} {:<6} {:<10} {:<14} {}\n", "Session", "Access", "Share", "Caching", "Durable",
                     "Share:Name");
  for (const auto& o : opens) {
    const std::string letters = caching_letters(o.caching);
    const std::string caching =
        letters.empty() ? std::string(1, '-') : fmt::format("{} {}", letters, o.lease ? "lease" : "oplock");
    const char* durable = o.disconnected ? "disconnected" : (o.durable ? "yes" : "-");
    out += fmt::format("{:<#18x} {:<#10x} {:<6} {:<10} {:<14} {}:{}\n", o.session_id, o.granted,
                       share_letters(o.share_access), caching, durable, o.share, o.path.empty() ? "." : o.path);
  }
  return out;
}

}  // namespace smbkit::server
