#include "cli/remote_copy.h"

#include <memory>

#include "cli/file_transfer.h"
#include "cli/progress.h"
#include "client/names.h"
#include "client/server_copy.h"
#include "proto/create.h"

namespace smbkit::cli {

using namespace proto;
using client::SmbUrl;
using client::Tree;

namespace {

std::string base_name(const std::string& p) {
  auto pos = p.find_last_of('/');
  return pos == std::string::npos ? p : p.substr(pos + 1);
}

// The same server and identity: one Context (one session) serves both.
bool same_server(const SmbUrl& a, const SmbUrl& b) {
  return a.host == b.host && a.port == b.port && a.user == b.user && a.domain == b.domain;
}

// The source's bytes into the destination: by the server when both are
// on one tree and it can, else through this client.
Result<uint64_t> copy_data(Tree& from, const proto::FileId& src, Tree& to, const proto::FileId& dst, uint64_t size,
                           Progress& prog, bool& by_server) {
  uint64_t done = 0;
  by_server = false;
  if (&from == &to) {
    client::CopychunkLimits limits;
    while (done < size) {
      auto n = client::server_copy(from, src, done, dst, done, size - done, limits);
      if (!n && done == 0 && client::server_copy_unsupported(n.error())) break;  // copied below instead
      if (!n) return n.take_error();
      if (*n == 0) return nt_error(STATUS_END_OF_FILE, "server copy: the server copied nothing");
      done += *n;
      prog.update(done);
    }
    by_server = done == size;
    if (by_server) return done;
  }
  SMBKIT_TRY(auto n, client::copy_by_reading(from, src, done, to, dst, done, size - done));
  done += n;
  prog.update(done);
  return done;
}

}  // namespace

Result<void> copy_remote_to_remote(Context& c, const std::string& src, const std::string& dst) {
  SMBKIT_TRY(auto su, client::parse_smb_url(src));
  SMBKIT_TRY(auto du, client::parse_smb_url(dst));
  // Another server (or another identity on it) has its own session.
  std::unique_ptr<Context> other;
  Context* dc = &c;
  if (!same_server(su, du)) {
    other = std::make_unique<Context>(c.opts());
    dc = other.get();
  }
  SMBKIT_TRY(Tree * from, c.tree(su));
  SMBKIT_TRY(Tree * to, dc->tree(du));

  client::OpenParams rp;
  rp.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  SMBKIT_TRY(auto f, from->open(su.path, rp));
  if (f.is_dir()) {
    (void)from->close(f.id);
    return sys_error(EISDIR, src + " (cp between two smb:// URLs copies files only)");
  }
  std::string rpath = du.path;
  auto dst_stat = to->stat(rpath);
  if (rpath.empty() || (dst_stat && dst_stat->is_dir)) {
    rpath = rpath.empty() ? base_name(su.path) : rpath + "/" + base_name(su.path);
    dst_stat = to->stat(rpath);
  }
  // Truncating the source to copy it onto itself would lose it.
  if (dst_stat && from == to) {
    auto ss = from->stat_handle(f.id);
    if (ss && ss->file_id != 0 && ss->file_id == dst_stat->file_id) {
      (void)from->close(f.id);
      return sys_error(EINVAL, src + " and " + dst + " are the same file");
    }
  }
  client::OpenParams wp;
  wp.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE;
  wp.disposition = FILE_OVERWRITE_IF;
  auto g = to->open(rpath, wp);
  if (!g) {
    (void)from->close(f.id);
    return g.take_error();
  }
  Progress prog(client::escape_for_display(base_name(su.path)), f.size, c.progress_enabled());
  bool by_server = false;
  auto copied = copy_data(*from, f.id, *to, g->id, f.size, prog, by_server);
  prog.finish();
  (void)from->close(f.id);
  auto closed = to->close(g->id);
  if (!copied) return copied.take_error();
  if (!closed) return closed.take_error();
  if (*copied != f.size) return nt_error(STATUS_END_OF_FILE, from->url_of(su.path) + ": file shrank during the copy");
  print_stats(c, by_server ? "cp (server-side)" : "cp", rpath, Stats{*copied, prog.seconds()});
  return {};
}

}  // namespace smbkit::cli
