// Files' security descriptors: where they are kept (an xattr), what a
// request may do with a file (the tree's maximum, the file's DACL, the
// parent directory's), and QUERY_INFO / SET_INFO SMB2_0_INFO_SECURITY
// (MS-SMB2 3.3.5.20.3, 3.3.5.21.3).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/security_descriptor.h"
#include "server/file_internal.h"

namespace smbkit::server {

// The xattr holding a file's descriptor: a version byte, then the
// self-relative descriptor (MS-DTYP 2.4.6).
inline constexpr const char* kDescriptorXattr = "user.smbkitd.sd";

// The stored descriptor of the file open as `fd` (any fd, O_PATH too);
// nullopt when none is stored (or the file system keeps no xattrs). A
// stored value that does not decode is treated as none.
std::optional<proto::SecurityDescriptor> stored_descriptor(int fd);
// The stored descriptor, else the one derived from the mode (acl.h).
proto::SecurityDescriptor file_descriptor(int fd, const struct stat& st);
Result<void> store_descriptor(int fd, const proto::SecurityDescriptor& sd);

// What the request may be granted on the file open as `fd` (stat `st`)
// at `path` under the tree's share: the tree's maximum (access.cc)
// limited by the DACL, plus DELETE when the parent grants
// FILE_DELETE_CHILD and FILE_READ_ATTRIBUTES when it grants
// FILE_LIST_DIRECTORY (MS-FSA 2.1.5.1.2.1, as NTFS and smbd do).
uint32_t file_rights(const CallCtx& ctx, int fd, const struct stat& st, const std::string& path);
// The rights the DACL of the directory open as `dir_fd` grants the
// request (FILE_ADD_FILE / FILE_ADD_SUBDIRECTORY for a create in it).
uint32_t directory_rights(const CallCtx& ctx, int dir_fd);

// The descriptor a file created by `ctx` gets: the client's SD_BUFFER
// (`given`, owner and group defaulted to the creator's, no DACL: the
// inherited one), else what the parent `parent_fd` passes on; nullopt:
// nothing to store (the mode describes it).
std::optional<proto::SecurityDescriptor> new_file_descriptor(const CallCtx& ctx, int parent_fd, const struct stat& st,
                                                             const std::optional<proto::SecurityDescriptor>& given);

FileReply query_security(const CallCtx& ctx, Open& o, uint32_t additional_information, uint32_t output_length);
// The status of the SET_INFO.
uint32_t set_security(const CallCtx& ctx, Open& o, uint32_t additional_information, ByteView buffer);

}  // namespace smbkit::server
