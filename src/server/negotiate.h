// The server's answer to NEGOTIATE (MS-SMB2 3.3.5.4): the dialect, the
// capabilities, and on 3.1.1 the preauth, encryption and signing contexts,
// chosen from the client's offer by the server's policy. Pure: the time,
// the GUID and the salt are inputs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/negotiate.h"

namespace smbkit::server {

struct NegotiatePolicy {
  uint16_t min_dialect = 0x0202;
  uint16_t max_dialect = 0x0311;
  bool signing_required = false;
  bool encryption = true;  // offer encryption (3.0+) at all
  bool leasing = true;     // SMB2_GLOBAL_CAP_LEASING on 2.1+ ("smb2 leases")
  // SMB2_GLOBAL_CAP_MULTI_CHANNEL on 3.x ("server multi channel support").
  bool multi_channel = true;
  // 3.1.1: the ciphers and signing algorithms we take, most preferred
  // first (proto::Cipher, proto::SigningAlgorithm).
  // As Samba: GCM before CCM, 128-bit before 256-bit.
  std::vector<uint16_t> ciphers{proto::AES_128_GCM, proto::AES_128_CCM, proto::AES_256_GCM, proto::AES_256_CCM};
  std::vector<uint16_t> signing_algorithms{proto::AES_GMAC, proto::AES_CMAC, proto::HMAC_SHA256};
  uint32_t max_transact = 8 << 20, max_read = 8 << 20, max_write = 8 << 20;
  std::array<std::byte, 16> server_guid{};
  uint64_t system_time = 0;  // FILETIME now
  Bytes preauth_salt;        // 32 random bytes
  Bytes security_buffer;     // the GSS token (SPNEGO NegTokenInit2)
};

// What was settled, for the connection and the sessions on it.
struct NegotiateOutcome {
  proto::NegotiateResponse rsp;
  uint16_t dialect = 0;
  uint16_t cipher = 0;             // 0: no encryption on this connection
  uint16_t signing_algorithm = 0;  // proto::SigningAlgorithm
  bool large_mtu = false;
  // The request's fields VALIDATE_NEGOTIATE must find again (3.3.5.15.12).
  uint32_t client_capabilities = 0;
  uint16_t client_security_mode = 0;
  std::array<std::byte, 16> client_guid{};
  std::vector<uint16_t> client_dialects;
};

// MS-SMB2 3.3.5.3.1: the answer to an SMB1 multi-protocol NEGOTIATE
// (msg: the SMB1 message). "SMB 2.???" with a policy above 2.0.2 answers
// DialectRevision 0x02FF (the client then sends an SMB2 NEGOTIATE and
// nothing is settled: `dialect` is 0); "SMB 2.002" alone settles 2.0.2.
// STATUS_NOT_SUPPORTED when it names no SMB2 dialect we allow (we do not
// speak SMB1); STATUS_INVALID_PARAMETER when malformed.
Result<NegotiateOutcome> respond_to_smb1_negotiate(ByteView msg, const NegotiatePolicy& p);

// MS-SMB2 3.3.5.4. STATUS_NOT_SUPPORTED when no dialect of the client's
// is in [min_dialect, max_dialect]; STATUS_INVALID_PARAMETER for a 3.1.1
// offer without exactly one preauth context naming SHA-512.
Result<NegotiateOutcome> respond_to_negotiate(const proto::NegotiateRequest& req, const NegotiatePolicy& p);

}  // namespace smbkit::server
