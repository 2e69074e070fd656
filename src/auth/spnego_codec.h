// SPNEGO (RFC 4178, MS-SPNG) token codec for SMB2 NEGOTIATE and
// SESSION_SETUP, both directions: NegTokenInit(2) and NegTokenResp encoded
// and decoded. No state: the initiator (spnego_initiator.h) and the acceptor
// (spnego_acceptor.h) build on it. Tokens are built and parsed with the
// strict DER code in der.h; field names follow RFC 4178 4.2 / MS-SPNG 2.2.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/der.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

using der::Oid;

// Mechanism OIDs seen in SMB2 NEGOTIATE security buffers.
const Oid& oid_spnego();   // 1.3.6.1.5.5.2 (RFC 4178)
const Oid& oid_ntlmssp();  // 1.3.6.1.4.1.311.2.2.10 (MS-NLMP)
const Oid& oid_krb5();     // 1.2.840.113554.1.2.2 (RFC 4121)
const Oid& oid_ms_krb5();  // 1.2.840.48018.1.2.2 (MS-KILE)
const Oid& oid_negoex();   // 1.3.6.1.4.1.311.2.2.30 (MS-NEGOEX)

// MS-SPNG 2.2.1 NegHints (only in a server's NegTokenInit2).
struct NegHints {
  std::optional<std::string> hintName;  // GeneralString, e.g.
                                        // "not_defined_in_RFC4178@please_ignore"
  std::optional<Bytes> hintAddress;
};

// RFC 4178 4.2.1 NegTokenInit / MS-SPNG 2.2.1 NegTokenInit2.
struct NegTokenInit {
  std::vector<Oid> mechTypes;
  Bytes mechTypesDer;             // the MechTypeList exactly as encoded (mechListMIC input)
  std::optional<Bytes> reqFlags;  // ContextFlags BIT STRING contents, unused
  std::optional<Bytes> mechToken;
  std::optional<NegHints> negHints;  // NegTokenInit2 [3]
  std::optional<Bytes> mechListMIC;  // NegTokenInit [3] or NegTokenInit2 [4]
};

// RFC 4178 4.2.2.
enum class NegState : uint8_t {
  accept_completed = 0,
  accept_incomplete = 1,
  reject = 2,
  request_mic = 3,
};

struct NegTokenResp {
  std::optional<NegState> negState;
  std::optional<Oid> supportedMech;
  std::optional<Bytes> responseToken;
  std::optional<Bytes> mechListMIC;
};

// The DER MechTypeList (SEQUENCE OF OBJECT IDENTIFIER) whose encoding the
// mechListMIC covers (RFC 4178 5).
Bytes encode_mech_type_list(std::span<const Oid> mech_types);

// Decodes a NegTokenInit(2) wrapped in the GSS-API InitialContextToken
// ([APPLICATION 0] { thisMech = SPNEGO OID, [0] NegTokenInit }, RFC 2743
// 3.1), as in the SMB2 NEGOTIATE response; a bare [0] token is accepted too.
Result<NegTokenInit> decode_neg_token_init(ByteView token);
// The initiator's first SESSION_SETUP token: GSS wrapper, mechTypes and an
// optional mechToken (omitted when empty).
Bytes encode_neg_token_init(std::span<const Oid> mech_types, ByteView mech_token);
// The acceptor's NEGOTIATE-response token (MS-SPNG 2.2.1, 3.2.5.2): GSS
// wrapper, NegTokenInit2 { mechTypes, negHints { hintName } }.
Bytes encode_neg_token_init2(std::span<const Oid> mech_types, std::string_view hint_name);
// The hintName MS-SPNG 3.2.5.2 says a server SHOULD send.
inline constexpr std::string_view kNegHintsNotDefined = "not_defined_in_RFC4178@please_ignore";

// Decodes [1] NegTokenResp. Unknown negState values are rejected.
Result<NegTokenResp> decode_neg_token_resp(ByteView token);
// The initiator's later tokens: responseToken and mechListMIC, each omitted
// when empty; negState is omitted as Windows and Samba clients do.
Bytes encode_neg_token_resp(ByteView response_token, ByteView mech_list_mic);
// Full form (the acceptor's tokens, tests).
Bytes encode_neg_token_resp(const NegTokenResp& resp);

}  // namespace smbkit::auth
