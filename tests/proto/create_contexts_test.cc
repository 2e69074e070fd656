#include "proto/create_contexts.h"

#include <gtest/gtest.h>

namespace smbkit::proto {
namespace {

Bytes encode_chain(const std::vector<CreateContext>& cs) {
  Bytes b;
  ByteWriter w(b);
  auto r = encode_create_contexts(cs, w);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(b.size(), create_contexts_size(cs));
  return b;
}

Guid16 guid(uint8_t first) {
  Guid16 g{};
  for (size_t i = 0; i < g.size(); i++) g[i] = std::byte(static_cast<uint8_t>(first + i));
  return g;
}

// MS-SMB2 2.2.13.2: two contexts without data, as a client asks for maximal
// access and the on-disk id. Same bytes as the chain impacket sent to Samba
// in create_test.cc's captured request.
TEST(CreateContexts, RequestChainByteExact) {
  std::vector<CreateContext> cs{to_create_context(CreateQueryMaximalAccessRequest{}),
                                to_create_context(CreateQueryOnDiskIdRequest{})};
  Bytes b = encode_chain(cs);
  EXPECT_EQ(to_hex(b),
            "18000000"   // Next = 24: 16 + 4-byte name, padded to 8
            "1000"       // NameOffset = 16
            "0400"       // NameLength = 4
            "0000"       // Reserved
            "0000"       // DataOffset = 0 (no data)
            "00000000"   // DataLength
            "4d784163"   // "MxAc"
            "00000000"   // padding to the next context
            "00000000"   // Next = 0: last
            "1000" "0400" "0000" "0000" "00000000"
            "51466964");  // "QFid", no trailing padding
  auto d = decode_create_contexts(b);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(*d, cs);
}

// MS-SMB2 2.2.14.2.5: a context with data; Data starts at the 8-byte
// boundary after the name.
TEST(CreateContexts, DataLayoutByteExact) {
  CreateQueryMaximalAccessResponse mx{0, 0x001F01FF};
  Bytes b = encode_chain({to_create_context(mx)});
  EXPECT_EQ(to_hex(b),
            "00000000"   // Next
            "1000"       // NameOffset
            "0400"       // NameLength
            "0000"       // Reserved
            "1800"       // DataOffset = 24
            "08000000"   // DataLength = 8
            "4d784163"   // "MxAc"
            "00000000"   // pad to 24
            "00000000"   // QueryStatus = STATUS_SUCCESS
            "ff011f00");  // MaximalAccess
  auto d = decode_create_contexts(b);
  ASSERT_TRUE(d.ok());
  auto m = decode_maximal_access_response((*d)[0].Data);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, mx);
}

TEST(CreateContexts, EmptyChain) {
  EXPECT_TRUE(encode_chain({}).empty());
  auto d = decode_create_contexts({});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->empty());
}

