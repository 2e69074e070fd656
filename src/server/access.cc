// Access masks: generic rights mapped (MS-SMB2 2.2.13.1), the most an open
// may be granted, and the share-mode check between opens of one file.
#include <sys/stat.h>

#include "proto/create.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-DTYP 2.4.3 / MS-SMB2 2.2.13.1.1: the file-specific rights each
// generic right stands for.
constexpr uint32_t kFileAllAccess = 0x001F01FF;
constexpr uint32_t kFileGenericRead = READ_CONTROL | FILE_READ_DATA | FILE_READ_ATTRIBUTES | FILE_READ_EA | SYNCHRONIZE;
constexpr uint32_t kFileGenericWrite =
    READ_CONTROL | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA | FILE_APPEND_DATA | SYNCHRONIZE;
constexpr uint32_t kFileGenericExecute = READ_CONTROL | FILE_READ_ATTRIBUTES | FILE_EXECUTE | SYNCHRONIZE;
// What a read-only share takes away.
constexpr uint32_t kWriteRights = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES |
                                  FILE_DELETE_CHILD | DELETE | WRITE_DAC | WRITE_OWNER;

}  // namespace

uint32_t map_generic(uint32_t access) {
  uint32_t out = access & ~(GENERIC_READ | GENERIC_WRITE | GENERIC_EXECUTE | GENERIC_ALL);
  if (access & GENERIC_READ) out |= kFileGenericRead;
  if (access & GENERIC_WRITE) out |= kFileGenericWrite;
  if (access & GENERIC_EXECUTE) out |= kFileGenericExecute;
  if (access & GENERIC_ALL) out |= kFileAllAccess;
  return out;
}

uint32_t maximal_access(const TreeCtx& tree, const struct stat& st) {
  uint32_t m = tree.maximal_access ? map_generic(tree.maximal_access) : kFileAllAccess;
  m &= kFileAllAccess;
  if (tree.read_only || (tree.share && tree.share->cfg.read_only)) m &= ~kWriteRights;
  // FILE_ATTRIBUTE_READONLY is the owner's write bit (attrs.cc): such a
  // file's data cannot be written, as on Windows.
  if (!S_ISDIR(st.st_mode) && !(st.st_mode & S_IWUSR)) m &= ~(FILE_WRITE_DATA | FILE_APPEND_DATA);
  return m;
}

bool share_access_ok(const FileNode& node, uint32_t access, uint32_t share) {
  // MS-FSA 2.1.5.1.2.1 (Algorithm to Check Sharing Access to an Existing
  // Stream or Directory): each side's access against the other's sharing.
  constexpr uint32_t kSharedRights = FILE_READ_DATA | FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_EXECUTE | DELETE;
  if (!(access & kSharedRights)) return true;  // attribute-only opens take no part
  const bool reads = access & (FILE_READ_DATA | FILE_EXECUTE);
  const bool writes = access & (FILE_WRITE_DATA | FILE_APPEND_DATA);
  const bool deletes = access & DELETE;
  for (const Open* o : node.opens) {
    if (!(o->granted & kSharedRights)) continue;
    if (reads && !(o->share_access & FILE_SHARE_READ)) return false;
    if (writes && !(o->share_access & FILE_SHARE_WRITE)) return false;
    if (deletes && !(o->share_access & FILE_SHARE_DELETE)) return false;
    if ((o->granted & (FILE_READ_DATA | FILE_EXECUTE)) && !(share & FILE_SHARE_READ)) return false;
    if ((o->granted & (FILE_WRITE_DATA | FILE_APPEND_DATA)) && !(share & FILE_SHARE_WRITE)) return false;
    if ((o->granted & DELETE) && !(share & FILE_SHARE_DELETE)) return false;
  }
  return true;
}

}  // namespace smbkit::server
