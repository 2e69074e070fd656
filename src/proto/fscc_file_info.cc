#include "proto/fscc_file_info.h"

#include <algorithm>

#include "base/utf16.h"
#include "proto/create.h"  // decode_utf16_name

namespace smbkit::proto {
namespace {

Error too_short(std::string_view what) {
  return protocol_error(std::string(what) + ": buffer too short");
}

Bytes fixed(size_t reserve) {
  Bytes b;
  b.reserve(reserve);
  return b;
}

void put_basic(ByteWriter& w, const FileBasicInformation& v) {
  w.u64(v.CreationTime);
  w.u64(v.LastAccessTime);
  w.u64(v.LastWriteTime);
  w.u64(v.ChangeTime);
  w.u32(v.FileAttributes);
  w.u32(0);  // Reserved
}
void get_basic(ByteReader& r, FileBasicInformation& v) {
  v.CreationTime = r.u64();
  v.LastAccessTime = r.u64();
  v.LastWriteTime = r.u64();
  v.ChangeTime = r.u64();
  v.FileAttributes = r.u32();
  r.skip(4);
}
void put_standard(ByteWriter& w, const FileStandardInformation& v) {
  w.u64(v.AllocationSize);
  w.u64(v.EndOfFile);
  w.u32(v.NumberOfLinks);
  w.u8(v.DeletePending);
  w.u8(v.Directory);
  w.u16(0);  // Reserved
}
void get_standard(ByteReader& r, FileStandardInformation& v) {
  v.AllocationSize = r.u64();
  v.EndOfFile = r.u64();
  v.NumberOfLinks = r.u32();
  v.DeletePending = r.u8();
  v.Directory = r.u8();
  r.skip(2);
}

// One fixed-size field of `n` bytes.
template <class T, class F>
Result<void> decode_fixed(ByteView buf, size_t n, std::string_view what, T& out, F&& read) {
  if (buf.size() < n) return too_short(what);
  ByteReader r(buf);
  read(r, out);
  return ok_result();
}

}  // namespace

// MS-FSCC 2.4
Result<void> walk_entry_chain(ByteView buf, size_t min_entry, std::string_view what,
                              const std::function<Result<void>(ByteView entry)>& fn) {
  size_t pos = 0;
  while (pos < buf.size()) {
    const size_t remaining = buf.size() - pos;
    if (remaining < min_entry) return protocol_error(std::string(what) + ": entry truncated");
    const uint32_t next = load_le32(buf.data() + pos);
    if (next == 0) return fn(buf.subspan(pos));
    if (next % 8 || next < min_entry || next >= remaining)
      return protocol_error(std::string(what) + ": NextEntryOffset out of range");
    SMBKIT_CHECK(fn(buf.subspan(pos, next)));
    pos += next;
  }
  return ok_result();
}

// MS-FSCC 2.4.7
Result<Bytes> encode_info(const FileBasicInformation& v) {
  Bytes b = fixed(40);
  ByteWriter w(b);
  put_basic(w, v);
  return b;
}
Result<void> decode_info(ByteView buf, FileBasicInformation& out) {
  return decode_fixed(buf, 40, "FileBasicInformation", out, get_basic);
}

// MS-FSCC 2.4.41
Result<Bytes> encode_info(const FileStandardInformation& v) {
  Bytes b = fixed(24);
  ByteWriter w(b);
  put_standard(w, v);
  return b;
}
Result<void> decode_info(ByteView buf, FileStandardInformation& out) {
  // Some servers send 22 bytes (no trailing Reserved).
  if (buf.size() < 22) return too_short("FileStandardInformation");
  Bytes padded(buf.begin(), buf.end());
  padded.resize(std::max<size_t>(padded.size(), 24));
  ByteReader r(padded);
  get_standard(r, out);
  return ok_result();
}

// MS-FSCC 2.4.20
Result<Bytes> encode_info(const FileInternalInformation& v) {
  Bytes b = fixed(8);
  ByteWriter(b).u64(v.IndexNumber);
  return b;
}
Result<void> decode_info(ByteView buf, FileInternalInformation& out) {
  return decode_fixed(buf, 8, "FileInternalInformation", out,
                      [](ByteReader& r, FileInternalInformation& v) { v.IndexNumber = r.u64(); });
}

// MS-FSCC 2.4.33
Result<Bytes> encode_info(const FilePositionInformation& v) {
  Bytes b = fixed(8);
  ByteWriter(b).u64(v.CurrentByteOffset);
  return b;
}
Result<void> decode_info(ByteView buf, FilePositionInformation& out) {
  return decode_fixed(buf, 8, "FilePositionInformation", out,
                      [](ByteReader& r, FilePositionInformation& v) { v.CurrentByteOffset = r.u64(); });
}

// MS-FSCC 2.4.26
Result<Bytes> encode_info(const FileModeInformation& v) {
  Bytes b = fixed(4);
  ByteWriter(b).u32(v.Mode);
  return b;
}
Result<void> decode_info(ByteView buf, FileModeInformation& out) {
  return decode_fixed(buf, 4, "FileModeInformation", out,
                      [](ByteReader& r, FileModeInformation& v) { v.Mode = r.u32(); });
}

// MS-FSCC 2.4.13
Result<Bytes> encode_info(const FileEndOfFileInformation& v) {
  Bytes b = fixed(8);
  ByteWriter(b).u64(v.EndOfFile);
  return b;
}
Result<void> decode_info(ByteView buf, FileEndOfFileInformation& out) {
  return decode_fixed(buf, 8, "FileEndOfFileInformation", out,
                      [](ByteReader& r, FileEndOfFileInformation& v) { v.EndOfFile = r.u64(); });
}

// MS-FSCC 2.4.4
Result<Bytes> encode_info(const FileAllocationInformation& v) {
  Bytes b = fixed(8);
  ByteWriter(b).u64(v.AllocationSize);
  return b;
}
Result<void> decode_info(ByteView buf, FileAllocationInformation& out) {
  return decode_fixed(buf, 8, "FileAllocationInformation", out,
                      [](ByteReader& r, FileAllocationInformation& v) { v.AllocationSize = r.u64(); });
}

// MS-FSCC 2.4.11
Result<Bytes> encode_info(const FileDispositionInformation& v) {
  return Bytes{std::byte{v.DeletePending}};
}
Result<void> decode_info(ByteView buf, FileDispositionInformation& out) {
  return decode_fixed(buf, 1, "FileDispositionInformation", out,
                      [](ByteReader& r, FileDispositionInformation& v) { v.DeletePending = r.u8(); });
}

// MS-FSCC 2.4.37.2
Result<Bytes> encode_info(const FileRenameInformation& v) {
  Bytes name;
  if (!v.FileName.empty()) {
    SMBKIT_TRY(name, utf8_to_utf16le(v.FileName));
  }
  Bytes b = fixed(24 + name.size());
  ByteWriter w(b);
  w.u8(v.ReplaceIfExists);
  w.zeros(7);  // Reserved
  w.u64(v.RootDirectory);
  w.u32(static_cast<uint32_t>(name.size()));
  w.bytes(name);
  if (b.size() < 24) w.zeros(24 - b.size());
  w.pad_to(8);
  return b;
}
Result<void> decode_info(ByteView buf, FileRenameInformation& out) {
  ByteReader r(buf);
  out.ReplaceIfExists = r.u8();
  r.skip(7);
  out.RootDirectory = r.u64();
  uint32_t len = r.u32();
  if (!r.ok()) return too_short("FileRenameInformation");
  if (len > r.remaining()) return protocol_error("FileRenameInformation: FileNameLength out of range");
  SMBKIT_TRY(out.FileName, decode_utf16_name(r.bytes(len), "FileRenameInformation"));
  return ok_result();
}

// MS-FSCC 2.4.29
Result<Bytes> encode_info(const FileNetworkOpenInformation& v) {
  Bytes b = fixed(56);
  ByteWriter w(b);
  w.u64(v.CreationTime);
  w.u64(v.LastAccessTime);
  w.u64(v.LastWriteTime);
  w.u64(v.ChangeTime);
  w.u64(v.AllocationSize);
  w.u64(v.EndOfFile);
  w.u32(v.FileAttributes);
  w.u32(0);  // Reserved
  return b;
}
Result<void> decode_info(ByteView buf, FileNetworkOpenInformation& out) {
  return decode_fixed(buf, 56, "FileNetworkOpenInformation", out,
                      [](ByteReader& r, FileNetworkOpenInformation& v) {
                        v.CreationTime = r.u64();
                        v.LastAccessTime = r.u64();
                        v.LastWriteTime = r.u64();
                        v.ChangeTime = r.u64();
                        v.AllocationSize = r.u64();
                        v.EndOfFile = r.u64();
                        v.FileAttributes = r.u32();
                      });
}

// MS-FSCC 2.4.2
Result<Bytes> encode_info(const FileAllInformation& v) {
  Bytes name;
  if (!v.FileName.empty()) {
    SMBKIT_TRY(name, utf8_to_utf16le(v.FileName));
  }
  Bytes b = fixed(kFileAllInformationFixedSize + name.size());
  ByteWriter w(b);
  put_basic(w, v.BasicInformation);
  put_standard(w, v.StandardInformation);
  w.u64(v.InternalInformation.IndexNumber);
  w.u32(v.EaSize);
  w.u32(v.AccessFlags);
  w.u64(v.PositionInformation.CurrentByteOffset);
  w.u32(v.ModeInformation.Mode);
  w.u32(v.AlignmentRequirement);
  w.u32(static_cast<uint32_t>(name.size()));  // FileNameLength
  w.bytes(name);
  return b;
}
Result<void> decode_info(ByteView buf, FileAllInformation& out) {
  if (buf.size() < kFileAllInformationFixedSize) return too_short("FileAllInformation");
  ByteReader r(buf);
  get_basic(r, out.BasicInformation);
  get_standard(r, out.StandardInformation);
  out.InternalInformation.IndexNumber = r.u64();
  out.EaSize = r.u32();
  out.AccessFlags = r.u32();
  out.PositionInformation.CurrentByteOffset = r.u64();
  out.ModeInformation.Mode = r.u32();
  out.AlignmentRequirement = r.u32();
  uint32_t len = r.u32();
  if (!r.ok()) return too_short("FileAllInformation");
  out.FileNameTruncated = len > r.remaining();
  size_t have = out.FileNameTruncated ? (r.remaining() & ~size_t{1}) : len;
  SMBKIT_TRY(out.FileName, decode_utf16_name(r.bytes(have), "FileAllInformation"));
  return ok_result();
}

// MS-FSCC 2.4.43
Result<Bytes> encode_info(const FileStreamInformation& v) {
  Bytes b;
  ByteWriter w(b);
  for (size_t i = 0; i < v.Entries.size(); i++) {
    const FileStreamEntry& e = v.Entries[i];
    SMBKIT_TRY(Bytes name, utf8_to_utf16le(e.StreamName));
    const size_t start = w.pos();
    w.u32(0);  // NextEntryOffset, patched below
    w.u32(static_cast<uint32_t>(name.size()));
    w.u64(e.StreamSize);
    w.u64(e.StreamAllocationSize);
    w.bytes(name);
    if (i + 1 < v.Entries.size()) {
      w.pad_to(8);
      w.patch_u32(start, static_cast<uint32_t>(w.pos() - start));
    }
  }
  return b;
}
Result<void> decode_info(ByteView buf, FileStreamInformation& out) {
  out.Entries.clear();
  return walk_entry_chain(buf, 24, "FileStreamInformation", [&](ByteView entry) -> Result<void> {
    ByteReader r(entry, 4);
    FileStreamEntry e;
    uint32_t len = r.u32();
    e.StreamSize = r.u64();
    e.StreamAllocationSize = r.u64();
    if (!r.ok() || len > r.remaining())
      return protocol_error("FileStreamInformation: StreamNameLength out of range");
    SMBKIT_TRY(e.StreamName, decode_utf16_name(r.bytes(len), "FileStreamInformation"));
    out.Entries.push_back(std::move(e));
    return ok_result();
  });
}

}  // namespace smbkit::proto
