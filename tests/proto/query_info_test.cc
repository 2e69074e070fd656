#include "proto/query_info.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"
#include "proto/create.h"
#include "proto/fscc_file_info.h"
#include "proto/fscc_fs_info.h"

namespace smbkit::proto {
namespace {

// Captured from Samba 4.17 (SMB 2.1): QUERY_INFO responses for
// FileAllInformation on "dir\a.txt" and, on the share's "dir",
// FileFsVolumeInformation, FileFsAttributeInformation and
// FileFsFullSizeInformation.
const char* kFileAll =
    "fe534d42400001000000000010007f000100000000000000050000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "09004800780000006aff2ab89480dd016aff2ab89480dd016aff2ab89480dd016aff2ab89480dd01"
    "8000000000000000001000000000000006000000000000000100000000000000d321a70000000000"
    "000000008100000000000000000000008000000000000000140000005c006400690072005c006100"
    "2e00740078007400";
const char* kFsVolume =
    "fe534d42400001000000000010007f0001000000000000000a0000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "090048001c000000e1c84dc39480dd013d3cd6ea0a000000000073006800610072006500";
const char* kFsAttribute =
    "fe534d42400001000000000010007f0001000000000000000b0000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "09004800140000006f000100ff000000080000004e00540046005300";
const char* kFsFullSize =
    "fe534d42400001000000000010007f0001000000000000000c0000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "0900480020000000748ebf0f000000008039f304000000008039f304000000000200000000020000";

// MS-SMB2 2.2.37, field by field.
TEST(QueryInfo, RequestByteExact) {
  QueryInfoRequest req;
  req.InfoType = SMB2_0_INFO_SECURITY;
  req.FileInfoClass = 0;
  req.OutputBufferLength = 0x1000;
  req.AdditionalInformation = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
  req.FileId = {5, 6};
  Bytes b = encoded(req, encode_query_info_request);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "2900"                // StructureSize = 41
            "03"                  // InfoType = SECURITY
            "00"                  // FileInfoClass
            "00100000"            // OutputBufferLength
            "0000"                // InputBufferOffset
            "0000"                // Reserved
            "00000000"            // InputBufferLength
            "05000000"            // AdditionalInformation = OWNER|DACL
            "00000000"            // Flags
            "0500000000000000"    // FileId.Persistent
            "0600000000000000"    // FileId.Volatile
            "00");                // the one Buffer byte
  auto d = decode_query_info_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->InfoType, SMB2_0_INFO_SECURITY);
  EXPECT_EQ(d->OutputBufferLength, 0x1000u);
  EXPECT_EQ(d->AdditionalInformation, 5u);
  EXPECT_EQ(d->FileId, (FileId{5, 6}));
}

TEST(QueryInfo, RequestWithInputBuffer) {
  QueryInfoRequest req;
  req.InfoType = SMB2_0_INFO_QUOTA;
  req.Flags = SL_RESTART_SCAN;
  req.InputBuffer = from_hex("0000000000000000000000000000000001");
  Bytes b = encoded(req, encode_query_info_request);
  EXPECT_EQ(load_le16(b.data() + 64 + 8), 0x68);  // InputBufferOffset
  auto d = decode_query_info_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->InputBuffer, req.InputBuffer);
  EXPECT_EQ(d->Flags, SL_RESTART_SCAN);
  store_le32(b.data() + 64 + 12, 18);  // InputBufferLength past the end
  EXPECT_FALSE(decode_query_info_request(b).ok());
  store_le32(b.data() + 64 + 12, 17);
  store_le16(b.data() + 64 + 8, 0x50);  // offset inside the fixed part
  EXPECT_FALSE(decode_query_info_request(b).ok());
}

