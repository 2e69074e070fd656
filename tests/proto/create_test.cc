#include "proto/create.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// Captured with a relay between impacket (SMB 2.1) and Samba 4.17 smbd:
// CREATE "dir\a.txt" with MxAc and QFid request contexts. Header then body.
const char* kCapturedRequest =
    "fe534d42400001000000000005007f000000000000000000040000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "39000000020000000000000000000000000000000000000081000000000000000100000001000000"
    "4000000078001200900000002c0000006400690072005c0061002e00740078007400000000000000"
    "180000001000040000000000000000004d7841630000000000000000100004000000000000000000"
    "51466964";

// Samba's response to it: FILE_OPENED, MxAc and QFid response contexts.
const char* kCapturedResponse =
    "fe534d42400001000000000005007f000100000000000000040000000000000000000000f43152874f363b85"
    "0000000000000000000000000000000000000000"
    "59000000010000006aff2ab89480dd016aff2ab89480dd016aff2ab89480dd016aff2ab89480dd01"
    "001000000000000006000000000000008000000000000000e84e31e0000000008409a8ba00000000"
    "9800000058000000200000001000040000001800080000004d78416300000000000000009f011700"
    "000000001000040000001800200000005146696400000000d321a7000000000000fe000000000000"
    "00000000000000000000000000000000";

CreateRequest captured_request_struct() {
  CreateRequest req;
  req.ImpersonationLevel = SMB2_IMPERSONATION_IMPERSONATION;
  req.DesiredAccess = FILE_READ_DATA | FILE_READ_ATTRIBUTES;
  req.ShareAccess = FILE_SHARE_READ;
  req.CreateDisposition = FILE_OPEN;
  req.CreateOptions = FILE_NON_DIRECTORY_FILE;
  req.Name = "dir\\a.txt";
  req.CreateContexts = {to_create_context(CreateQueryMaximalAccessRequest{}),
                        to_create_context(CreateQueryOnDiskIdRequest{})};
  return req;
}

TEST(Create, RequestMatchesCapture) {
  Bytes captured = from_hex(kCapturedRequest);
  expect_reencodes(captured, captured_request_struct(), encode_create_request);

  auto d = decode_create_request(captured);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->Name, "dir\\a.txt");
  EXPECT_EQ(d->DesiredAccess, FILE_READ_DATA | FILE_READ_ATTRIBUTES);
  EXPECT_EQ(d->CreateOptions, FILE_NON_DIRECTORY_FILE);
  ASSERT_EQ(d->CreateContexts.size(), 2u);
  EXPECT_EQ(d->CreateContexts[0].Name, "MxAc");
  EXPECT_EQ(d->CreateContexts[1].Name, "QFid");
}

// MS-SMB2 2.2.13, field by field: the share root (empty name) without
// contexts still carries one Buffer byte.
TEST(Create, EmptyNameByteExact) {
  CreateRequest req;
  req.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_LEASE;
  req.DesiredAccess = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  req.FileAttributes = FILE_ATTRIBUTE_DIRECTORY;
  req.ShareAccess = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  req.CreateDisposition = FILE_OPEN_IF;
  req.CreateOptions = FILE_DIRECTORY_FILE;
  Bytes b = encoded(req, encode_create_request, header_for(SMB2_CREATE, false));
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "3900"               // StructureSize = 57
            "00"                 // SecurityFlags
            "ff"                 // RequestedOplockLevel = LEASE
            "02000000"           // ImpersonationLevel = Impersonation
            "0000000000000000"   // SmbCreateFlags
            "0000000000000000"   // Reserved
            "80001000"           // DesiredAccess = READ_ATTRIBUTES|SYNCHRONIZE
            "10000000"           // FileAttributes = DIRECTORY
            "07000000"           // ShareAccess = R|W|D
            "03000000"           // CreateDisposition = FILE_OPEN_IF
            "01000000"           // CreateOptions = FILE_DIRECTORY_FILE
            "7800"               // NameOffset = 0x78
            "0000"               // NameLength = 0
            "00000000"           // CreateContextsOffset
            "00000000"           // CreateContextsLength
            "00");               // the one Buffer byte
  auto d = decode_create_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Name, "");
  EXPECT_EQ(d->RequestedOplockLevel, SMB2_OPLOCK_LEVEL_LEASE);
  EXPECT_TRUE(d->CreateContexts.empty());
}

TEST(Create, ContextsAlignedAfterName) {
  CreateRequest req;
  req.Name = "x";  // 2 bytes: contexts must start at 0x80, not 0x7a
  CreateLease lease;
  lease.V2 = true;
  req.CreateContexts = {to_create_context(lease)};
  Bytes b = encoded(req, encode_create_request, header_for(SMB2_CREATE, false));
  EXPECT_EQ(load_le32(b.data() + 64 + 48), 0x80u);  // CreateContextsOffset
  auto d = decode_create_request(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Name, "x");
  ASSERT_EQ(d->CreateContexts.size(), 1u);
  EXPECT_TRUE(decode_lease(d->CreateContexts[0].Data)->V2);
}

