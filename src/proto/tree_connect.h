// MS-SMB2 2.2.9 / 2.2.10: SMB2 TREE_CONNECT request and response.
#pragma once

#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.9: Flags (3.1.1; Reserved before).
enum TreeConnectFlags : uint16_t {
  SMB2_TREE_CONNECT_FLAG_CLUSTER_RECONNECT = 0x0001,
  SMB2_TREE_CONNECT_FLAG_REDIRECT_TO_OWNER = 0x0002,
  SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT = 0x0004,
};

// MS-SMB2 2.2.10: ShareType.
enum ShareType : uint8_t {
  SMB2_SHARE_TYPE_DISK = 0x01,
  SMB2_SHARE_TYPE_PIPE = 0x02,
  SMB2_SHARE_TYPE_PRINT = 0x03,
};

// MS-SMB2 2.2.10: ShareFlags. The caching policy is a 2-bit field
// (SMB2_SHAREFLAG_CACHING_MASK), not independent bits.
enum ShareFlags : uint32_t {
  SMB2_SHAREFLAG_MANUAL_CACHING = 0x00000000,
  SMB2_SHAREFLAG_AUTO_CACHING = 0x00000010,
  SMB2_SHAREFLAG_VDO_CACHING = 0x00000020,
  SMB2_SHAREFLAG_NO_CACHING = 0x00000030,
  SMB2_SHAREFLAG_CACHING_MASK = 0x00000030,
  SMB2_SHAREFLAG_DFS = 0x00000001,
  SMB2_SHAREFLAG_DFS_ROOT = 0x00000002,
  SMB2_SHAREFLAG_RESTRICT_EXCLUSIVE_OPENS = 0x00000100,
  SMB2_SHAREFLAG_FORCE_SHARED_DELETE = 0x00000200,
  SMB2_SHAREFLAG_ALLOW_NAMESPACE_CACHING = 0x00000400,
  SMB2_SHAREFLAG_ACCESS_BASED_DIRECTORY_ENUM = 0x00000800,
  SMB2_SHAREFLAG_FORCE_LEVELII_OPLOCK = 0x00001000,
  SMB2_SHAREFLAG_ENABLE_HASH_V1 = 0x00002000,
  SMB2_SHAREFLAG_ENABLE_HASH_V2 = 0x00004000,
  SMB2_SHAREFLAG_ENCRYPT_DATA = 0x00008000,
  SMB2_SHAREFLAG_IDENTITY_REMOTING = 0x00040000,
  SMB2_SHAREFLAG_COMPRESS_DATA = 0x00100000,
  SMB2_SHAREFLAG_ISOLATED_TRANSPORT = 0x00200000,
};

// MS-SMB2 2.2.10: Capabilities.
enum ShareCapabilities : uint32_t {
  SMB2_SHARE_CAP_DFS = 0x00000008,
  SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY = 0x00000010,
  SMB2_SHARE_CAP_SCALEOUT = 0x00000020,
  SMB2_SHARE_CAP_CLUSTER = 0x00000040,
  SMB2_SHARE_CAP_ASYMMETRIC = 0x00000080,
  SMB2_SHARE_CAP_REDIRECT_TO_OWNER = 0x00000100,
};

// MS-SMB2 2.2.9.
struct TreeConnectRequest {
  uint16_t Flags = 0;  // SMB2_TREE_CONNECT_FLAG_*
  std::string Path;    // UTF-8 "\\server\share"
  bool operator==(const TreeConnectRequest&) const = default;
};

// MS-SMB2 2.2.10.
struct TreeConnectResponse {
  uint8_t ShareType = 0;  // SMB2_SHARE_TYPE_*
  uint32_t ShareFlags = 0;
  uint32_t Capabilities = 0;
  uint32_t MaximalAccess = 0;  // access mask
  bool operator==(const TreeConnectResponse&) const = default;
};

// MS-SMB2 2.2.9: appends the body after the 64-byte header already in w.
// Tree connect contexts (2.2.9.1 extension) are not supported: Flags with
// SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT is refused.
Result<void> encode_tree_connect_request(const TreeConnectRequest& req, ByteWriter& w);
// MS-SMB2 2.2.9: msg is the whole message, header first. With the
// extension flag, Path is still read through PathOffset/PathLength and the
// extension's contexts are skipped.
Result<TreeConnectRequest> decode_tree_connect_request(ByteView msg);
// MS-SMB2 2.2.10.
Result<void> encode_tree_connect_response(const TreeConnectResponse& rsp, ByteWriter& w);
// MS-SMB2 2.2.10.
Result<TreeConnectResponse> decode_tree_connect_response(ByteView msg);

}  // namespace smbkit::proto
