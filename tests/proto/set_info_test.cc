#include "proto/set_info.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"
#include "proto/fscc_file_info.h"

namespace smbkit::proto {
namespace {

// MS-SMB2 2.2.39 carrying MS-FSCC FileRenameInformation (type 2), field by
// field.
TEST(SetInfo, RenameRequestByteExact) {
  FileRenameInformation ren;
  ren.ReplaceIfExists = 1;
  ren.FileName = "d\\b";
  SetInfoRequest req;
  req.InfoType = SMB2_0_INFO_FILE;
  req.FileInfoClass = FileRenameInformation::kInfoClass;
  req.FileId = {9, 10};
  req.Buffer = *encode_info(ren);
  Bytes b = encoded(req, encode_set_info_request);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "2100"                // StructureSize = 33
            "01"                  // InfoType = FILE
            "0a"                  // FileInfoClass = FileRenameInformation
            "20000000"            // BufferLength = 32
            "6000"                // BufferOffset = 0x60
            "0000"                // Reserved
            "00000000"            // AdditionalInformation
            "0900000000000000"    // FileId.Persistent
            "0a00000000000000"    // FileId.Volatile
            // FILE_RENAME_INFORMATION_TYPE_2:
            "01"                  // ReplaceIfExists
            "00000000000000"      // Reserved
            "0000000000000000"    // RootDirectory
            "06000000"            // FileNameLength
            "64005c006200"        // "d\b"
            "000000000000");      // padding to a multiple of 8
  auto d = decode_set_info_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->FileInfoClass, FILE_RENAME_INFORMATION);
  EXPECT_EQ(d->FileId, (FileId{9, 10}));
  auto r = decode_info_as<FileRenameInformation>(d->Buffer);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, ren);
}

TEST(SetInfo, EmptyBufferAndResponse) {
  SetInfoRequest req;
  req.InfoType = SMB2_0_INFO_SECURITY;
  req.AdditionalInformation = DACL_SECURITY_INFORMATION;
  Bytes b = encoded(req, encode_set_info_request);
  EXPECT_EQ(b.size(), 64u + 33u);
  auto d = decode_set_info_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->Buffer.empty());
  EXPECT_EQ(d->AdditionalInformation, DACL_SECURITY_INFORMATION);

  Bytes r = encoded(SetInfoResponse{}, encode_set_info_response);
  EXPECT_EQ(to_hex(ByteView(r).subspan(64)), "0200");
  EXPECT_TRUE(decode_set_info_response(r).ok());
  r[64] = std::byte{4};
  EXPECT_FALSE(decode_set_info_response(r).ok());
  r.pop_back();
  EXPECT_FALSE(decode_set_info_response(r).ok());
}

TEST(SetInfo, RejectsMalformed) {
  SetInfoRequest req;
  req.FileInfoClass = FILE_END_OF_FILE_INFORMATION;
  req.Buffer = *encode_info(FileEndOfFileInformation{4096});
  Bytes good = encoded(req, encode_set_info_request);
  ASSERT_TRUE(decode_set_info_request(good).ok());
  auto bad = refuses(good, decode_set_info_request);
  bad([](Bytes& b) { b.pop_back(); });
  bad([](Bytes& b) { b.resize(64 + 31); });
  bad([](Bytes& b) { b[64] = std::byte{32}; });
  bad([](Bytes& b) { store_le32(b.data() + 68, 9); });        // BufferLength
  bad([](Bytes& b) { store_le16(b.data() + 72, 0x5f); });     // BufferOffset in fixed part
  bad([](Bytes& b) { store_le16(b.data() + 72, 0xFFFF); });
}

}  // namespace
}  // namespace smbkit::proto
