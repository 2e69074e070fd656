// The server's file layer on hostile requests: the input is a sequence of
// request bodies, each run as one command (CREATE, CLOSE, FLUSH, READ,
// WRITE, LOCK, IOCTL, QUERY_DIRECTORY, QUERY_INFO, SET_INFO,
// CHANGE_NOTIFY) against a fresh temporary share holding a file, a
// directory and symlinks out of it; a request that waits is cancelled.
// FileIds of all ones reach the last CREATE's open (the compound chain),
// so one input can create, then read, lock, rename... Oracle: no crash;
// every error reply has an empty body and every success a body; replies
// stay within the negotiated sizes; nothing outside the share changes.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "proto/constants.h"
#include "proto/header.h"
#include "server/file_service.h"

using namespace smbkit;

namespace {

constexpr uint16_t kCommands[] = {proto::SMB2_CREATE,   proto::SMB2_CLOSE,           proto::SMB2_FLUSH,
                                  proto::SMB2_READ,     proto::SMB2_WRITE,           proto::SMB2_LOCK,
                                  proto::SMB2_IOCTL,    proto::SMB2_QUERY_DIRECTORY, proto::SMB2_QUERY_INFO,
                                  proto::SMB2_SET_INFO, proto::SMB2_CHANGE_NOTIFY};
constexpr size_t kMaxRequests = 16;
constexpr uint32_t kMaxIo = 64 << 10;  // keeps each input's disk and memory use small
constexpr size_t kReplySlack = 256;    // fixed parts beside the payload

int remove_entry(const char* path, const struct stat*, int, FTW*) { return ::remove(path); }

void write_file(const std::string& path, const char* content) {
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) __builtin_trap();
  if (::write(fd, content, strlen(content)) < 0) __builtin_trap();
  ::close(fd);
}

// The world outside the share: a directory with a sentinel file that the
// share's symlinks point at.
struct Outside {
  std::string base;
  std::string sentinel;
  Outside() {
    char tmpl[] = "/tmp/smbkit-files-fuzz-XXXXXX";
    if (!mkdtemp(tmpl)) __builtin_trap();
    base = tmpl;
    ::mkdir((base + "/outside").c_str(), 0755);
    sentinel = base + "/outside/sentinel";
    write_file(sentinel, "sentinel");
  }
  bool intact() const {
    struct stat st {};
    if (::lstat(sentinel.c_str(), &st) != 0 || st.st_size != 8) return false;
    // Nothing new beside the sentinel, nor beside the share.
    return entries(base + "/outside") == 1 && entries(base) == 2;
  }
  static int entries(const std::string& dir) {
    DIR* d = opendir(dir.c_str());
    if (!d) return -1;
    int n = 0;
    while (dirent* e = readdir(d))
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
  }
};

Outside& outside() {
  static Outside o;
  static const bool cleanup = [] {
    return std::atexit([] { nftw(outside().base.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS); }) == 0;
  }();
  (void)cleanup;
  return o;
}

std::string make_share() {
  const std::string root = outside().base + "/share";
  nftw(root.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  ::mkdir(root.c_str(), 0755);
  write_file(root + "/file.txt", "0123456789abcdef");
  ::mkdir((root + "/dir").c_str(), 0755);
  write_file(root + "/dir/inner", "inner");
  (void)::symlink("../outside", (root + "/out").c_str());
  (void)::symlink("/", (root + "/slash").c_str());
  (void)::symlink("file.txt", (root + "/in").c_str());
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  server::ShareConfig cfg;
  cfg.name = "fuzz";
  cfg.path = make_share();
  cfg.read_only = false;
  auto share = server::open_share(cfg);
  if (!share) __builtin_trap();
  server::FileServiceOptions opts;
  opts.max_read = opts.max_write = opts.max_transact = kMaxIo;
  opts.max_open_files = 8;
  server::FileService svc(opts);
  {
    server::ConnOpens opens(svc);
    server::TreeCtx tree;
    tree.tree_id = 1;
    tree.share = *share;
    proto::FileId chain = proto::kRelatedFileId;
    server::CallCtx ctx;
    ctx.session_id = 1;
    ctx.tree = &tree;
    ctx.chain_file_id = &chain;

    // Each request: a command selector byte, a 2-byte body length, the body.
    size_t pos = 0;
    for (size_t n = 0; n < kMaxRequests && pos + 3 <= size; n++) {
      const uint16_t command = kCommands[data[pos] % std::size(kCommands)];
      tree.read_only = data[pos] & 0x80;
      size_t len = data[pos + 1] | (size_t{data[pos + 2]} << 8);
      pos += 3;
      len = std::min(len, size - pos);
      Bytes msg;
      ByteWriter w(msg);
      proto::Header h;
      h.Command = command;
      h.SessionId = 1;
      h.TreeId = 1;
      proto::encode_header(h, w);
      w.bytes(ByteView(reinterpret_cast<const std::byte*>(data + pos), len));
      pos += len;
      server::FileReply r = svc.execute(opens, ctx, command, msg);
      if (r.pending) {  // a request that waits: cancelled, it must finish once
        int finished = 0;
        r.pending->cancel();
        r.pending->start([&finished](server::FileReply) { finished++; });
        if (finished != 1) __builtin_trap();
        continue;
      }
      const bool error = nt_error_severity(r.status);
      if (error && (!r.body.empty() || !r.data.empty())) __builtin_trap();
      // Warnings (STATUS_NO_MORE_FILES) may go either way: empty is an ERROR
      // response, a body (STATUS_BUFFER_OVERFLOW) is sent with it.
      if (r.status == STATUS_SUCCESS && r.body.empty()) __builtin_trap();
      if (r.body.size() + r.data.size() > kMaxIo + kReplySlack) __builtin_trap();
    }
    if (opens.size() > opts.max_open_files) __builtin_trap();
  }
  if (!outside().intact()) __builtin_trap();
  return 0;
}
