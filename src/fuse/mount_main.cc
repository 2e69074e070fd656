#include "fuse/mount_main.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/mutex.h"
#include "client/client.h"
#include "client/url.h"
#include "client/user_input.h"
#include "fuse/direct_io_mmap.h"
#include "fuse/filesystem.h"
#include "fuse/options.h"
#include "fuse/readahead.h"
#include "transport/pipe.h"

namespace smbkit::fuse {

namespace {

const char kUsage[] =
    "usage: smbkit mount //host[:port]/share[/path] MOUNTPOINT [-o OPTIONS] [-f] [-v]\n"
    "       smbkit umount [-z] MOUNTPOINT\n"
    "\n"
    "Options (mount.cifs names): username=, password=, domain=, credentials=FILE, port=,\n"
    "vers=2.0|2.1|3|3.0|3.02|3.1.1, sec=ntlmssp|ntlmsspi|none, sign, seal, rsize=, wsize=, rasize=,\n"
    "cache=strict|none|loose, actimeo=, acregmax=, acdirmax=, uid=, gid=, file_mode=,\n"
    "dir_mode=, ro, rw, noperm, directio, max_credits=, timeout=, hard, soft, echo_interval=, closetimeo=,\n"
    "multichannel, max_channels=,\n"
    "guest (no password; a guest or null session is accepted).\n"
    "smbkit's own: rabudget=, wbbudget= (bytes all open files' readahead, and their\n"
    "write-behind in flight, share; default 256 MiB each), splice/nosplice (readahead\n"
    "data socket -> pipe -> /dev/fuse; by default where fs.pipe-max-size >= 2 MiB or\n"
    "CAP_SYS_RESOURCE allow it; splice warns when they do not).\n"
    "The password may also come from "
    "SMBKIT_PASSWORD. -f stays in the foreground; -v/-vv log (with -f).\n";

void fail_line(const std::string& msg) { std::fprintf(stderr, "smbkit: %s\n", msg.c_str()); }

std::string target_url(const MountOptions& o) {
  client::SmbUrl u;
  u.host = o.host;
  u.port = o.port;
  u.user = o.username;
  u.domain = o.domain;
  u.share = o.share;
  u.path = o.prefix;
  return u.str();
}

// The FUSE mount options string (commas in values escaped).
std::string fuse_mount_opts(const MountOptions& o, uint32_t max_io) {
  std::string fsname = "//" + o.host + "/" + o.share + (o.prefix.empty() ? "" : "/" + o.prefix);
  std::string esc;
  for (char c : fsname) {
    if (c == ',' || c == '\\') esc += '\\';
    esc += c;
  }
  std::string s = "fsname=" + esc + ",subtype=smbkit,max_read=" + std::to_string(max_io);
  if (!o.noperm) s += ",default_permissions";
  if (geteuid() == 0) s += ",allow_other";
  if (o.ro) s += ",ro";
  return s;
}

// Where the mounting process reports: the parent of a daemon waits on a
// pipe for "0" (mounted) or "1<message>".
struct Reporter {
  int fd = -1;
  void ok() {
    if (fd < 0) return;
    (void)!write(fd, "0", 1);
    close(fd);
    fd = -1;
  }
  int failed(const std::string& msg) {
    if (fd < 0) {
      fail_line(msg);
      return 1;
    }
    std::string m = "1" + msg;
    (void)!write(fd, m.data(), m.size());
    close(fd);
    fd = -1;
    return 1;
  }
};

std::string with_target(const Error& e, const std::string& target) {
  std::string msg = e.message();
  if (msg.find("smb://") == std::string::npos) msg = target + ": " + msg;
  return msg;
}

// Connect, mount and serve until unmounted. `rep` learns whether the mount
// came up; after that, in the background, stdio goes to /dev/null.
int serve(const MountOptions& o, Reporter rep, bool daemon) {
  std::string target = target_url(o);
  client::ClientOptions co;
  co.conn.host = o.host;
  co.conn.port = o.port;
  co.conn.dialects = o.dialects;
  co.conn.require_signing = o.sign;
  co.conn.require_encryption = o.seal;
  co.conn.timeout = std::chrono::seconds(o.timeout_s);
  co.conn.multichannel = o.multichannel;
  if (o.max_credits) co.conn.credit_target = o.max_credits;
  co.reconnect.hard = o.hard;
  co.reconnect.echo_interval = std::chrono::seconds(o.echo_interval);
  co.reconnect.soft_timeout = std::chrono::seconds(o.echo_interval);
  co.creds.user = o.username;
  co.creds.password = o.password;
  co.creds.domain = o.domain;
  co.creds.allow_guest = o.allow_guest;
  auto c = client::Client::connect(co);
  if (!c) return rep.failed(with_target(c.error(), target));
  std::unique_ptr<client::Client> cl = std::move(*c);
  auto t = cl->tree_connect(o.share);
  if (!t) return rep.failed(with_target(t.error(), target));
  std::unique_ptr<client::Tree> tree = std::move(*t);
  if (o.multichannel && o.max_channels > 1) {
    // One channel is still a working mount (as cifs.ko): say why, go on.
    auto n = cl->add_channels(*tree, o.max_channels - 1);
    if (!n) std::fprintf(stderr, "%s: multichannel: %s; mounting with one channel\n", target.c_str(), n.error().message().c_str());
  }
  if (!o.prefix.empty()) {
    auto s = tree->stat(o.prefix);
    if (!s) return rep.failed(with_target(s.error(), target));
    if (!s->is_dir) return rep.failed(target + ": not a directory");
  }

  FsConfig cfg = FsConfig::from(o);
  if (cfg.splice) {
    // libfuse splices a reply only through a pipe with room for all of it
    // and three pages more: above 1 MiB for our 1 MiB reads, which the
    // kernel allows only with CAP_SYS_RESOURCE or a raised
    // fs.pipe-max-size. Otherwise it would fall back to reading the pipe
    // into fresh memory for every reply, worse than not splicing.
    size_t need = cfg.fuse_max_io + 3 * 4096 + 16;
    if (auto p = transport::Pipe::create(need); !p) {
      if (o.splice_asked)
        SMBKIT_LOG(warn, "splice off: a {} byte pipe is refused ({}); raise fs.pipe-max-size to 2097152 or run with CAP_SYS_RESOURCE",
                   need, p.error().message());
      else
        SMBKIT_LOG(info, "splice off: a {} byte pipe is refused ({}); raise fs.pipe-max-size to 2097152 or run with CAP_SYS_RESOURCE",
                   need, p.error().message());
      cfg.splice = false;
    } else {
      SMBKIT_LOG(info, "splice on: readahead payloads go socket -> pipe -> /dev/fuse");
    }
  }
  SmbFs fs(*tree, cfg);
  std::string opts = fuse_mount_opts(o, cfg.fuse_max_io);
  std::vector<std::string> argv_s = {"smbkit", "-o", opts};
  std::vector<char*> argv_p;
  for (auto& s : argv_s) argv_p.push_back(s.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv_p.size()), argv_p.data());
  // libfuse may copy the argument vector while parsing it; free it on every
  // way out, or the sanitized build's leak check fails the exit.
  struct ArgsGuard {
    fuse_args* a;
    ~ArgsGuard() { fuse_opt_free_args(a); }
  } args_guard{&args};
  fuse_session* se = fuse_session_new(&args, &SmbFs::ops(), sizeof(fuse_lowlevel_ops), &fs);
  if (!se) return rep.failed(o.mountpoint + ": cannot create the FUSE session (options: " + opts + ")");
  fs.set_session(se);  // lease breaks invalidate the kernel cache through it
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_session_destroy(se);
    return rep.failed("cannot install signal handlers");
  }
  if (fuse_session_mount(se, o.mountpoint.c_str()) != 0) {
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return rep.failed(o.mountpoint + ": cannot mount (is /dev/fuse available and fuse3 installed?)");
  }
  // Before the first request (INIT) is read: shared mmap of direct_io files.
  (void)negotiate_direct_io_mmap(se);
  // Sequential reads reach us in requests of the kernel's readahead size;
  // raise it from 128 KiB to a full request (not for direct I/O). The
  // kernel then caps it at max_readahead when the INIT reply arrives.
  if (!o.data_direct() && o.rasize) {
    auto ra = set_kernel_readahead(o.mountpoint, cfg.fuse_max_io / 1024);
    if (!ra) SMBKIT_LOG(info, "kernel readahead left at its default: {}", ra.error().message());
  }
  SMBKIT_LOG(info, "mounted {} on {} ({})", target, o.mountpoint, describe(o));
  for (auto& name : o.ignored) SMBKIT_LOG(info, "option {} accepted but not acted on", name);
  rep.ok();
  if (daemon) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    (void)!chdir("/");
  }

  fuse_loop_config* lc = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(lc, 64);
  fuse_loop_cfg_set_idle_threads(lc, 16);
  fuse_loop_cfg_set_clone_fd(lc, 0);
  // When the session ends (unmounted, or a signal), operations still
  // waiting for the server to come back (a `hard` mount whose server is
  // gone) must give up: the loop joins its workers before it returns.
  Mutex watch_mu;  // a leaf: loop_done
  CondVar watch_cv;
  bool loop_done = false;
  std::thread watcher([&] {
    MutexLock lk(watch_mu);
    while (!watch_cv.wait_for(watch_mu, std::chrono::milliseconds(200), [&] { return loop_done; })) {
      if (fuse_session_exited(se)) {
        SMBKIT_LOG(debug, "session ended: no more reconnects");
        cl->stop_reconnecting();
        return;
      }
    }
  });
  int rc = fuse_session_loop_mt(se, lc);
  {
    MutexLock g(watch_mu);
    loop_done = true;
  }
  watch_cv.notify_all();
  watcher.join();
  // (Also when the loop ended before the watcher looked.)
  cl->stop_reconnecting();
  fuse_loop_cfg_destroy(lc);
  fs.wait_async_replies();  // reads answered by their completions
  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fs.set_session(nullptr);
  fuse_session_destroy(se);
  fs.stop_leases();  // before the tree it holds goes
  fs.close_unreleased();  // write-behind flushed, readahead stopped, handles freed
  tree.reset();
  (void)cl->logoff();
  SMBKIT_LOG(info, "unmounted {}", o.mountpoint);
  return rc == 0 ? 0 : 1;
}