TEST(CreateContexts, AllTypedRoundTrip) {
  CreateLease l1;
  l1.LeaseKey = guid(1);
  l1.LeaseState = SMB2_LEASE_READ_CACHING | SMB2_LEASE_HANDLE_CACHING;
  CreateLease l2 = l1;
  l2.V2 = true;
  l2.LeaseFlags = SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET;
  l2.ParentLeaseKey = guid(0x40);
  l2.Epoch = 3;
  CreateDurableHandleRequestV2 dh2q{60000, SMB2_DHANDLE_FLAG_PERSISTENT, guid(0x80)};
  CreateDurableHandleReconnectV2 dh2c{FileId{1, 2}, guid(0x90), SMB2_DHANDLE_FLAG_PERSISTENT};
  CreateDurableHandleReconnect dhnc{FileId{7, 8}};
  CreateQueryMaximalAccessRequest mxq{true, 0x01D0000000000001ull};
  CreateAllocationSize alsi{1 << 20};
  CreateTimewarpToken twrp{0x01D5000000000000ull};
  std::vector<CreateContext> cs{
      to_create_context(mxq),  to_create_context(l1),   to_create_context(l2),
      to_create_context(dh2q), to_create_context(dh2c), to_create_context(dhnc),
      to_create_context(CreateDurableHandleRequest{}),  to_create_context(alsi),
      to_create_context(twrp), to_create_context(CreateQueryOnDiskIdResponse{5, 6}),
      to_create_context(CreateDurableHandleResponseV2{1000, 0}),
      to_create_context(CreateDurableHandleResponse{})};
  Bytes b = encode_chain(cs);
  auto d = decode_create_contexts(b);
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_EQ(*d, cs);

  EXPECT_EQ(*decode_maximal_access_request((*d)[0].Data), mxq);
  EXPECT_EQ(*decode_lease((*d)[1].Data), l1);
  EXPECT_EQ(*decode_lease((*d)[2].Data), l2);
  EXPECT_EQ(*decode_durable_handle_request_v2((*d)[3].Data), dh2q);
  EXPECT_EQ(*decode_durable_handle_reconnect_v2((*d)[4].Data), dh2c);
  EXPECT_EQ(*decode_durable_handle_reconnect((*d)[5].Data), dhnc);
  EXPECT_TRUE(decode_durable_handle_request((*d)[6].Data).ok());
  EXPECT_EQ(*decode_allocation_size((*d)[7].Data), alsi);
  EXPECT_EQ(*decode_timewarp_token((*d)[8].Data), twrp);
  EXPECT_EQ(decode_on_disk_id_response((*d)[9].Data)->VolumeId, 6u);
  EXPECT_EQ(decode_durable_handle_response_v2((*d)[10].Data)->Timeout, 1000u);
  EXPECT_TRUE(decode_durable_handle_response((*d)[11].Data).ok());

  const CreateContext* dh = find_create_context(*d, SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2);
  ASSERT_NE(dh, nullptr);
  EXPECT_EQ(dh->Data.size(), 36u);
  EXPECT_EQ(find_create_context(*d, "XXXX"), nullptr);
}

// MS-SMB2 2.2.13.2.10: SMB2_CREATE_REQUEST_LEASE_V2, field by field.
TEST(CreateContexts, LeaseV2ByteExact) {
  CreateLease l;
  l.V2 = true;
  l.LeaseKey = guid(0x00);
  l.LeaseState = SMB2_LEASE_READ_CACHING | SMB2_LEASE_WRITE_CACHING;
  l.LeaseFlags = SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET;
  l.ParentLeaseKey = guid(0x10);
  l.Epoch = 0x0102;
  EXPECT_EQ(to_hex(to_create_context(l).Data),
            "000102030405060708090a0b0c0d0e0f"   // LeaseKey
            "05000000"                           // LeaseState = R|W
            "04000000"                           // Flags = PARENT_LEASE_KEY_SET
            "0000000000000000"                   // LeaseDuration
            "101112131415161718191a1b1c1d1e1f"   // ParentLeaseKey
            "0201"                               // Epoch
            "0000");                             // Reserved
  EXPECT_EQ(to_create_context(CreateLease{}).Data.size(), 32u);
}

// MS-SMB2 2.2.13.2.11: SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2, field by field.
TEST(CreateContexts, DurableV2ByteExact) {
  CreateDurableHandleRequestV2 r{0x7530, SMB2_DHANDLE_FLAG_PERSISTENT, guid(0xA0)};
  CreateContext c = to_create_context(r);
  EXPECT_EQ(c.Name, "DH2Q");
  EXPECT_EQ(to_hex(c.Data),
            "30750000"                          // Timeout = 30000 ms
            "02000000"                          // Flags = PERSISTENT
            "0000000000000000"                  // Reserved
            "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");  // CreateGuid
}

Bytes two_contexts() {
  return encode_chain({to_create_context(CreateQueryMaximalAccessResponse{0, 1}),
                       to_create_context(CreateQueryOnDiskIdResponse{2, 3})});
}

