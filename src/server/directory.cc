// SMB2 QUERY_DIRECTORY (MS-SMB2 3.3.5.18, MS-FSA 2.1.5.6.3): a per-open
// cursor over a sorted snapshot of the directory's names taken at the first
// query (or SMB2_RESTART_SCANS / SMB2_REOPEN), filtered by the pattern of
// that query; entries encoded with the codec's directory classes until
// OutputBufferLength is full. "." and ".." come first, as Windows and Samba
// list them (also at the share root). A symlink is listed as what it leads
// to when that is beneath the share root, and left out otherwise.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/utf16.h"
#include "proto/create.h"
#include "proto/fscc_dir_info.h"
#include "proto/query_directory.h"
#include "server/file_internal.h"
#include "server/path.h"
#include "proto/wildcard.h"

namespace smbkit::server {

using namespace proto;

namespace {

constexpr size_t kEntryAlign = 8;  // MS-FSCC 2.4: entries start 8-byte aligned

// The names of the directory open as `fd`, filtered and sorted.
Result<std::vector<std::string>> snapshot(int fd, const std::string& pattern) {
  int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return nt_error(errno_status(errno));
  DIR* d = fdopendir(dfd);
  if (!d) {
    ::close(dfd);
    return nt_error(STATUS_NO_MEMORY);
  }
  std::vector<std::string> names;
  bool dot = false, dotdot = false;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n == ".") {
      dot = is_in_expression(n, pattern);
      continue;
    }
    if (n == "..") {
      dotdot = is_in_expression(n, pattern);
      continue;
    }
    if (is_in_expression(n, pattern)) names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  std::vector<std::string> out;
  out.reserve(names.size() + 2);
  if (dot) out.emplace_back(".");
  if (dotdot) out.emplace_back("..");
  for (auto& n : names) out.push_back(std::move(n));
  return out;
}

// The entry for `name` in the directory `o` (path `dir_path`), or false
// when it is gone or leads out of the share.
bool describe(const Open& o, const std::string& dir_path, const std::string& name, DirEntry& e) {
  struct stat st {};
  if (name == "." || name == "..") {
    // ".." of the share root is shown as the root itself: nothing above it
    // is the client's business.
    if (name == ".." && !dir_path.empty()) {
      int pfd = open_beneath(o.share->root_fd, split_parent(dir_path).first, O_PATH);
      if (pfd < 0) return false;
      const bool ok = fstat(pfd, &st) == 0;
      ::close(pfd);
      if (!ok) return false;
    } else if (fstat(o.fd, &st) != 0) {
      return false;
    }
  } else {
    if (fstatat(o.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
    if (S_ISLNK(st.st_mode)) {
      const std::string full = dir_path.empty() ? name : dir_path + "/" + name;
      int fd = open_beneath(o.share->root_fd, full, O_PATH);
      if (fd < 0) return false;
      const bool ok = fstat(fd, &st) == 0;
      ::close(fd);
      if (!ok) return false;
    }
  }
  fill_times_sizes_attributes(st, e);
  e.FileId = file_index(st);
  e.FileName = name;
  return true;
}

}  // namespace

FileReply handle_query_directory(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_query_directory_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  ChannelSequenceHold seq_hold = count_request(f, ctx);  // MS-SMB2 3.3.5.2.10
  if (!f.is_dir || f.pipe) return error_reply(STATUS_INVALID_PARAMETER);
  if (!(f.granted & FILE_LIST_DIRECTORY)) return error_reply(STATUS_ACCESS_DENIED);
  const uint8_t cls = req->FileInformationClass;
  if (!directory_info_class_supported(cls)) return error_reply(STATUS_INVALID_INFO_CLASS);
  const size_t fixed = directory_entry_fixed_size(cls);
  if (req->OutputBufferLength > svc.options().max_transact) return error_reply(STATUS_INVALID_PARAMETER);
  if (req->OutputBufferLength < fixed) return error_reply(STATUS_INFO_LENGTH_MISMATCH);
  std::string pattern = req->FileName.empty() ? std::string("*") : req->FileName;
  if (pattern.size() > kMaxPatternLength || pattern.find_first_of("\\/") != std::string::npos ||
      pattern.find('\0') != std::string::npos)
    return error_reply(STATUS_OBJECT_NAME_INVALID);

  const std::string dir_path = open_path(svc, f);
  MutexLock l(f.mu);
  DirCursor& c = f.cursor;
  const bool restart = !c.started || (req->Flags & (SMB2_RESTART_SCANS | SMB2_REOPEN));
  if (restart) {
    auto names = snapshot(f.fd, pattern);
    if (!names) return error_reply(names.error().status);
    c.started = true;
    c.pattern = pattern;
    c.names = std::move(*names);
    c.next = 0;
  }
  std::vector<DirEntry> entries;
  size_t used = 0;  // bytes of the entries so far, each padded to 8
  while (c.next < c.names.size()) {
    DirEntry e;
    if (!describe(f, dir_path, c.names[c.next], e)) {
      c.next++;
      continue;
    }
    auto utf16 = utf8_to_utf16le(e.FileName);
    if (!utf16) {  // a name that is not UTF-8 on disk cannot be listed
      c.next++;
      continue;
    }
    const size_t size = fixed + utf16->size();
    if (used + size > req->OutputBufferLength) break;
    used += (size + kEntryAlign - 1) / kEntryAlign * kEntryAlign;
    entries.push_back(std::move(e));
    c.next++;
    if (req->Flags & SMB2_RETURN_SINGLE_ENTRY) break;
  }
  if (entries.empty()) {
    if (c.next < c.names.size()) return error_reply(STATUS_INFO_LENGTH_MISMATCH);  // first too big
    return error_reply(restart ? STATUS_NO_SUCH_FILE : STATUS_NO_MORE_FILES);
  }
  auto buf = encode_directory_entries(cls, entries);
  if (!buf) return error_reply(STATUS_INSUFFICIENT_RESOURCES);
  QueryDirectoryResponse resp;
  resp.OutputBuffer = std::move(*buf);
  return body_reply(STATUS_SUCCESS, resp, encode_query_directory_response);
}

}  // namespace smbkit::server
