#include "proto/query_directory.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"
#include "proto/create.h"
#include "proto/fscc_dir_info.h"

namespace smbkit::proto {
namespace {

// Captured between impacket (SMB 2.1) and Samba 4.17: QUERY_DIRECTORY
// FileIdBothDirectoryInformation, pattern "*", on a directory holding
// bee.dat (7 bytes), sub/, a.md (3 bytes) and a.txt (6 bytes).
const char* kCapturedRequest =
    "fe534d4240000100000000000e007f000000000000000000090000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "2100250000000000bd0cf850000000005f36a9820000000060000200ffff00002a00";
const char* kCapturedResponse =
    "fe534d4240000100000000000e007f000100000000000000090000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "09004800aa0200007000000000000000e1c84dc39480dd01e0436ceb9480dd01e1c84dc39480dd01"
    "e1c84dc39480dd010000000000000000000000000000000010000000020000000000000000000000"
    "000000000000000000000000000000000000000000000000b321a700000000002e00000000000000"
    "70000000000000006aff2ab89480dd01b3892bb89480dd016aff2ab89480dd016aff2ab89480dd01"
    "00000000000000000000000000000000100000000400000000000000000000000000000000000000"
    "000000000000000000000000000000009221a700000000002e002e00000000007800000000000000"
    "6aff2ab89480dd016aff2ab89480dd016aff2ab89480dd016aff2ab89480dd010700000000000000"
    "0010000000000000800000000e000000000000000000000000000000000000000000000000000000"
    "0000000000000000e221a700000000006200650065002e0064006100740000007000000000000000"
    "6aff2ab89480dd01b3892bb89480dd016aff2ab89480dd016aff2ab89480dd010000000000000000"
    "00000000000000001000000006000000000000000000000000000000000000000000000000000000"
    "0000000000000000f321a7000000000073007500620000007000000000000000e1c84dc39480dd01"
    "e1c84dc39480dd01e1c84dc39480dd01e1c84dc39480dd0103000000000000000010000000000000"
    "80000000080000000000000000000000000000000000000000000000000000000000000000000000"
    "c821a7000000000061002e006d00640000000000000000006aff2ab89480dd01242609f39480dd01"
    "6aff2ab89480dd016aff2ab89480dd0106000000000000000010000000000000800000000a000000"
    "0000000000000000000000000000000000000000000000000000000000000000d321a70000000000"
    "61002e00740078007400";

TEST(QueryDirectory, RequestMatchesCapture) {
  Bytes captured = from_hex(kCapturedRequest);
  QueryDirectoryRequest req;
  req.FileInformationClass = FILE_ID_BOTH_DIRECTORY_INFORMATION;
  req.FileId = {0x50f80cbd, 0x82a9365f};
  req.FileName = "*";
  req.OutputBufferLength = 0xFFFF;
  Bytes b(captured.begin(), captured.begin() + 64);
  ByteWriter w(b);
  ASSERT_TRUE(encode_query_directory_request(req, w).ok());
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "2100"                // StructureSize = 33
            "25"                  // FileInformationClass = FileIdBothDirectoryInformation
            "00"                  // Flags
            "00000000"            // FileIndex
            "bd0cf85000000000"    // FileId.Persistent
            "5f36a98200000000"    // FileId.Volatile
            "6000"                // FileNameOffset = 0x60
            "0200"                // FileNameLength
            "ffff0000"            // OutputBufferLength
            "2a00");              // "*"
  EXPECT_EQ(to_hex(b), to_hex(captured));
  auto d = decode_query_directory_request(captured);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->FileName, "*");
  EXPECT_EQ(d->FileInformationClass, FILE_ID_BOTH_DIRECTORY_INFORMATION);
  EXPECT_EQ(d->OutputBufferLength, 0xFFFFu);
}