TEST(QueryInfo, DecodesCapturedFileAll) {
  Bytes msg = from_hex(kFileAll);
  auto out = query_info_output(msg);
  ASSERT_TRUE(out.ok());
  auto all = decode_info_as<FileAllInformation>(*out);
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ(all->BasicInformation.FileAttributes, FILE_ATTRIBUTE_NORMAL);
  EXPECT_EQ(all->BasicInformation.LastWriteTime, 0x01dd8094b82aff6aull);
  EXPECT_EQ(all->StandardInformation.AllocationSize, 4096u);
  EXPECT_EQ(all->StandardInformation.EndOfFile, 6u);
  EXPECT_EQ(all->StandardInformation.NumberOfLinks, 1u);
  EXPECT_EQ(all->StandardInformation.Directory, 0);
  EXPECT_EQ(all->InternalInformation.IndexNumber, 0xa721d3u);  // = QFid DiskFileId
  EXPECT_EQ(all->AccessFlags, FILE_READ_DATA | FILE_READ_ATTRIBUTES);
  EXPECT_EQ(all->FileName, "\\dir\\a.txt");
  EXPECT_FALSE(all->FileNameTruncated);
  // Re-encoding gives the same buffer.
  auto enc = encode_info(*all);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(to_hex(*enc), to_hex(*out));
}

// With STATUS_BUFFER_OVERFLOW the name part may be cut short.
TEST(QueryInfo, FileAllTruncatedName) {
  Bytes msg = from_hex(kFileAll);
  ByteView out = *query_info_output(msg);
  auto all = decode_info_as<FileAllInformation>(out.first(out.size() - 5));
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_TRUE(all->FileNameTruncated);
  EXPECT_EQ(all->FileName, "\\dir\\a.");
  EXPECT_FALSE(decode_info_as<FileAllInformation>(out.first(99)).ok());
}

TEST(QueryInfo, DecodesCapturedFsInfo) {
  Bytes vol = from_hex(kFsVolume);
  auto v = decode_info_as<FileFsVolumeInformation>(*query_info_output(vol));
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->VolumeLabel, "share");
  EXPECT_EQ(v->VolumeSerialNumber, 0xead63c3du);
  EXPECT_EQ(v->VolumeCreationTime, 0x01dd8094c34dc8e1ull);

  Bytes attr = from_hex(kFsAttribute);
  auto a = decode_info_as<FileFsAttributeInformation>(*query_info_output(attr));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->FileSystemName, "NTFS");
  EXPECT_EQ(a->MaximumComponentNameLength, 255);
  EXPECT_TRUE(a->FileSystemAttributes & FILE_CASE_SENSITIVE_SEARCH);
  EXPECT_TRUE(a->FileSystemAttributes & FILE_UNICODE_ON_DISK);

  Bytes full = from_hex(kFsFullSize);
  auto f = decode_info_as<FileFsFullSizeInformation>(*query_info_output(full));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->TotalAllocationUnits, 0x0fbf8e74u);
  EXPECT_EQ(f->CallerAvailableAllocationUnits, 0x04f33980u);
  EXPECT_EQ(f->SectorsPerAllocationUnit, 2u);
  EXPECT_EQ(f->BytesPerSector, 512u);
}

TEST(QueryInfo, ResponseRoundTripAndMalformed) {
  QueryInfoResponse r{from_hex("aabbcc")};
  Bytes b = encoded(r, encode_query_info_response);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)), "0900" "4800" "03000000" "aabbcc");
  auto d = decode_query_info_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->OutputBuffer, r.OutputBuffer);

  auto bad = refuses(from_hex(kFileAll), decode_query_info_response);
  bad([](Bytes& m) { m.resize(64 + 7); });
  bad([](Bytes& m) { m.resize(m.size() - 1); });
  bad([](Bytes& m) { m[64] = std::byte{0x11}; });
  bad([](Bytes& m) { store_le16(m.data() + 66, 0); });
  bad([](Bytes& m) { store_le32(m.data() + 68, 0x80000000u); });
}

}  // namespace
}  // namespace smbkit::proto