TEST(Create, DecodesCapturedResponse) {
  Bytes msg = from_hex(kCapturedResponse);
  auto d = decode_create_response(msg);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  EXPECT_EQ(d->CreateAction, FILE_OPENED);
  EXPECT_EQ(d->CreationTime, 0x01dd8094b82aff6aull);
  EXPECT_EQ(d->AllocationSize, 4096u);
  EXPECT_EQ(d->EndofFile, 6u);  // "hello\n"
  EXPECT_EQ(d->FileAttributes, FILE_ATTRIBUTE_NORMAL);
  EXPECT_EQ(d->FileId, (FileId{0xe0314ee8, 0xbaa80984}));
  ASSERT_EQ(d->CreateContexts.size(), 2u);
  auto mx = decode_maximal_access_response(
      find_create_context(d->CreateContexts, SMB2_CREATE_QUERY_MAXIMAL_ACCESS_RESPONSE)->Data);
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(mx->QueryStatus, STATUS_SUCCESS);
  EXPECT_EQ(mx->MaximalAccess, 0x0017019fu);
  auto qfid = decode_on_disk_id_response(
      find_create_context(d->CreateContexts, SMB2_CREATE_QUERY_ON_DISK_ID)->Data);
  ASSERT_TRUE(qfid.ok());
  EXPECT_EQ(qfid->DiskFileId, 0xa721d3u);
  EXPECT_EQ(qfid->VolumeId, 0xfe00u);

  // Re-encoding gives Samba's bytes back.
  expect_reencodes(msg, *d, encode_create_response);
}

TEST(Create, ResponseRoundTripWithoutContexts) {
  CreateResponse r;
  r.OplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
  r.Flags = SMB2_CREATE_FLAG_REPARSEPOINT;
  r.CreateAction = FILE_CREATED;
  r.LastWriteTime = 5;
  r.EndofFile = 9;
  r.FileId = {11, 12};
  Bytes b = encoded(r, encode_create_response, header_for(SMB2_CREATE, true));
  EXPECT_EQ(b.size(), 64 + kCreateResponseFixedSize);
  auto d = decode_create_response(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->OplockLevel, SMB2_OPLOCK_LEVEL_BATCH);
  EXPECT_EQ(d->Flags, SMB2_CREATE_FLAG_REPARSEPOINT);
  EXPECT_EQ(d->CreateAction, FILE_CREATED);
  EXPECT_EQ(d->LastWriteTime, 5u);
  EXPECT_EQ(d->FileId, (FileId{11, 12}));
}

TEST(Create, RejectsMalformedResponses) {
  auto bad = refuses(from_hex(kCapturedResponse), decode_create_response);
  bad([](Bytes& b) { b.resize(64 + 87); });            // truncated fixed part
  bad([](Bytes& b) { b.resize(b.size() - 1); });       // contexts cut short
  bad([](Bytes& b) { b[64] = std::byte{88}; });        // StructureSize
  bad([](Bytes& b) { store_le32(b.data() + 64 + 80, 0x90); });   // offset in the fixed part
  bad([](Bytes& b) { store_le32(b.data() + 64 + 80, 0x9c); });   // unaligned offset
  bad([](Bytes& b) { store_le32(b.data() + 64 + 84, 0x59); });   // length past the end
  bad([](Bytes& b) { store_le32(b.data() + 64 + 84, 0xFFFFFFFF); });
  bad([](Bytes& b) { store_le32(b.data() + 0x98, 0x08); });     // first Next backwards
  bad([](Bytes& b) { store_le32(b.data() + 0x98, 0x60); });     // first Next past the end
}

TEST(Create, RejectsMalformedRequests) {
  auto bad = refuses(from_hex(kCapturedRequest), decode_create_request);
  bad([](Bytes& b) { b.resize(64 + 55); });
  bad([](Bytes& b) { b[64] = std::byte{56}; });
  bad([](Bytes& b) { store_le16(b.data() + 64 + 46, 0x11); });   // odd NameLength
  bad([](Bytes& b) { store_le16(b.data() + 64 + 44, 0x10); });   // NameOffset in header
  bad([](Bytes& b) { store_le16(b.data() + 64 + 46, 0x200); });  // NameLength past end
  bad([](Bytes& b) { store_le32(b.data() + 64 + 52, 0x2d); });   // contexts past end
  // Invalid UTF-16 (a lone low surrogate) in the name.
  bad([](Bytes& b) { store_le16(b.data() + 0x78, 0xDC00); });
}

TEST(Create, WireHelpers) {
  Bytes b;
  ByteWriter w(b);
  encode_file_id(FileId{0x0102030405060708ull, 0x1112131415161718ull}, w);
  EXPECT_EQ(to_hex(b), "08070605040302011817161514131211");
  ByteReader r(b);
  EXPECT_EQ(decode_file_id(r), (FileId{0x0102030405060708ull, 0x1112131415161718ull}));
  EXPECT_FALSE(decode_utf16_name(Bytes(3), "t").ok());
  EXPECT_EQ(*decode_utf16_name(as_bytes(std::string_view("a\0b\0", 4)), "t"), "ab");
}

}  // namespace
}  // namespace smbkit::proto
