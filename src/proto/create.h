// MS-SMB2 2.2.13 / 2.2.14: SMB2 CREATE request and response and the constants
// that go with them (access masks, share modes, dispositions, options, file
// attributes, oplock levels). The wire helpers shared by every command
// (FileId, UTF-16 names, body checks) are in proto/codec_util.h, included
// here for the codecs that reach them through this header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/codec_util.h"
#include "proto/create_contexts.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.13: RequestedOplockLevel / 2.2.14: OplockLevel.
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_NONE = 0x00;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_II = 0x01;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_EXCLUSIVE = 0x08;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_BATCH = 0x09;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_LEASE = 0xFF;

// MS-SMB2 2.2.13: ImpersonationLevel.
inline constexpr uint32_t SMB2_IMPERSONATION_ANONYMOUS = 0x00000000;
inline constexpr uint32_t SMB2_IMPERSONATION_IDENTIFICATION = 0x00000001;
inline constexpr uint32_t SMB2_IMPERSONATION_IMPERSONATION = 0x00000002;
inline constexpr uint32_t SMB2_IMPERSONATION_DELEGATE = 0x00000003;

// MS-SMB2 2.2.13.1.1 (files, pipes, printers) and 2.2.13.1.2 (directories):
// access mask bits.
inline constexpr uint32_t FILE_READ_DATA = 0x00000001;
inline constexpr uint32_t FILE_LIST_DIRECTORY = 0x00000001;
inline constexpr uint32_t FILE_WRITE_DATA = 0x00000002;
inline constexpr uint32_t FILE_ADD_FILE = 0x00000002;
inline constexpr uint32_t FILE_APPEND_DATA = 0x00000004;
inline constexpr uint32_t FILE_ADD_SUBDIRECTORY = 0x00000004;
inline constexpr uint32_t FILE_READ_EA = 0x00000008;
inline constexpr uint32_t FILE_WRITE_EA = 0x00000010;
inline constexpr uint32_t FILE_EXECUTE = 0x00000020;
inline constexpr uint32_t FILE_TRAVERSE = 0x00000020;
inline constexpr uint32_t FILE_DELETE_CHILD = 0x00000040;
inline constexpr uint32_t FILE_READ_ATTRIBUTES = 0x00000080;
inline constexpr uint32_t FILE_WRITE_ATTRIBUTES = 0x00000100;
inline constexpr uint32_t DELETE = 0x00010000;
inline constexpr uint32_t READ_CONTROL = 0x00020000;
inline constexpr uint32_t WRITE_DAC = 0x00040000;
inline constexpr uint32_t WRITE_OWNER = 0x00080000;
inline constexpr uint32_t SYNCHRONIZE = 0x00100000;
inline constexpr uint32_t ACCESS_SYSTEM_SECURITY = 0x01000000;
inline constexpr uint32_t MAXIMUM_ALLOWED = 0x02000000;
inline constexpr uint32_t GENERIC_ALL = 0x10000000;
inline constexpr uint32_t GENERIC_EXECUTE = 0x20000000;
inline constexpr uint32_t GENERIC_WRITE = 0x40000000;
inline constexpr uint32_t GENERIC_READ = 0x80000000;

// MS-SMB2 2.2.13: ShareAccess.
inline constexpr uint32_t FILE_SHARE_READ = 0x00000001;
inline constexpr uint32_t FILE_SHARE_WRITE = 0x00000002;
inline constexpr uint32_t FILE_SHARE_DELETE = 0x00000004;

// MS-SMB2 2.2.13: CreateDisposition.
inline constexpr uint32_t FILE_SUPERSEDE = 0x00000000;
inline constexpr uint32_t FILE_OPEN = 0x00000001;
inline constexpr uint32_t FILE_CREATE = 0x00000002;
inline constexpr uint32_t FILE_OPEN_IF = 0x00000003;
inline constexpr uint32_t FILE_OVERWRITE = 0x00000004;
inline constexpr uint32_t FILE_OVERWRITE_IF = 0x00000005;

// MS-SMB2 2.2.13: CreateOptions.
inline constexpr uint32_t FILE_DIRECTORY_FILE = 0x00000001;
inline constexpr uint32_t FILE_WRITE_THROUGH = 0x00000002;
inline constexpr uint32_t FILE_SEQUENTIAL_ONLY = 0x00000004;
inline constexpr uint32_t FILE_NO_INTERMEDIATE_BUFFERING = 0x00000008;
inline constexpr uint32_t FILE_SYNCHRONOUS_IO_ALERT = 0x00000010;
inline constexpr uint32_t FILE_SYNCHRONOUS_IO_NONALERT = 0x00000020;
inline constexpr uint32_t FILE_NON_DIRECTORY_FILE = 0x00000040;
inline constexpr uint32_t FILE_COMPLETE_IF_OPLOCKED = 0x00000100;
inline constexpr uint32_t FILE_NO_EA_KNOWLEDGE = 0x00000200;
inline constexpr uint32_t FILE_OPEN_REMOTE_INSTANCE = 0x00000400;
inline constexpr uint32_t FILE_RANDOM_ACCESS = 0x00000800;
inline constexpr uint32_t FILE_DELETE_ON_CLOSE = 0x00001000;
inline constexpr uint32_t FILE_OPEN_BY_FILE_ID = 0x00002000;
inline constexpr uint32_t FILE_OPEN_FOR_BACKUP_INTENT = 0x00004000;
inline constexpr uint32_t FILE_NO_COMPRESSION = 0x00008000;
inline constexpr uint32_t FILE_OPEN_REQUIRING_OPLOCK = 0x00010000;
inline constexpr uint32_t FILE_DISALLOW_EXCLUSIVE = 0x00020000;
inline constexpr uint32_t FILE_RESERVE_OPFILTER = 0x00100000;
inline constexpr uint32_t FILE_OPEN_REPARSE_POINT = 0x00200000;
inline constexpr uint32_t FILE_OPEN_NO_RECALL = 0x00400000;
inline constexpr uint32_t FILE_OPEN_FOR_FREE_SPACE_QUERY = 0x00800000;

