#include "proto/change_notify.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

TEST(ChangeNotify, RequestLayout) {
  ChangeNotifyRequest req;
  req.Flags = SMB2_WATCH_TREE;
  req.OutputBufferLength = 0x1000;
  req.FileId = {0x11, 0x22};
  req.CompletionFilter = FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME;
  Bytes b = header_for(SMB2_CHANGE_NOTIFY, false);
  ByteWriter w(b);
  ASSERT_TRUE(encode_change_notify_request(req, w).ok());
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "2000"              // StructureSize = 32
            "0100"              // Flags = SMB2_WATCH_TREE
            "00100000"          // OutputBufferLength
            "1100000000000000"  // FileId.Persistent
            "2200000000000000"  // FileId.Volatile
            "03000000"          // CompletionFilter
            "00000000");        // Reserved
  auto d = decode_change_notify_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Flags, SMB2_WATCH_TREE);
  EXPECT_EQ(d->OutputBufferLength, 0x1000u);
  EXPECT_EQ(d->FileId, req.FileId);
  EXPECT_EQ(d->CompletionFilter, req.CompletionFilter);
  // Every truncation fails.
  for (size_t n = 0; n < b.size(); n++) EXPECT_FALSE(decode_change_notify_request(ByteView(b).first(n)).ok()) << n;
}

TEST(ChangeNotify, EntriesAreAlignedAndTheLastEndsTheList) {
  std::vector<FileNotifyInformation> in = {{FILE_ACTION_ADDED, "a"}, {FILE_ACTION_RENAMED_OLD_NAME, "dir\\bc"}};
  auto e = encode_file_notify_information(in);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(to_hex(*e),
            "10000000"  // NextEntryOffset: 12 + 2, aligned to 16
            "01000000"  // Action = FILE_ACTION_ADDED
            "02000000"  // FileNameLength
            "6100"      // "a"
            "0000"      // padding
            "00000000"  // NextEntryOffset: the last
            "04000000"  // FILE_ACTION_RENAMED_OLD_NAME
            "0c000000"
            "6400690072005c0062006300");
  auto d = decode_file_notify_information(*e);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, in);
  EXPECT_EQ(*file_notify_information_size(in[0]), 16u);
}

TEST(ChangeNotify, ResponseRoundTrip) {
  auto entries = encode_file_notify_information({{FILE_ACTION_MODIFIED, "x.txt"}});
  ASSERT_TRUE(entries.ok());
  Bytes b = header_for(SMB2_CHANGE_NOTIFY, true);
  ByteWriter w(b);
  ASSERT_TRUE(encode_change_notify_response({*entries}, w).ok());
  EXPECT_EQ(to_hex(ByteView(b).subspan(64, 8)), "0900480016000000");
  auto d = decode_change_notify_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->OutputBuffer, *entries);
}

TEST(ChangeNotify, RejectsHostileEntries) {
  auto good = encode_file_notify_information({{FILE_ACTION_ADDED, "ab"}, {FILE_ACTION_REMOVED, "c"}});
  ASSERT_TRUE(good.ok());
  // The name runs past the buffer.
  Bytes b = *good;
  b[8] = std::byte{0x40};
  EXPECT_FALSE(decode_file_notify_information(b).ok());
  // An odd FileNameLength.
  b = *good;
  b[8] = std::byte{0x03};
  EXPECT_FALSE(decode_file_notify_information(b).ok());
  // NextEntryOffset inside the entry (would loop or overlap) or unaligned.
  b = *good;
  b[0] = std::byte{0x04};
  EXPECT_FALSE(decode_file_notify_information(b).ok());
  b = *good;
  b[0] = std::byte{0x11};
  EXPECT_FALSE(decode_file_notify_information(b).ok());
  // NextEntryOffset past the end: the header does not fit.
  b = *good;
  b[0] = std::byte{0xF0};
  EXPECT_FALSE(decode_file_notify_information(b).ok());
  // Every truncation of the list fails.
  for (size_t n = 1; n < good->size(); n++)
    EXPECT_FALSE(decode_file_notify_information(ByteView(*good).first(n)).ok()) << n;
}

}  // namespace
}  // namespace smbkit::proto
