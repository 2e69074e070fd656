#include "server/identity.h"

#include <grp.h>
#include <pwd.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace smbkit::server {

namespace {

// Groups one account may be in: more are cut (the kernel's NGROUPS_MAX is
// 65536; a lookup is bounded here).
constexpr int kMaxGroups = 1024;
constexpr size_t kPwBufSize = 16384;

// The process's own identity, read once: what become(nullptr) returns to.
struct Own {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  std::vector<gid_t> groups = [] {
    int n = getgroups(0, nullptr);
    std::vector<gid_t> g(n > 0 ? static_cast<size_t>(n) : 0);
    if (n > 0 && getgroups(n, g.data()) != n) g.clear();
    return g;
  }();
};

const Own& own() {
  static const Own o;
  return o;
}

// The thread's identity now; null: the process's own.
thread_local const Identity* t_current = nullptr;
thread_local bool t_switched = false;

bool set_thread_identity(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  // Groups first, while fsuid may still be 0; every call per thread only.
  if (syscall(SYS_setgroups, groups.size(), groups.data()) != 0) return false;
  setfsgid(gid);
  if (static_cast<gid_t>(setfsgid(gid)) != gid) return false;
  setfsuid(uid);
  return static_cast<uid_t>(setfsuid(uid)) == uid;
}

Result<std::shared_ptr<const Identity>> lookup(const std::string& name) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(kPwBufSize);
  int e = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (e != 0) return sys_error(e, "getpwnam " + name);
  if (!found) return sys_error(ENOENT, "no Unix account '" + name + "'");
  auto id = std::make_shared<Identity>();
  id->name = pw.pw_name;
  id->uid = pw.pw_uid;
  id->gid = pw.pw_gid;
  int n = kMaxGroups;
  id->groups.resize(static_cast<size_t>(n));
  if (getgrouplist(pw.pw_name, pw.pw_gid, id->groups.data(), &n) < 0) n = std::min(n, kMaxGroups);
  id->groups.resize(static_cast<size_t>(std::max(n, 0)));
  return std::shared_ptr<const Identity>(std::move(id));
}

}  // namespace

bool switches_identity() { return own().uid == 0; }

Result<std::shared_ptr<const Identity>> unix_identity(std::string_view name) {
  if (name.empty()) return sys_error(ENOENT, "no Unix account for an empty name");
  std::string as_written(name);
  auto r = lookup(as_written);
  if (r || r.error().sys_errno != ENOENT) return r;
  std::string lower = as_written;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == as_written) return r;
  return lookup(lower);
}

bool become(const Identity* id) {
  if (id == t_current && (id || !t_switched)) return true;
  const bool ok =
      id ? set_thread_identity(id->uid, id->gid, id->groups) : set_thread_identity(own().uid, own().gid, own().groups);
  if (!ok) {
    // Half switched: back to the process's own, and say so.
    set_thread_identity(own().uid, own().gid, own().groups);
    t_current = nullptr;
    return false;
  }
  t_current = id;
  t_switched = id != nullptr;
  return true;
}

}  // namespace smbkit::server
