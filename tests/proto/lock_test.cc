#include "proto/lock.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// MS-SMB2 2.2.26 / 2.2.26.1, field by field.
TEST(Lock, RequestByteExact) {
  LockRequest req;
  req.LockSequenceNumber = 0x3;
  req.LockSequenceIndex = 0x5;
  req.FileId = {7, 8};
  req.Locks = {{0x1000, 0x200, SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY},
               {0, 1, SMB2_LOCKFLAG_UNLOCK}};
  Bytes b = encoded(req, encode_lock_request);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)),
            "3000"                // StructureSize = 48
            "0200"                // LockCount = 2
            "53000000"            // LockSequenceNumber 3 | LockSequenceIndex 5 << 4
            "0700000000000000"    // FileId.Persistent
            "0800000000000000"    // FileId.Volatile
            "0010000000000000"    // Locks[0].Offset
            "0002000000000000"    // Locks[0].Length
            "12000000"            // Locks[0].Flags = EXCLUSIVE | FAIL_IMMEDIATELY
            "00000000"            // Reserved
            "0000000000000000"    // Locks[1].Offset
            "0100000000000000"    // Locks[1].Length
            "04000000"            // Locks[1].Flags = UNLOCK
            "00000000");
  auto d = decode_lock_request(b);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->LockSequenceNumber, 3);
  EXPECT_EQ(d->LockSequenceIndex, 5u);
  EXPECT_EQ(d->FileId, (FileId{7, 8}));
  EXPECT_EQ(d->Locks, req.Locks);
}

TEST(Lock, Response) {
  Bytes b = encoded(LockResponse{}, encode_lock_response);
  EXPECT_EQ(to_hex(ByteView(b).subspan(64)), "0400" "0000");
  EXPECT_TRUE(decode_lock_response(b).ok());
  b[64] = std::byte{2};
  EXPECT_FALSE(decode_lock_response(b).ok());
}

TEST(Lock, RejectsMalformed) {
  LockRequest req;
  req.Locks = {{0, 1, SMB2_LOCKFLAG_SHARED_LOCK}, {5, 1, SMB2_LOCKFLAG_SHARED_LOCK}};
  Bytes good = encoded(req, encode_lock_request);
  Bytes b = good;
  b.resize(b.size() - 1);  // second element cut short
  EXPECT_FALSE(decode_lock_request(b).ok());
  b = good;
  store_le16(b.data() + 66, 3);  // LockCount larger than the elements sent
  EXPECT_FALSE(decode_lock_request(b).ok());
  store_le16(b.data() + 66, 0);  // LockCount 0
  EXPECT_FALSE(decode_lock_request(b).ok());
  store_le16(b.data() + 66, 0xFFFF);
  EXPECT_FALSE(decode_lock_request(b).ok());
  b = good;
  b[64] = std::byte{49};
  EXPECT_FALSE(decode_lock_request(b).ok());

  Bytes e = header_bytes();
  ByteWriter ew(e);
  EXPECT_FALSE(encode_lock_request(LockRequest{}, ew).ok());  // no elements
  LockRequest seq = req;
  seq.LockSequenceNumber = 16;
  EXPECT_FALSE(encode_lock_request(seq, ew).ok());
}

}  // namespace
}  // namespace smbkit::proto
