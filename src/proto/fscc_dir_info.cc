#include "proto/fscc_dir_info.h"

#include "base/utf16.h"
#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

// Where a class keeps its fields, as offsets from the entry start; 0 means
// "not present" (no field lives at offset 0 except NextEntryOffset).
struct Layout {
  size_t fixed;            // bytes before FileName
  size_t name_length;      // FileNameLength
  bool times;              // FileIndex..FileAttributes at 4..59
  size_t ea_size;          // EaSize
  size_t short_name;       // ShortNameLength (1 byte, 1 reserved, 24 bytes)
  size_t file_id;          // 8-byte FileId
};

constexpr size_t kShortNameMax = 24;

const Layout* layout_for(uint8_t info_class) {
  // MS-FSCC 2.4.10, 2.4.14, 2.4.8, 2.4.17, 2.4.18, 2.4.28
  static constexpr Layout kDirectory{64, 60, true, 0, 0, 0};
  static constexpr Layout kFull{68, 60, true, 64, 0, 0};
  static constexpr Layout kBoth{94, 60, true, 64, 68, 0};
  static constexpr Layout kIdBoth{104, 60, true, 64, 68, 96};
  static constexpr Layout kIdFull{80, 60, true, 64, 0, 72};
  static constexpr Layout kNames{12, 8, false, 0, 0, 0};
  switch (info_class) {
    case FILE_DIRECTORY_INFORMATION: return &kDirectory;
    case FILE_FULL_DIRECTORY_INFORMATION: return &kFull;
    case FILE_BOTH_DIRECTORY_INFORMATION: return &kBoth;
    case FILE_ID_BOTH_DIRECTORY_INFORMATION: return &kIdBoth;
    case FILE_ID_FULL_DIRECTORY_INFORMATION: return &kIdFull;
    case FILE_NAMES_INFORMATION: return &kNames;
    default: return nullptr;
  }
}

Result<DirEntry> decode_entry(const Layout& l, ByteView entry) {
  // walk_entry_chain guarantees entry.size() >= l.fixed.
  const std::byte* p = entry.data();
  DirEntry e;
  e.FileIndex = load_le32(p + 4);
  if (l.times) {
    e.CreationTime = load_le64(p + 8);
    e.LastAccessTime = load_le64(p + 16);
    e.LastWriteTime = load_le64(p + 24);
    e.ChangeTime = load_le64(p + 32);
    e.EndOfFile = load_le64(p + 40);
    e.AllocationSize = load_le64(p + 48);
    e.FileAttributes = load_le32(p + 56);
  }
  if (l.ea_size) e.EaSize = load_le32(p + l.ea_size);
  if (l.file_id) e.FileId = load_le64(p + l.file_id);
  if (l.short_name) {
    uint8_t len = static_cast<uint8_t>(p[l.short_name]);
    if (len > kShortNameMax) return protocol_error("directory entry: ShortNameLength out of range");
    SMBKIT_TRY(e.ShortName, decode_utf16_name(entry.subspan(l.short_name + 2, len), "directory entry"));
  }
  uint32_t name_len = load_le32(p + l.name_length);
  if (!range_ok(l.fixed, name_len, entry.size()))
    return protocol_error("directory entry: FileNameLength out of range");
  SMBKIT_TRY(e.FileName, decode_utf16_name(entry.subspan(l.fixed, name_len), "directory entry"));
  return e;
}

}  // namespace

bool directory_info_class_supported(uint8_t info_class) { return layout_for(info_class) != nullptr; }

size_t directory_entry_fixed_size(uint8_t info_class) {
  const Layout* l = layout_for(info_class);
  return l ? l->fixed : 0;
}

// MS-FSCC 2.4 (directory information classes)
Result<void> for_each_directory_entry(uint8_t info_class, ByteView buffer,
                                      const std::function<Result<void>(DirEntry&&)>& fn) {
  const Layout* l = layout_for(info_class);
  if (!l) return nt_error(STATUS_INVALID_INFO_CLASS, "unsupported directory information class");
  return walk_entry_chain(buffer, l->fixed, "directory listing", [&](ByteView entry) -> Result<void> {
    SMBKIT_TRY(DirEntry e, decode_entry(*l, entry));
    return fn(std::move(e));
  });
}

// MS-FSCC 2.4 (directory information classes)
Result<std::vector<DirEntry>> decode_directory_entries(uint8_t info_class, ByteView buffer) {
  std::vector<DirEntry> out;
  SMBKIT_CHECK(for_each_directory_entry(info_class, buffer, [&](DirEntry&& e) -> Result<void> {
    out.push_back(std::move(e));
    return ok_result();
  }));
  return out;
}

// MS-FSCC 2.4 (directory information classes)
Result<Bytes> encode_directory_entries(uint8_t info_class, std::span<const DirEntry> entries) {
  const Layout* l = layout_for(info_class);
  if (!l) return nt_error(STATUS_INVALID_INFO_CLASS, "unsupported directory information class");
  Bytes b;
  ByteWriter w(b);
  for (size_t i = 0; i < entries.size(); i++) {
    const DirEntry& e = entries[i];
    SMBKIT_TRY(Bytes name, utf8_to_utf16le(e.FileName));
    Bytes short_name;
    if (l->short_name && !e.ShortName.empty()) {
      SMBKIT_TRY(short_name, utf8_to_utf16le(e.ShortName));
      if (short_name.size() > kShortNameMax)
        return nt_error(STATUS_INVALID_PARAMETER, "directory entry: ShortName too long");
    }
    const size_t start = w.pos();
    w.zeros(l->fixed);
    std::byte* p = b.data() + start;
    store_le32(p + 4, e.FileIndex);
    if (l->times) {
      store_le64(p + 8, e.CreationTime);
      store_le64(p + 16, e.LastAccessTime);
      store_le64(p + 24, e.LastWriteTime);
      store_le64(p + 32, e.ChangeTime);
      store_le64(p + 40, e.EndOfFile);
      store_le64(p + 48, e.AllocationSize);
      store_le32(p + 56, e.FileAttributes);
    }
    store_le32(p + l->name_length, static_cast<uint32_t>(name.size()));
    if (l->ea_size) store_le32(p + l->ea_size, e.EaSize);
    if (l->file_id) store_le64(p + l->file_id, e.FileId);
    if (l->short_name) {
      p[l->short_name] = std::byte(static_cast<uint8_t>(short_name.size()));
      std::copy(short_name.begin(), short_name.end(), p + l->short_name + 2);
    }
    w.bytes(name);
    end_chain_entry(w, start, i + 1 == entries.size());
  }
  return b;
}

}  // namespace smbkit::proto