TEST(CreateContexts, RejectsMalformedChains) {
  const Bytes good = two_contexts();
  ASSERT_TRUE(decode_create_contexts(good).ok());
  auto bad = [&](auto mutate) {
    Bytes b = good;
    mutate(b);
    auto r = decode_create_contexts(b);
    EXPECT_FALSE(r.ok());
    if (!r.ok()) {
      EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
    }
  };
  // Truncated inside the first header and inside the second context.
  bad([](Bytes& b) { b.resize(10); });
  bad([](Bytes& b) { b.resize(b.size() - 1); });
  // Next not a multiple of 8.
  bad([](Bytes& b) { store_le32(b.data(), 33); });
  // Next pointing back into its own header (the only "backwards" an
  // unsigned relative offset can express), and zero-length progress.
  bad([](Bytes& b) { store_le32(b.data(), 8); });
  // Next past the end, and one that would wrap a 32-bit position.
  bad([](Bytes& b) { store_le32(b.data(), static_cast<uint32_t>(b.size() + 8)); });
  bad([](Bytes& b) { store_le32(b.data(), 0xFFFFFFF8u); });
  // Next pointing exactly at the end leaves no room for the next context.
  bad([](Bytes& b) { store_le32(b.data(), static_cast<uint32_t>(b.size() + 7) & ~7u); });
  // NameOffset/NameLength outside the context; NameLength 0; NameOffset
  // inside the header.
  bad([](Bytes& b) { store_le16(b.data() + 6, 200); });
  bad([](Bytes& b) { store_le16(b.data() + 6, 0); });
  bad([](Bytes& b) { store_le16(b.data() + 4, 2); });
  // DataOffset/DataLength outside the context (the first context is 32
  // bytes: data may not run into the second one), unaligned DataOffset.
  bad([](Bytes& b) { store_le32(b.data() + 12, 9); });
  bad([](Bytes& b) { store_le16(b.data() + 10, 0xFFF8); });
  bad([](Bytes& b) { store_le16(b.data() + 10, 20); });
  // The last context's data running past the region.
  bad([](Bytes& b) { store_le32(b.data() + 32 + 12, 33); });
}

TEST(CreateContexts, TypedDecodersCheckSizes) {
  Bytes seven(7), nine(9);
  EXPECT_FALSE(decode_maximal_access_request(seven).ok());
  EXPECT_FALSE(decode_maximal_access_response(nine).ok());
  EXPECT_FALSE(decode_on_disk_id_response(Bytes(31)).ok());
  EXPECT_FALSE(decode_lease(Bytes(33)).ok());
  EXPECT_FALSE(decode_lease(Bytes(51)).ok());
  EXPECT_FALSE(decode_durable_handle_request(Bytes(15)).ok());
  EXPECT_FALSE(decode_durable_handle_response(Bytes(0)).ok());
  EXPECT_FALSE(decode_durable_handle_reconnect(Bytes(17)).ok());
  EXPECT_FALSE(decode_durable_handle_request_v2(Bytes(36)).ok());
  EXPECT_FALSE(decode_durable_handle_response_v2(Bytes(4)).ok());
  EXPECT_FALSE(decode_durable_handle_reconnect_v2(Bytes(32)).ok());
  EXPECT_FALSE(decode_allocation_size(seven).ok());
  EXPECT_FALSE(decode_timewarp_token(nine).ok());
  auto mx = decode_maximal_access_request({});
  ASSERT_TRUE(mx.ok());
  EXPECT_FALSE(mx->HasTimestamp);
}

TEST(CreateContexts, EncoderRejectsBadInput) {
  Bytes b;
  ByteWriter w(b);
  std::vector<CreateContext> unnamed{{"", Bytes(1)}};
  EXPECT_FALSE(encode_create_contexts(unnamed, w).ok());
  b.push_back(std::byte{0});  // misaligned start
  std::vector<CreateContext> ok{{"MxAc", {}}};
  EXPECT_FALSE(encode_create_contexts(ok, w).ok());
}

}  // namespace
}  // namespace smbkit::proto
