// What a stat(2) says in FSCC terms (MS-FSCC 2.6 attributes, FILETIMEs,
// allocation), shared by CREATE, CLOSE, QUERY_INFO and QUERY_DIRECTORY.
#include <sys/stat.h>

#include <algorithm>

#include "proto/create.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

constexpr uint64_t kStatBlockSize = 512;  // st_blocks unit (stat(2))

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

}  // namespace

// Attributes: DIRECTORY for directories; READONLY when the owner's write
// bit is clear, for directories too as smbd maps it (SET_INFO and CREATE
// map it back, set_info.cc, create.cc); ARCHIVE otherwise for
// files (Samba's "map archive" default reports it for every file). No
// HIDDEN/SYSTEM: nothing on a POSIX file system keeps them.
uint32_t file_attributes(const struct stat& st) {
  uint32_t a = 0;
  if (S_ISDIR(st.st_mode))
    a |= FILE_ATTRIBUTE_DIRECTORY;
  else
    a |= FILE_ATTRIBUTE_ARCHIVE;
  if (!(st.st_mode & S_IWUSR)) a |= FILE_ATTRIBUTE_READONLY;
  return a;
}

// CreationTime: stat(2) has no birth time; the earliest of the three
// times stands in for it (as Samba does without statx btime).
FileTimes file_times(const struct stat& st) {
  FileTimes t;
  timespec birth = std::min({st.st_mtim, st.st_ctim, st.st_atim}, before);
  t.creation = timespec_to_filetime(birth);
  t.last_access = timespec_to_filetime(st.st_atim);
  t.last_write = timespec_to_filetime(st.st_mtim);
  t.change = timespec_to_filetime(st.st_ctim);
  return t;
}

uint64_t allocation_size(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_blocks) * kStatBlockSize;
}

}  // namespace smbkit::server
