// SMB2 QUERY_INFO (MS-SMB2 3.3.5.20): file classes (MS-FSCC 2.4) from
// fstat(2) of the open, file system classes (MS-FSCC 2.5) from fstatvfs(2),
// the security descriptor (security.cc), no quotas.
//
// Sizes (MS-FSA 2.1.5.11/12): a buffer smaller than a class's fixed part is
// STATUS_INFO_LENGTH_MISMATCH; a class with a variable tail (names,
// streams) that does not fit is cut at OutputBufferLength and answered
// with STATUS_BUFFER_OVERFLOW.
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstring>

#include "base/utf16.h"
#include "proto/create.h"
#include "proto/fscc_file_info.h"
#include "proto/fscc_fs_info.h"
#include "proto/query_info.h"
#include "server/file_internal.h"
#include "server/security.h"

namespace smbkit::server {

using namespace proto;

namespace {

// What Windows and Samba report for a pipe (MS-FSCC 2.4.41).
constexpr uint64_t kPipeAllocationSize = 4096;
// MS-FSCC 2.5.10: FILE_DEVICE_DISK; FILE_DEVICE_IS_MOUNTED.
constexpr uint32_t kFileDeviceDisk = 0x00000007;
constexpr uint32_t kFileDeviceIsMounted = 0x00000020;
constexpr uint32_t kBytesPerSector = 512;
// Samba's answer too: clients test for "NTFS" before using its features.
constexpr std::string_view kFileSystemName = "NTFS";

struct Encoded {
  Bytes bytes;
  size_t fixed = 0;       // the part that cannot be cut
  bool variable = false;  // may be cut with STATUS_BUFFER_OVERFLOW
};

Encoded fixed_of(Result<Bytes> r) {
  Encoded e;
  if (r) {
    e.bytes = std::move(*r);
    e.fixed = e.bytes.size();
  }
  return e;
}

// Classes the codec has no struct for: a few fixed little-endian fields.
template <class F>
Encoded raw(size_t size, F fill) {
  Encoded e;
  ByteWriter w(e.bytes);
  fill(w);
  e.fixed = size;
  return e;
}

// "\dir\file" as Windows names a file in FileNameInformation.
std::string wire_name(const std::string& path) {
  std::string n = "\\" + path;
  std::replace(n.begin(), n.end(), '/', '\\');
  return n;
}

bool delete_pending(FileService& svc, const Open& o) {
  if (!o.node) return false;
  MutexLock l(svc.impl().nodes_mu);
  return o.node->delete_pending;
}

FileBasicInformation basic_of(const struct stat& st) {
  FileBasicInformation b;
  const FileTimes t = file_times(st);
  b.CreationTime = t.creation;
  b.LastAccessTime = t.last_access;
  b.LastWriteTime = t.last_write;
  b.ChangeTime = t.change;
  b.FileAttributes = file_attributes(st);
  return b;
}

FileStandardInformation standard_of(const struct stat& st, bool pending) {
  FileStandardInformation s;
  s.AllocationSize = allocation_size(st);
  s.EndOfFile = S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size);
  // MS-FSA 2.1.5.12.27: the links not marked for deletion.
  s.NumberOfLinks = static_cast<uint32_t>(st.st_nlink) - (pending && st.st_nlink > 0 ? 1 : 0);
  s.DeletePending = pending ? 1 : 0;
  s.Directory = S_ISDIR(st.st_mode) ? 1 : 0;
  return s;
}

Result<Encoded> file_class(FileService& svc, Open& o, uint8_t cls) {
  if (o.pipe) {
    if (cls != FILE_STANDARD_INFORMATION) return nt_error(STATUS_INVALID_PARAMETER);
    FileStandardInformation s;
    s.AllocationSize = kPipeAllocationSize;
    s.NumberOfLinks = 1;
    return fixed_of(encode_info(s));
  }
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return nt_error(errno_status(errno));
  uint64_t position;
  uint32_t mode;
  const std::string path = open_path(svc, o);
  {
    MutexLock l(o.mu);
    position = o.position;
    mode = o.mode;
  }
  switch (cls) {
    case FILE_BASIC_INFORMATION:
      return fixed_of(encode_info(basic_of(st)));
    case FILE_STANDARD_INFORMATION:
      return fixed_of(encode_info(standard_of(st, delete_pending(svc, o))));
    case FILE_INTERNAL_INFORMATION:
      return fixed_of(encode_info(FileInternalInformation{file_index(st)}));
    case FILE_EA_INFORMATION:  // MS-FSCC 2.4.12: EaSize; no EAs are kept
      return raw(4, [](ByteWriter& w) { w.u32(0); });
    case FILE_ACCESS_INFORMATION:  // MS-FSCC 2.4.1: AccessFlags
      return raw(4, [&](ByteWriter& w) { w.u32(o.granted); });
    case FILE_POSITION_INFORMATION:
      return fixed_of(encode_info(FilePositionInformation{position}));
    case FILE_MODE_INFORMATION:
      return fixed_of(encode_info(FileModeInformation{mode}));
    case FILE_ALIGNMENT_INFORMATION:  // MS-FSCC 2.4.3: FILE_BYTE_ALIGNMENT
      return raw(4, [](ByteWriter& w) { w.u32(0); });
    case FILE_NAME_INFORMATION: {  // MS-FSCC 2.4.27: FileNameLength, FileName
      SMBKIT_TRY(Bytes name, utf8_to_utf16le(wire_name(path)));
      // Written in place: GCC 12 at -O3 misreads an insert after a 4-byte
      // write into a fresh vector as an overflow.
      Encoded e;
      e.bytes.resize(4 + name.size());
      store_le32(e.bytes.data(), static_cast<uint32_t>(name.size()));
      if (!name.empty()) std::memcpy(e.bytes.data() + 4, name.data(), name.size());
      e.fixed = 4;
      e.variable = true;
      return e;
    }
    case FILE_ALL_INFORMATION: {
      FileAllInformation a;
      a.BasicInformation = basic_of(st);
      a.StandardInformation = standard_of(st, delete_pending(svc, o));
      a.InternalInformation.IndexNumber = file_index(st);
      a.AccessFlags = o.granted;
      a.PositionInformation.CurrentByteOffset = position;
      a.ModeInformation.Mode = mode;
      a.FileName = wire_name(path);
      SMBKIT_TRY(Bytes b, encode_info(a));
      Encoded e;
      e.bytes = std::move(b);
      e.fixed = kFileAllInformationFixedSize;
      e.variable = true;
      return e;
    }
    case FILE_NETWORK_OPEN_INFORMATION: {
      FileNetworkOpenInformation n;
      fill_times_sizes_attributes(st, n);
      return fixed_of(encode_info(n));
    }
    case FILE_ALTERNATE_NAME_INFORMATION:  // no 8.3 short names are made (as Samba answers)
      return nt_error(STATUS_OBJECT_NAME_NOT_FOUND);
    case FILE_ATTRIBUTE_TAG_INFORMATION:  // MS-FSCC 2.4.6: FileAttributes, ReparseTag
      return raw(8, [&](ByteWriter& w) {
        w.u32(file_attributes(st));
        w.u32(0);
      });
    case FILE_STREAM_INFORMATION: {
      FileStreamInformation s;  // directories have no data stream
      if (!S_ISDIR(st.st_mode))
        s.Entries.push_back({static_cast<uint64_t>(st.st_size), allocation_size(st), "::$DATA"});
      SMBKIT_TRY(Bytes b, encode_info(s));
      Encoded e;
      e.bytes = std::move(b);
      e.fixed = 0;
      e.variable = true;
      return e;
    }
    case FILE_COMPRESSION_INFORMATION:  // MS-FSCC 2.4.9: not compressed
      return raw(16, [&](ByteWriter& w) {
        w.u64(S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size));  // CompressedFileSize
        w.u16(0);                                                            // COMPRESSION_FORMAT_NONE
        w.u8(0);                                                             // CompressionUnitShift
        w.u8(0);                                                             // ChunkShift
        w.u8(0);                                                             // ClusterShift
        w.zeros(3);                                                          // Reserved
      });
    default:
      return nt_error(STATUS_INVALID_INFO_CLASS);
  }
}

