#include "proto/fscc_file_info.h"

#include <algorithm>

#include "base/utf16.h"
#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

// Field lists (proto/codec_util.h) of the fixed-size classes, in spec order.

// MS-FSCC 2.4.7 (40 bytes).
constexpr auto kBasicFields = [](auto& io, auto& v) {
  io.u64(v.CreationTime);
  io.u64(v.LastAccessTime);
  io.u64(v.LastWriteTime);
  io.u64(v.ChangeTime);
  io.u32(v.FileAttributes);
  io.reserved(4);
};

// MS-FSCC 2.4.41 (24 bytes).
constexpr auto kStandardFields = [](auto& io, auto& v) {
  io.u64(v.AllocationSize);
  io.u64(v.EndOfFile);
  io.u32(v.NumberOfLinks);
  io.u8(v.DeletePending);
  io.u8(v.Directory);
  io.reserved(2);
};

// MS-FSCC 2.4.29 (56 bytes).
constexpr auto kNetworkOpenFields = [](auto& io, auto& v) {
  io.u64(v.CreationTime);
  io.u64(v.LastAccessTime);
  io.u64(v.LastWriteTime);
  io.u64(v.ChangeTime);
  io.u64(v.AllocationSize);
  io.u64(v.EndOfFile);
  io.u32(v.FileAttributes);
  io.reserved(4);
};

// MS-FSCC 2.4.2: the classes FileAllInformation holds, up to
// FileNameInformation's FileNameLength.
constexpr auto kAllFields = [](auto& io, auto& v) {
  kBasicFields(io, v.BasicInformation);
  kStandardFields(io, v.StandardInformation);
  io.u64(v.InternalInformation.IndexNumber);
  io.u32(v.EaSize);
  io.u32(v.AccessFlags);
  io.u64(v.PositionInformation.CurrentByteOffset);
  io.u32(v.ModeInformation.Mode);
  io.u32(v.AlignmentRequirement);
};

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

// MS-FSCC 2.4
void end_chain_entry(ByteWriter& w, size_t start, bool last) {
  if (last) return;
  w.pad_to(8);
  w.patch_u32(start, static_cast<uint32_t>(w.pos() - start));
}

// MS-FSCC 2.4.7
Result<Bytes> encode_info(const FileBasicInformation& v) {
  return write_fields(v, 40, kBasicFields);
}
Result<void> decode_info(ByteView buf, FileBasicInformation& out) {
  return decode_fixed_info(buf, 40, "FileBasicInformation", out, kBasicFields);
}

// MS-FSCC 2.4.41
Result<Bytes> encode_info(const FileStandardInformation& v) {
  return write_fields(v, 24, kStandardFields);
}
Result<void> decode_info(ByteView buf, FileStandardInformation& out) {
  // Some servers send 22 bytes (no trailing Reserved).
  if (buf.size() < 22) return fscc_too_short("FileStandardInformation");
  Bytes padded(buf.begin(), buf.end());
  padded.resize(std::max<size_t>(padded.size(), 24));
  read_fields(padded, out, kStandardFields);
  return ok_result();
}

// MS-FSCC 2.4.20: IndexNumber.
constexpr auto kInternalFields = [](auto& io, auto& v) { io.u64(v.IndexNumber); };
Result<Bytes> encode_info(const FileInternalInformation& v) {
  return write_fields(v, 8, kInternalFields);
}
Result<void> decode_info(ByteView buf, FileInternalInformation& out) {
  return decode_fixed_info(buf, 8, "FileInternalInformation", out, kInternalFields);
}

// MS-FSCC 2.4.33: CurrentByteOffset.
constexpr auto kPositionFields = [](auto& io, auto& v) { io.u64(v.CurrentByteOffset); };
Result<Bytes> encode_info(const FilePositionInformation& v) {
  return write_fields(v, 8, kPositionFields);
}
Result<void> decode_info(ByteView buf, FilePositionInformation& out) {
  return decode_fixed_info(buf, 8, "FilePositionInformation", out, kPositionFields);
}

// MS-FSCC 2.4.26: Mode.
constexpr auto kModeFields = [](auto& io, auto& v) { io.u32(v.Mode); };
Result<Bytes> encode_info(const FileModeInformation& v) { return write_fields(v, 4, kModeFields); }
Result<void> decode_info(ByteView buf, FileModeInformation& out) {
  return decode_fixed_info(buf, 4, "FileModeInformation", out, kModeFields);
}

// MS-FSCC 2.4.13: EndOfFile.
constexpr auto kEndOfFileFields = [](auto& io, auto& v) { io.u64(v.EndOfFile); };
Result<Bytes> encode_info(const FileEndOfFileInformation& v) {
  return write_fields(v, 8, kEndOfFileFields);
}
Result<void> decode_info(ByteView buf, FileEndOfFileInformation& out) {
  return decode_fixed_info(buf, 8, "FileEndOfFileInformation", out, kEndOfFileFields);
}

// MS-FSCC 2.4.4: AllocationSize.
constexpr auto kAllocationFields = [](auto& io, auto& v) { io.u64(v.AllocationSize); };
Result<Bytes> encode_info(const FileAllocationInformation& v) {
  return write_fields(v, 8, kAllocationFields);
}
Result<void> decode_info(ByteView buf, FileAllocationInformation& out) {
  return decode_fixed_info(buf, 8, "FileAllocationInformation", out, kAllocationFields);
}

// MS-FSCC 2.4.11: DeletePending.
constexpr auto kDispositionFields = [](auto& io, auto& v) { io.u8(v.DeletePending); };
Result<Bytes> encode_info(const FileDispositionInformation& v) {
  return write_fields(v, 1, kDispositionFields);
}
Result<void> decode_info(ByteView buf, FileDispositionInformation& out) {
  return decode_fixed_info(buf, 1, "FileDispositionInformation", out, kDispositionFields);
}

// MS-FSCC 2.4.37.2
Result<Bytes> encode_info(const FileRenameInformation& v) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(v.FileName));
  Bytes b;
  b.reserve(24 + name.size());
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
  if (!r.ok()) return fscc_too_short("FileRenameInformation");
  if (len > r.remaining()) return protocol_error("FileRenameInformation: FileNameLength out of range");
  SMBKIT_TRY(out.FileName, decode_utf16_name(r.bytes(len), "FileRenameInformation"));
  return ok_result();
}

// MS-FSCC 2.4.29
Result<Bytes> encode_info(const FileNetworkOpenInformation& v) {
  return write_fields(v, 56, kNetworkOpenFields);
}
Result<void> decode_info(ByteView buf, FileNetworkOpenInformation& out) {
  return decode_fixed_info(buf, 56, "FileNetworkOpenInformation", out, kNetworkOpenFields);
}

// MS-FSCC 2.4.2
Result<Bytes> encode_info(const FileAllInformation& v) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(v.FileName));
  Bytes b;
  b.reserve(kFileAllInformationFixedSize + name.size());
  ByteWriter w(b);
  FieldWriter io(w);
  kAllFields(io, v);
  w.u32(static_cast<uint32_t>(name.size()));  // FileNameLength
  w.bytes(name);
  return b;
}
Result<void> decode_info(ByteView buf, FileAllInformation& out) {
  if (buf.size() < kFileAllInformationFixedSize) return fscc_too_short("FileAllInformation");
  ByteReader r(buf);
  FieldReader io(r);
  kAllFields(io, out);
  uint32_t len = r.u32();
  if (!r.ok()) return fscc_too_short("FileAllInformation");
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
    end_chain_entry(w, start, i + 1 == v.Entries.size());
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
