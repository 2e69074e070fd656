// Protocol constants with their MS-SMB2 names.
#pragma once

#include <cstdint>

namespace smbkit::proto {

// MS-SMB 2.2.3.1: an SMB1 header, which a multi-protocol NEGOTIATE
// (MS-SMB2 3.3.5.3) starts with.
inline constexpr uint32_t kSmb1ProtocolId = 0x424D53FF;  // 0xFF 'S' 'M' 'B'
inline constexpr size_t kSmb1HeaderSize = 32;
inline constexpr uint8_t kSmb1ComNegotiate = 0x72;

// MS-SMB2 2.2.1: ProtocolId values.
inline constexpr uint32_t kSmb2ProtocolId = 0x424D53FE;       // 0xFE 'S' 'M' 'B'
inline constexpr uint32_t kTransformProtocolId = 0x424D53FD;  // 0xFD 'S' 'M' 'B'
inline constexpr uint32_t kCompressionProtocolId = 0x424D53FC;
inline constexpr size_t kHeaderSize = 64;

// MS-SMB2 2.2.1.2: Command.
enum Command : uint16_t {
  SMB2_NEGOTIATE = 0x0000,
  SMB2_SESSION_SETUP = 0x0001,
  SMB2_LOGOFF = 0x0002,
  SMB2_TREE_CONNECT = 0x0003,
  SMB2_TREE_DISCONNECT = 0x0004,
  SMB2_CREATE = 0x0005,
  SMB2_CLOSE = 0x0006,
  SMB2_FLUSH = 0x0007,
  SMB2_READ = 0x0008,
  SMB2_WRITE = 0x0009,
  SMB2_LOCK = 0x000A,
  SMB2_IOCTL = 0x000B,
  SMB2_CANCEL = 0x000C,
  SMB2_ECHO = 0x000D,
  SMB2_QUERY_DIRECTORY = 0x000E,
  SMB2_CHANGE_NOTIFY = 0x000F,
  SMB2_QUERY_INFO = 0x0010,
  SMB2_SET_INFO = 0x0011,
  SMB2_OPLOCK_BREAK = 0x0012,
};
const char* command_name(uint16_t command);

// MS-SMB2 2.2.1.2: Flags.
enum HeaderFlags : uint32_t {
  SMB2_FLAGS_SERVER_TO_REDIR = 0x00000001,
  SMB2_FLAGS_ASYNC_COMMAND = 0x00000002,
  SMB2_FLAGS_RELATED_OPERATIONS = 0x00000004,
  SMB2_FLAGS_SIGNED = 0x00000008,
  SMB2_FLAGS_PRIORITY_MASK = 0x00000070,
  SMB2_FLAGS_DFS_OPERATIONS = 0x10000000,
  SMB2_FLAGS_REPLAY_OPERATION = 0x20000000,
};

// MS-SMB2 2.2.3: dialect revisions.
enum Dialect : uint16_t {
  SMB2_DIALECT_0202 = 0x0202,
  SMB2_DIALECT_0210 = 0x0210,
  SMB2_DIALECT_0300 = 0x0300,
  SMB2_DIALECT_0302 = 0x0302,
  SMB2_DIALECT_0311 = 0x0311,
  SMB2_DIALECT_WILDCARD = 0x02FF,
};

// MS-SMB2 2.2.3: SecurityMode.
enum SecurityMode : uint16_t {
  SMB2_NEGOTIATE_SIGNING_ENABLED = 0x0001,
  SMB2_NEGOTIATE_SIGNING_REQUIRED = 0x0002,
};

// MS-SMB2 2.2.3: Capabilities.
enum Capabilities : uint32_t {
  SMB2_GLOBAL_CAP_DFS = 0x00000001,
  SMB2_GLOBAL_CAP_LEASING = 0x00000002,
  SMB2_GLOBAL_CAP_LARGE_MTU = 0x00000004,
  SMB2_GLOBAL_CAP_MULTI_CHANNEL = 0x00000008,
  SMB2_GLOBAL_CAP_PERSISTENT_HANDLES = 0x00000010,
  SMB2_GLOBAL_CAP_DIRECTORY_LEASING = 0x00000020,
  SMB2_GLOBAL_CAP_ENCRYPTION = 0x00000040,
  SMB2_GLOBAL_CAP_NOTIFICATIONS = 0x00000080,
};

// MS-SMB2 2.2.3.1.1 / 2.2.3.1.2 / 2.2.3.1.7: algorithm ids.
enum HashAlgorithm : uint16_t { SHA_512 = 0x0001 };
enum Cipher : uint16_t {
  CIPHER_NONE = 0x0000,
  AES_128_CCM = 0x0001,
  AES_128_GCM = 0x0002,
  AES_256_CCM = 0x0003,
  AES_256_GCM = 0x0004,
};
enum SigningAlgorithm : uint16_t {
  HMAC_SHA256 = 0x0000,
  AES_CMAC = 0x0001,
  AES_GMAC = 0x0002,
};

}  // namespace smbkit::proto