Result<Encoded> fs_class(Open& o, uint8_t cls) {
  if (o.pipe || o.fd < 0) return nt_error(STATUS_INVALID_PARAMETER);
  struct statvfs vfs {};
  if (fstatvfs(o.fd, &vfs) != 0) return nt_error(errno_status(errno));
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return nt_error(errno_status(errno));
  const uint32_t unit = static_cast<uint32_t>(std::max<unsigned long>(vfs.f_frsize, kBytesPerSector));
  const uint32_t sectors_per_unit = unit / kBytesPerSector;
  switch (cls) {
    case FILE_FS_VOLUME_INFORMATION: {
      FileFsVolumeInformation v;
      v.VolumeSerialNumber = static_cast<uint32_t>(st.st_dev ^ (st.st_dev >> 32));
      v.VolumeLabel = o.share->cfg.name;
      SMBKIT_TRY(Bytes b, encode_info(v));
      Encoded e;
      e.bytes = std::move(b);
      e.fixed = 18;  // MS-FSCC 2.5.9: the fields before VolumeLabel
      e.variable = true;
      return e;
    }
    case FILE_FS_SIZE_INFORMATION: {
      FileFsSizeInformation s;
      s.TotalAllocationUnits = vfs.f_blocks;
      s.AvailableAllocationUnits = vfs.f_bavail;
      s.SectorsPerAllocationUnit = sectors_per_unit;
      s.BytesPerSector = kBytesPerSector;
      return fixed_of(encode_info(s));
    }
    case FILE_FS_FULL_SIZE_INFORMATION: {
      FileFsFullSizeInformation s;
      s.TotalAllocationUnits = vfs.f_blocks;
      s.CallerAvailableAllocationUnits = vfs.f_bavail;
      s.ActualAvailableAllocationUnits = vfs.f_bfree;
      s.SectorsPerAllocationUnit = sectors_per_unit;
      s.BytesPerSector = kBytesPerSector;
      return fixed_of(encode_info(s));
    }
    case FILE_FS_ATTRIBUTE_INFORMATION: {
      FileFsAttributeInformation a;
      a.FileSystemAttributes =
          FILE_CASE_SENSITIVE_SEARCH | FILE_CASE_PRESERVED_NAMES | FILE_UNICODE_ON_DISK | FILE_SUPPORTS_SPARSE_FILES;
      a.MaximumComponentNameLength = static_cast<int32_t>(vfs.f_namemax);
      a.FileSystemName = std::string(kFileSystemName);
      SMBKIT_TRY(Bytes b, encode_info(a));
      Encoded e;
      e.bytes = std::move(b);
      e.fixed = 12;  // MS-FSCC 2.5.1: the fields before FileSystemName
      e.variable = true;
      return e;
    }
    case FILE_FS_DEVICE_INFORMATION:
      return fixed_of(encode_info(FileFsDeviceInformation{kFileDeviceDisk, kFileDeviceIsMounted}));
    case FILE_FS_SECTOR_SIZE_INFORMATION: {
      FileFsSectorSizeInformation s;
      s.LogicalBytesPerSector = kBytesPerSector;
      s.PhysicalBytesPerSectorForAtomicity = kBytesPerSector;
      s.PhysicalBytesPerSectorForPerformance = kBytesPerSector;
      s.FileSystemEffectivePhysicalBytesPerSectorForAtomicity = kBytesPerSector;
      return fixed_of(encode_info(s));
    }
    default:
      return nt_error(STATUS_INVALID_INFO_CLASS);
  }
}

}  // namespace