std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (int k = 1; k <= 3; k++) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        else v = v * 8 + (c - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

void mask_password_args(int argc, char** argv) {
  for (int i = 2; i < argc; i++) {
    if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc) mask_passwords(argv[++i]);
    else if (std::strncmp(argv[i], "-o", 2) == 0) mask_passwords(argv[i] + 2);
  }
}

int run_program(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

bool is_smbkit_mount(const std::string& path) {
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superopts
    std::istringstream in(line);
    std::string id, parent, dev, root, mp;
    in >> id >> parent >> dev >> root >> mp;
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream rest(line.substr(dash + 3));
    std::string fstype;
    rest >> fstype;
    if (unescape_mountinfo(mp) == path && fstype == "fuse.smbkit") return true;
  }
  return false;
}

int run_mount(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 2; i < argc; i++) args.emplace_back(argv[i]);
  // /proc/PID/cmdline is readable by every local user: mask the password
  // in our own argv now, before anything can fail or fork, so neither this
  // process nor the daemon forked from it shows it.
  mask_password_args(argc, argv);
  struct WipeArgs {
    std::vector<std::string>& v;
    ~WipeArgs() {
      for (auto& a : v) wipe_string(a);
    }
  } wipe_args{args};
  for (auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  auto po = parse_mount_args(args);
  if (!po) {
    fail_line(po.error().message());
    return 1;
  }
  MountOptions o = std::move(*po);
  if (o.verbose >= 2) log::set_level(log::Level::trace);
  else if (o.verbose == 1) log::set_level(log::Level::debug);
  if (!o.uid_set) o.uid = getuid();
  if (!o.gid_set) o.gid = getgid();
  auto env_password = client::take_env_password();  // out of the daemon's environment
  auto cr = resolve_credentials(o, env_password ? env_password->c_str() : nullptr);
  if (!cr) {
    fail_line(cr.error().message());
    return 1;
  }
  if (!o.password_set && !o.username.empty() && !o.anonymous) {
    if (!isatty(0)) {
      fail_line(target_url(o) + ": no password (use password=, credentials= or SMBKIT_PASSWORD)");
      return 1;
    }
    o.password = client::prompt_password(o.username + "@" + o.host);
    o.password_set = true;
  }
  char real[PATH_MAX];
  if (!realpath(o.mountpoint.c_str(), real)) {
    fail_line(o.mountpoint + ": " + std::strerror(errno));
    return 1;
  }
  o.mountpoint = real;
  struct stat st{};
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fail_line(o.mountpoint + ": not a directory");
    return 1;
  }
  if (is_smbkit_mount(o.mountpoint)) {
    fail_line(o.mountpoint + ": already an smbkit mount");
    return 1;
  }

  if (o.foreground) return serve(o, Reporter{}, false);

  // Background: fork before any thread exists (the connection's receiver
  // thread would not survive a fork), connect and mount in the child, and
  // let the parent exit with the child's verdict.
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    fail_line(std::string("pipe: ") + std::strerror(errno));
    return 1;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    fail_line(std::string("fork: ") + std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    close(p[0]);
    setsid();
    int rc = serve(o, Reporter{p[1]}, true);
    _exit(rc);
  }
  close(p[1]);
  std::string got;
  char buf[1024];
  for (;;) {
    ssize_t n = read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  if (got == "0") return 0;
  int st2 = 0;
  waitpid(pid, &st2, 0);
  if (got.size() > 1 && got[0] == '1') fail_line(got.substr(1));
  else fail_line(o.mountpoint + ": the mount process exited before mounting");
  return 1;
}

