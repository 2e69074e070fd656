// SMB2 QUERY_INFO (MS-SMB2 3.3.5.20): file classes (MS-FSCC 2.4) from
// fstat(2) of the open, file system classes (MS-FSCC 2.5) from fstatvfs(2),
// the security descriptor (security.cc), no quotas.
//
// Sizes (MS-FSA 2.1.5.11/12): a buffer smaller than a class's fixed part
// (Windows' structure size, which for a class with a name counts the
// first character and the padding: smbtorture smb2.getinfo's
// qfile/qfs_buffercheck) is STATUS_INFO_LENGTH_MISMATCH; a class with a
// variable tail (names, streams) that does not fit is cut at
// OutputBufferLength and answered with STATUS_BUFFER_OVERFLOW.
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>

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
// The structure sizes Windows checks a buffer against (MS-FSCC 2.4, 2.5,
// as Windows' sizeof): smaller is STATUS_INFO_LENGTH_MISMATCH.
constexpr size_t kAllInformationMinimum = 104;
constexpr size_t kStreamInformationMinimum = 32;
constexpr size_t kAlternateNameMinimum = 8;
// MS-FSCC 2.1.5.2.1: an 8.3 name's base and extension lengths.
constexpr size_t kShortBaseMax = 8;
constexpr size_t kShortExtMax = 3;
// A made-up short name keeps this much of the name before its '~'.
constexpr size_t kMangledPrefix = 6;
constexpr std::string_view kShortNameExtras = "!#$%&'()-@^_`{}~";
constexpr size_t kFsVolumeInformationMinimum = 24;
constexpr size_t kFsAttributeInformationMinimum = 16;
// MS-FSCC 2.5.2 FileFsControlInformation and 2.5.6
// FileFsObjectIdInformation: fixed sizes.
constexpr size_t kFsControlInformationSize = 48;
constexpr size_t kFsObjectIdInformationSize = 64;
// MS-FSCC 2.5.2: a quota threshold or limit of -1 means none.
constexpr uint64_t kNoQuota = UINT64_MAX;

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

bool short_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         kShortNameExtras.find(c) != std::string_view::npos;
}

// The 8.3 name of a file (MS-FSCC 2.1.5.2.1). No short names are kept on a
// POSIX file system: a name that is already a legal 8.3 name is its own (in
// upper case, as Windows shows them); any other gets one made, as Samba's
// default "mangled names" does, from its first legal characters, '~' and a
// digit from a hash of the whole name, and the first legal characters of
// its extension. A made-up short name is not accepted by CREATE.
std::string short_name(std::string_view leaf) {
  auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; };
  const size_t dot = leaf.rfind('.');
  const std::string_view base = dot == std::string_view::npos ? leaf : leaf.substr(0, dot);
  const std::string_view ext = dot == std::string_view::npos ? std::string_view{} : leaf.substr(dot + 1);
  const bool legal = !base.empty() && base.size() <= kShortBaseMax && ext.size() <= kShortExtMax &&
                     std::all_of(base.begin(), base.end(), short_name_char) &&
                     std::all_of(ext.begin(), ext.end(), short_name_char) &&
                     (dot == std::string_view::npos || !ext.empty());
  std::string out;
  if (legal) {
    for (char c : leaf) out += upper(c);
    return out;
  }
  for (char c : base)
    if (short_name_char(c) && out.size() < kMangledPrefix) out += upper(c);
  if (out.empty()) out.push_back('_');
  out += '~';
  out += static_cast<char>('1' + std::hash<std::string_view>{}(leaf) % 9);
  std::string e;
  for (char c : ext)
    if (short_name_char(c) && e.size() < kShortExtMax) e += upper(c);
  if (!e.empty()) {
    out += '.';
    out += e;
  }
  return out;
}

// MS-FSCC 2.4.27 (also 2.4.30): FileNameLength, FileName.
Result<Encoded> name_information(const std::string& name_utf8) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(name_utf8));
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