static bool needs_read_attributes(uint8_t info_class) {
  switch (info_class) {
    case FILE_BASIC_INFORMATION:
    case FILE_ALL_INFORMATION:
    case FILE_NETWORK_OPEN_INFORMATION:
    case FILE_ATTRIBUTE_TAG_INFORMATION:
      return true;
    default:
      return false;
  }
}

FileReply handle_query_info(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_query_info_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  if (req->OutputBufferLength > svc.options().max_transact) return error_reply(STATUS_INVALID_PARAMETER);
  Result<Encoded> enc = nt_error(STATUS_INVALID_PARAMETER);
  switch (req->InfoType) {
    case SMB2_0_INFO_FILE:
      // MS-FSA 2.1.5.12: the classes that return attributes and times
      // need FILE_READ_ATTRIBUTES; the others (standard, internal, EA,
      // access, position, mode, alignment, stream, name) need nothing.
      if (!(*o)->pipe && !((*o)->granted & FILE_READ_ATTRIBUTES) && needs_read_attributes(req->FileInfoClass))
        return error_reply(STATUS_ACCESS_DENIED);
      enc = file_class(svc, **o, req->FileInfoClass);
      break;
    case SMB2_0_INFO_FILESYSTEM:
      enc = fs_class(**o, req->FileInfoClass);
      break;
    case SMB2_0_INFO_SECURITY:
      if ((*o)->pipe || !(*o)->node) return error_reply(STATUS_NOT_SUPPORTED);
      return query_security(ctx, **o, req->AdditionalInformation, req->OutputBufferLength);
    case SMB2_0_INFO_QUOTA:
      return error_reply(STATUS_NOT_SUPPORTED);
    default:
      return error_reply(STATUS_INVALID_PARAMETER);
  }
  if (!enc) return error_reply(enc.error().status ? enc.error().status : STATUS_INVALID_PARAMETER);
  Encoded& e = *enc;
  uint32_t status = STATUS_SUCCESS;
  if (e.bytes.size() > req->OutputBufferLength) {
    if (!e.variable || req->OutputBufferLength < e.fixed) return error_reply(STATUS_INFO_LENGTH_MISMATCH);
    e.bytes.resize(req->OutputBufferLength);
    status = STATUS_BUFFER_OVERFLOW;
  }
  QueryInfoResponse resp;
  resp.OutputBuffer = std::move(e.bytes);
  return body_reply(status, resp, encode_query_info_response);
}

}  // namespace smbkit::server