int run_umount(int argc, char** argv) {
  bool lazy = false;
  std::vector<std::string> pos;
  for (int i = 2; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-z" || a == "-l" || a == "--lazy") lazy = true;
    else if (!a.empty() && a[0] == '-') {
      fail_line("umount: unknown flag '" + a + "'");
      return 1;
    } else pos.push_back(a);
  }
  if (pos.size() != 1) {
    fail_line("usage: smbkit umount [-z] MOUNTPOINT");
    return 1;
  }
  char real[PATH_MAX];
  if (!realpath(pos[0].c_str(), real)) {
    fail_line(pos[0] + ": " + std::strerror(errno));
    return 1;
  }
  std::string mp = real;
  if (!is_smbkit_mount(mp)) {
    fail_line(mp + ": not an smbkit mount");
    return 1;
  }
  // syncfs writes back the kernel's dirty pages (cache=loose) to the
  // daemon; write-behind data goes to the server at each close(2) and at
  // release (unmounting releases every open file).
  int fd = open(mp.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)syncfs(fd);
    close(fd);
  }
  std::vector<std::string> cmd = {"fusermount3", "-u"};
  if (lazy) cmd.push_back("-z");
  cmd.push_back(mp);
  int rc = run_program(cmd);
  if (rc != 0 && geteuid() == 0) {
    if (umount2(mp.c_str(), lazy ? MNT_DETACH : 0) == 0) rc = 0;
    else {
      fail_line(mp + ": " + std::strerror(errno));
      return 1;
    }
  }
  if (rc != 0) {
    fail_line(mp + ": fusermount3 -u failed");
    return 1;
  }
  return 0;
}

}  // namespace smbkit::fuse