Result<Encoded> file_class(FileService& svc, Open& o, uint8_t cls, uint16_t dialect) {
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
    case FILE_FULL_EA_INFORMATION:  // MS-FSA 2.1.5.12.11: needs FILE_READ_EA; no EAs are kept
      return nt_error(o.granted & FILE_READ_EA ? STATUS_NO_EAS_ON_FILE : STATUS_ACCESS_DENIED);
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
    case FILE_NAME_INFORMATION:
      return name_information(wire_name(path));
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
      e.fixed = kAllInformationMinimum;
      e.variable = true;
      return e;
    }
    case FILE_NETWORK_OPEN_INFORMATION: {
      FileNetworkOpenInformation n;
      fill_times_sizes_attributes(st, n);
      return fixed_of(encode_info(n));
    }
    case FILE_ALTERNATE_NAME_INFORMATION: {                             // MS-FSCC 2.4.5: the 8.3 name
      if (path.empty()) return nt_error(STATUS_OBJECT_NAME_NOT_FOUND);  // the root has none
      SMBKIT_TRY(Encoded e, name_information(short_name(path.substr(path.rfind('/') + 1))));
      e.fixed = kAlternateNameMinimum;
      return e;
    }
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
      e.fixed = kStreamInformationMinimum;
      e.variable = true;
      return e;
    }
    case FILE_NORMALIZED_NAME_INFORMATION: {
      // MS-SMB2 3.3.5.20.1: SMB 3.1.1 only. MS-FSCC 2.4.30: the name from
      // the share root without a leading '' (empty for the root).
      if (dialect < SMB2_DIALECT_0311) return nt_error(STATUS_NOT_SUPPORTED);
      std::string n = path;
      std::replace(n.begin(), n.end(), '/', '\\');
      return name_information(n);
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
      e.fixed = kFsVolumeInformationMinimum;
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
      e.fixed = kFsAttributeInformationMinimum;
      e.variable = true;
      return e;
    }
    case FILE_FS_CONTROL_INFORMATION:  // MS-FSCC 2.5.2: no quotas, no content indexing
      return raw(kFsControlInformationSize, [](ByteWriter& w) {
        w.u64(0);         // FreeSpaceStartFiltering
        w.u64(0);         // FreeSpaceThreshold
        w.u64(0);         // FreeSpaceStopFiltering
        w.u64(kNoQuota);  // DefaultQuotaThreshold
        w.u64(kNoQuota);  // DefaultQuotaLimit
        w.u32(0);         // FileSystemControlFlags
        w.u32(0);         // Padding
      });
    case FILE_FS_OBJECT_ID_INFORMATION:  // MS-FSCC 2.5.6: the volume's id from st_dev
      return raw(kFsObjectIdInformationSize, [&](ByteWriter& w) {
        w.u64(static_cast<uint64_t>(st.st_dev));
        w.u64(0);
        w.zeros(kFsObjectIdInformationSize - 16);  // ExtendedInfo
      });
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
  ChannelSequenceHold seq_hold = count_request(**o, ctx);  // MS-SMB2 3.3.5.2.10
  if (req->OutputBufferLength > svc.options().max_transact) return error_reply(STATUS_INVALID_PARAMETER);
  Result<Encoded> enc = nt_error(STATUS_INVALID_PARAMETER);
  switch (req->InfoType) {
    case SMB2_0_INFO_FILE:
      // MS-FSA 2.1.5.12: the classes that return attributes and times
      // need FILE_READ_ATTRIBUTES; the others (standard, internal, EA,
      // access, position, mode, alignment, stream, name) need nothing.
      if (!(*o)->pipe && !((*o)->granted & FILE_READ_ATTRIBUTES) && needs_read_attributes(req->FileInfoClass))
        return error_reply(STATUS_ACCESS_DENIED);
      enc = file_class(svc, **o, req->FileInfoClass, ctx.dialect);
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
  if (req->OutputBufferLength < e.fixed) return error_reply(STATUS_INFO_LENGTH_MISMATCH);
  if (e.bytes.size() > req->OutputBufferLength) {
    if (!e.variable) return error_reply(STATUS_INFO_LENGTH_MISMATCH);
    e.bytes.resize(req->OutputBufferLength);
    status = STATUS_BUFFER_OVERFLOW;
  }
  QueryInfoResponse resp;
  resp.OutputBuffer = std::move(e.bytes);
  return body_reply(status, resp, encode_query_info_response);
}

}  // namespace smbkit::server