// MS-FSCC 2.6: file attributes (CREATE, CLOSE, info classes).
inline constexpr uint32_t FILE_ATTRIBUTE_READONLY = 0x00000001;
inline constexpr uint32_t FILE_ATTRIBUTE_HIDDEN = 0x00000002;
inline constexpr uint32_t FILE_ATTRIBUTE_SYSTEM = 0x00000004;
inline constexpr uint32_t FILE_ATTRIBUTE_DIRECTORY = 0x00000010;
inline constexpr uint32_t FILE_ATTRIBUTE_ARCHIVE = 0x00000020;
inline constexpr uint32_t FILE_ATTRIBUTE_NORMAL = 0x00000080;
inline constexpr uint32_t FILE_ATTRIBUTE_TEMPORARY = 0x00000100;
inline constexpr uint32_t FILE_ATTRIBUTE_SPARSE_FILE = 0x00000200;
inline constexpr uint32_t FILE_ATTRIBUTE_REPARSE_POINT = 0x00000400;
inline constexpr uint32_t FILE_ATTRIBUTE_COMPRESSED = 0x00000800;
inline constexpr uint32_t FILE_ATTRIBUTE_OFFLINE = 0x00001000;
inline constexpr uint32_t FILE_ATTRIBUTE_NOT_CONTENT_INDEXED = 0x00002000;
inline constexpr uint32_t FILE_ATTRIBUTE_ENCRYPTED = 0x00004000;
inline constexpr uint32_t FILE_ATTRIBUTE_INTEGRITY_STREAM = 0x00008000;
inline constexpr uint32_t FILE_ATTRIBUTE_NO_SCRUB_DATA = 0x00020000;
inline constexpr uint32_t FILE_ATTRIBUTE_RECALL_ON_OPEN = 0x00040000;
inline constexpr uint32_t FILE_ATTRIBUTE_PINNED = 0x00080000;
inline constexpr uint32_t FILE_ATTRIBUTE_UNPINNED = 0x00100000;
inline constexpr uint32_t FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS = 0x00400000;

// MS-SMB2 2.2.14: Flags and CreateAction.
inline constexpr uint8_t SMB2_CREATE_FLAG_REPARSEPOINT = 0x01;
inline constexpr uint32_t FILE_SUPERSEDED = 0x00000000;
inline constexpr uint32_t FILE_OPENED = 0x00000001;
inline constexpr uint32_t FILE_CREATED = 0x00000002;
inline constexpr uint32_t FILE_OVERWRITTEN = 0x00000003;

// MS-SMB2 2.2.13: SMB2 CREATE Request.
struct CreateRequest {
  uint8_t SecurityFlags = 0;  // reserved, MUST be 0
  uint8_t RequestedOplockLevel = SMB2_OPLOCK_LEVEL_NONE;
  uint32_t ImpersonationLevel = SMB2_IMPERSONATION_IMPERSONATION;
  uint64_t SmbCreateFlags = 0;  // reserved, MUST be 0
  uint32_t DesiredAccess = 0;
  uint32_t FileAttributes = 0;
  uint32_t ShareAccess = 0;
  uint32_t CreateDisposition = FILE_OPEN;
  uint32_t CreateOptions = 0;
  std::string Name;  // UTF-8, relative to the share root, '\' separators, "" = root
  std::vector<CreateContext> CreateContexts;
};

// MS-SMB2 2.2.14: SMB2 CREATE Response.
struct CreateResponse {
  uint8_t OplockLevel = 0;
  uint8_t Flags = 0;
  uint32_t CreateAction = 0;
  uint64_t CreationTime = 0;  // FILETIME
  uint64_t LastAccessTime = 0;
  uint64_t LastWriteTime = 0;
  uint64_t ChangeTime = 0;
  uint64_t AllocationSize = 0;
  uint64_t EndofFile = 0;
  uint32_t FileAttributes = 0;
  proto::FileId FileId;
  std::vector<CreateContext> CreateContexts;
};

// Fixed body sizes (without the variable Buffer).
inline constexpr size_t kCreateRequestFixedSize = 56;   // StructureSize 57
inline constexpr size_t kCreateResponseFixedSize = 88;  // StructureSize 89

// MS-SMB2 2.2.13: the name at NameOffset 0x78 (empty names still get one
// Buffer byte, as the spec requires), then the contexts at the next 8-byte
// boundary.
Result<void> encode_create_request(const CreateRequest& req, ByteWriter& w);
Result<CreateRequest> decode_create_request(ByteView msg);
// MS-SMB2 2.2.14: contexts (if any) at 0x98.
Result<void> encode_create_response(const CreateResponse& resp, ByteWriter& w);
Result<CreateResponse> decode_create_response(ByteView msg);

}  // namespace smbkit::proto
