#include "proto/fscc_dir_info.h"

#include <gtest/gtest.h>

#include "proto/create.h"

namespace smbkit::proto {
namespace {

DirEntry entry(std::string name, uint64_t size) {
  DirEntry e;
  e.FileIndex = 3;
  e.CreationTime = 1;
  e.LastAccessTime = 2;
  e.LastWriteTime = 3;
  e.ChangeTime = 4;
  e.EndOfFile = size;
  e.AllocationSize = (size + 4095) & ~4095ull;
  e.FileAttributes = FILE_ATTRIBUTE_ARCHIVE;
  e.EaSize = 0;
  e.FileName = std::move(name);
  return e;
}

// What a class keeps of an entry (the rest stays zero after decoding).
DirEntry keep(uint8_t cls, DirEntry e) {
  if (cls == FILE_NAMES_INFORMATION) {
    DirEntry n;
    n.FileIndex = e.FileIndex;
    n.FileName = e.FileName;
    return n;
  }
  if (cls == FILE_DIRECTORY_INFORMATION) e.EaSize = 0;
  if (cls != FILE_BOTH_DIRECTORY_INFORMATION && cls != FILE_ID_BOTH_DIRECTORY_INFORMATION)
    e.ShortName.clear();
  if (cls != FILE_ID_BOTH_DIRECTORY_INFORMATION && cls != FILE_ID_FULL_DIRECTORY_INFORMATION)
    e.FileId = 0;
  return e;
}

std::vector<DirEntry> sample() {
  std::vector<DirEntry> v{entry(".", 0), entry("..", 0), entry("long file name.txt", 12345),
                          entry("ünï", 1)};
  v[0].FileAttributes = v[1].FileAttributes = FILE_ATTRIBUTE_DIRECTORY;
  v[2].ShortName = "LONGFI~1.TXT";
  v[2].FileId = 0xABCDEF;
  v[3].EaSize = 0xA000000C;  // a reparse tag
  return v;
}

TEST(FsccDirInfo, RoundTripAllClasses) {
  for (uint8_t cls : {FILE_DIRECTORY_INFORMATION, FILE_FULL_DIRECTORY_INFORMATION,
                      FILE_BOTH_DIRECTORY_INFORMATION, FILE_ID_BOTH_DIRECTORY_INFORMATION,
                      FILE_ID_FULL_DIRECTORY_INFORMATION, FILE_NAMES_INFORMATION}) {
    SCOPED_TRACE(static_cast<int>(cls));
    ASSERT_TRUE(directory_info_class_supported(cls));
    auto in = sample();
    auto b = encode_directory_entries(cls, in);
    ASSERT_TRUE(b.ok());
    auto d = decode_directory_entries(cls, *b);
    ASSERT_TRUE(d.ok()) << d.error().message();
    ASSERT_EQ(d->size(), in.size());
    for (size_t i = 0; i < in.size(); i++) EXPECT_EQ((*d)[i], keep(cls, in[i]));
    // Every entry but the last starts 8-byte aligned.
    size_t pos = 0;
    while (uint32_t next = load_le32(b->data() + pos)) {
      EXPECT_EQ(next % 8, 0u);
      pos += next;
    }
  }
  EXPECT_FALSE(directory_info_class_supported(FILE_BASIC_INFORMATION));
  EXPECT_FALSE(decode_directory_entries(FILE_BASIC_INFORMATION, {}).ok());
}

// MS-FSCC 2.4.28 FileNamesInformation, field by field.
TEST(FsccDirInfo, NamesByteExact) {
  DirEntry a, b;
  a.FileIndex = 1;
  a.FileName = "ab";
  b.FileName = std::string("c");  // (assigning the 1-byte literal trips GCC 12's false -Wrestrict at -O3)
  auto buf = encode_directory_entries(FILE_NAMES_INFORMATION, std::vector<DirEntry>{a, b});
  ASSERT_TRUE(buf.ok());
  EXPECT_EQ(to_hex(*buf),
            "10000000"   // NextEntryOffset = 16 (12 + 4, aligned)
            "01000000"   // FileIndex
            "04000000"   // FileNameLength
            "61006200"   // "ab"
            "00000000"   // Next = 0
            "00000000"   // FileIndex
            "02000000"   // FileNameLength
            "6300");     // "c", no trailing padding
}

// MS-FSCC 2.4.10 FileDirectoryInformation, field by field.
TEST(FsccDirInfo, DirectoryByteExact) {
  DirEntry e = entry("x", 5);
  auto buf = encode_directory_entries(FILE_DIRECTORY_INFORMATION, std::vector<DirEntry>{e});
  ASSERT_TRUE(buf.ok());
  EXPECT_EQ(to_hex(*buf),
            "00000000"            // NextEntryOffset
            "03000000"            // FileIndex
            "0100000000000000"    // CreationTime
            "0200000000000000"    // LastAccessTime
            "0300000000000000"    // LastWriteTime
            "0400000000000000"    // ChangeTime
            "0500000000000000"    // EndOfFile
            "0010000000000000"    // AllocationSize
            "20000000"            // FileAttributes
            "02000000"            // FileNameLength
            "7800");              // "x"
}

Bytes three_entries() {
  return *encode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, sample());
}

TEST(FsccDirInfo, RejectsMalformedListings) {
  const Bytes good = three_entries();
  const uint32_t first = load_le32(good.data());
  ASSERT_TRUE(decode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, good).ok());
  auto bad = [&](auto mutate) {
    Bytes b = good;
    mutate(b);
    auto r = decode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, b);
    EXPECT_FALSE(r.ok());
    if (!r.ok()) {
      EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
    }
  };
  bad([](Bytes& b) { b.resize(50); });              // shorter than one entry
  bad([](Bytes& b) { b.resize(b.size() - 1); });    // last name cut short
  bad([](Bytes& b) { store_le32(b.data(), 4); });   // NextEntryOffset inside the entry
  bad([](Bytes& b) { store_le32(b.data(), 0); store_le32(b.data() + 60, 0xFFFFFF); });
  bad([&](Bytes& b) { store_le32(b.data(), first + 4); });   // unaligned
  bad([](Bytes& b) { store_le32(b.data(), static_cast<uint32_t>(b.size())); });  // at the end
  bad([](Bytes& b) { store_le32(b.data(), 0xFFFFFFF8u); });  // overruns / wraps
  bad([&](Bytes& b) { store_le32(b.data() + 60, first); });  // FileNameLength past the entry
  bad([](Bytes& b) { store_le32(b.data() + 60, 3); });       // odd-length name
  bad([](Bytes& b) { b[68] = std::byte{25}; });              // ShortNameLength > 24
  bad([](Bytes& b) { b[68] = std::byte{3}; });               // odd ShortNameLength
  bad([](Bytes& b) { store_le16(b.data() + 104, 0xDC00); }); // lone surrogate in a name
  // A loop: an entry whose NextEntryOffset would lead back to an earlier one
  // cannot be expressed (offsets are unsigned and relative), and a zero-length
  // step ends the list; so "loops" are steps smaller than an entry, caught above.
  bad([](Bytes& b) { store_le32(b.data(), 8); });
}

TEST(FsccDirInfo, StreamingStopsOnCallbackError) {
  Bytes b = three_entries();
  int n = 0;
  auto r = for_each_directory_entry(FILE_ID_BOTH_DIRECTORY_INFORMATION, b,
                                    [&](DirEntry&& e) -> Result<void> {
                                      n++;
                                      if (e.FileName == "..") return nt_error(STATUS_CANCELLED, "x");
                                      return ok_result();
                                    });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_CANCELLED);
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(decode_directory_entries(FILE_NAMES_INFORMATION, {})->empty());
}

}  // namespace
}  // namespace smbkit::proto