TEST(QueryDirectory, DecodesCapturedListing) {
  Bytes msg = from_hex(kCapturedResponse);
  auto out = query_directory_output(msg);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->size(), 0x2aau);
  EXPECT_EQ(out->data(), msg.data() + 0x48);
  auto entries = decode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, *out);
  ASSERT_TRUE(entries.ok()) << entries.error().message();
  ASSERT_EQ(entries->size(), 6u);
  std::vector<std::string> names;
  for (auto& e : *entries) names.push_back(e.FileName);
  EXPECT_EQ(names, (std::vector<std::string>{".", "..", "bee.dat", "sub", "a.md", "a.txt"}));
  const DirEntry& bee = (*entries)[2];
  EXPECT_EQ(bee.EndOfFile, 7u);
  EXPECT_EQ(bee.AllocationSize, 4096u);
  EXPECT_EQ(bee.FileAttributes, FILE_ATTRIBUTE_NORMAL);
  EXPECT_EQ(bee.FileId, 0xa721e2u);
  EXPECT_EQ(bee.CreationTime, 0x01dd8094b82aff6aull);
  EXPECT_EQ((*entries)[3].FileAttributes, FILE_ATTRIBUTE_DIRECTORY);
  EXPECT_EQ((*entries)[5].EndOfFile, 6u);
  EXPECT_EQ((*entries)[5].FileId, 0xa721d3u);

  // Re-encoding the entries gives Samba's buffer back.
  auto enc = encode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, *entries);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(to_hex(*enc), to_hex(*out));

  auto copy = decode_query_directory_response(msg);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->OutputBuffer.size(), 0x2aau);
}

TEST(QueryDirectory, ResponseRoundTrip) {
  QueryDirectoryResponse r{from_hex("0102030405060708")};
  Bytes b = encoded(r, encode_query_directory_response);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "0900"        // StructureSize = 9
            "4800"        // OutputBufferOffset = 0x48
            "08000000"    // OutputBufferLength
            "0102030405060708");
  auto d = decode_query_directory_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->OutputBuffer, r.OutputBuffer);
}

TEST(QueryDirectory, RequestFlagsAndEmptyPattern) {
  QueryDirectoryRequest req;
  req.FileInformationClass = FILE_NAMES_INFORMATION;
  req.Flags = SMB2_RESTART_SCANS | SMB2_RETURN_SINGLE_ENTRY | SMB2_INDEX_SPECIFIED | SMB2_REOPEN;
  req.FileIndex = 9;
  Bytes b = encoded(req, encode_query_directory_request);
  EXPECT_EQ(b.size(), 64u + 33u);
  auto d = decode_query_directory_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Flags, 0x17);
  EXPECT_EQ(d->FileIndex, 9u);
  EXPECT_EQ(d->FileName, "");
}

TEST(QueryDirectory, RejectsMalformed) {
  const Bytes good = from_hex(kCapturedResponse);
  auto bad_output = refuses(good, query_directory_output);
  auto bad_response = refuses(good, decode_query_directory_response);
  auto bad = [&](auto mutate) {
    bad_output(mutate);
    bad_response(mutate);
  };
  bad([](Bytes& b) { b.resize(64 + 7); });
  bad([](Bytes& b) { b.resize(b.size() - 1); });
  bad([](Bytes& b) { b[64] = std::byte{8}; });
  bad([](Bytes& b) { store_le16(b.data() + 66, 0x40); });        // offset in the fixed part
  bad([](Bytes& b) { store_le32(b.data() + 68, 0xFFFFFFFF); });  // length

  Bytes req = from_hex(kCapturedRequest);
  Bytes r = req;
  store_le16(r.data() + 64 + 26, 3);  // odd FileNameLength
  EXPECT_FALSE(decode_query_directory_request(r).ok());
  r = req;
  store_le16(r.data() + 64 + 26, 4);  // past the end
  EXPECT_FALSE(decode_query_directory_request(r).ok());
  r = req;
  store_le16(r.data() + 64 + 24, 0x20);  // offset in the header
  EXPECT_FALSE(decode_query_directory_request(r).ok());
}

}  // namespace
}  // namespace smbkit::proto
