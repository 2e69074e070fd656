// Fuzzes every session-level codec decoder (negotiate through oplock
// break). The first input byte picks the decoder, the rest is one whole
// SMB2 message (header first; the decoders do not look at the header).
// Beyond "never crash", each successful decode must survive
// encode -> decode unchanged.
#include <cstddef>
#include <cstdint>

#include "proto/cancel.h"
#include "proto/echo.h"
#include "proto/error_response.h"
#include "proto/ioctl.h"
#include "proto/logoff.h"
#include "proto/negotiate.h"
#include "proto/oplock_break.h"
#include "proto/session_setup.h"
#include "proto/tree_connect.h"
#include "proto/tree_disconnect.h"

using namespace smbkit;
using namespace smbkit::proto;

namespace {

#define CHECK(cond) \
  do {              \
    if (!(cond)) __builtin_trap(); \
  } while (0)

// decode(msg) -> encode -> decode -> equal.
template <class Decode, class Encode>
void round_trip(ByteView msg, Decode decode, Encode encode) {
  auto a = decode(msg);
  if (!a.ok()) {
    CHECK(a.error().status != 0);
    return;
  }
  Bytes out(msg.begin(), msg.begin() + kHeaderSize);
  ByteWriter w(out);
  if (!encode(*a, w).ok()) return;  // e.g. tree connect extension, refused on purpose
  auto b = decode(out);
  CHECK(b.ok());
  CHECK(*a == *b);
}

// The same for a standalone buffer (FSCTL payloads, symlink error data):
// decode(buf) -> encode -> decode -> equal; the encoder must accept it.
template <class Decode, class Encode>
void buffer_round_trip(ByteView buf, Decode decode, Encode encode) {
  auto a = decode(buf);
  if (!a.ok()) return;
  auto enc = encode(*a);
  CHECK(enc.ok());
  auto b = decode(*enc);
  CHECK(b.ok() && *a == *b);
}

template <class T>
void typed_context(const NegotiateContext& c) {
  T t;
  if (!parse_negotiate_context(c, t).ok()) return;
  auto again = make_negotiate_context(t);
  CHECK(again.ok());
  T u;
  CHECK(parse_negotiate_context(*again, u).ok());
  CHECK(t == u);
}

void contexts(const std::vector<NegotiateContext>& list) {
  for (const auto& c : list) {
    typed_context<PreauthIntegrityCapabilities>(c);
    typed_context<EncryptionCapabilities>(c);
    typed_context<CompressionCapabilities>(c);
    typed_context<NetnameNegotiateContextId>(c);
    typed_context<TransportCapabilities>(c);
    typed_context<RdmaTransformCapabilities>(c);
    typed_context<SigningCapabilities>(c);
  }
}

void error_response(ByteView msg) {
  auto a = decode_error_response(msg);
  if (!a.ok()) return;
  Bytes out(msg.begin(), msg.begin() + kHeaderSize);
  ByteWriter w(out);
  CHECK(encode_error_response(*a, w).ok());
  auto b = decode_error_response(out);
  CHECK(b.ok());
  // With contexts, ErrorData is rebuilt from them (padding may differ).
  if (a->ErrorContexts.empty()) CHECK(a->ErrorData == b->ErrorData);
  CHECK(a->ErrorContexts == b->ErrorContexts);
  if (auto data = default_error_data(*a); data.ok()) {
    // symbolic_link_error(*a) decodes exactly this.
    buffer_round_trip(*data, decode_symbolic_link_error_response,
                      encode_symbolic_link_error_response);
  }
  (void)symbolic_link_error(*a);
  (void)buffer_too_small_length(*a);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t which = data[0];
  ByteView msg(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  switch (which % 22) {
    case 0: {
      round_trip(msg, decode_negotiate_request, encode_negotiate_request);
      if (auto r = decode_negotiate_request(msg); r.ok()) contexts(r->NegotiateContexts);
      break;
    }
    case 1: {
      round_trip(msg, decode_negotiate_response, encode_negotiate_response);
      if (auto r = decode_negotiate_response(msg); r.ok()) contexts(r->NegotiateContexts);
      break;
    }
    case 2: round_trip(msg, decode_session_setup_request, encode_session_setup_request); break;
    case 3: round_trip(msg, decode_session_setup_response, encode_session_setup_response); break;
    case 4: round_trip(msg, decode_logoff_request, encode_logoff_request); break;
    case 5: round_trip(msg, decode_logoff_response, encode_logoff_response); break;
    case 6: round_trip(msg, decode_tree_connect_request, encode_tree_connect_request); break;
    case 7: round_trip(msg, decode_tree_connect_response, encode_tree_connect_response); break;
    case 8: round_trip(msg, decode_tree_disconnect_request, encode_tree_disconnect_request); break;
    case 9: round_trip(msg, decode_tree_disconnect_response, encode_tree_disconnect_response); break;
    case 10: round_trip(msg, decode_echo_request, encode_echo_request); break;
    case 11: round_trip(msg, decode_echo_response, encode_echo_response); break;
    case 12: round_trip(msg, decode_cancel_request, encode_cancel_request); break;
    case 13: error_response(msg); break;
    case 14: round_trip(msg, decode_ioctl_request, encode_ioctl_request); break;
    case 15: {
      round_trip(msg, decode_ioctl_response, encode_ioctl_response);
      // The typed FSCTL buffers straight from the input too.
      buffer_round_trip(msg, decode_validate_negotiate_info_request,
                        encode_validate_negotiate_info_request);
      buffer_round_trip(msg, decode_validate_negotiate_info_response,
                        encode_validate_negotiate_info_response);
      break;
    }
    case 16: round_trip(msg, decode_oplock_break_notification, encode_oplock_break_notification); break;
    case 17: round_trip(msg, decode_oplock_break_acknowledgment, encode_oplock_break_acknowledgment); break;
    case 18: round_trip(msg, decode_oplock_break_response, encode_oplock_break_response); break;
    case 19: round_trip(msg, decode_lease_break_notification, encode_lease_break_notification); break;
    case 20: round_trip(msg, decode_lease_break_acknowledgment, encode_lease_break_acknowledgment); break;
    case 21: {
      round_trip(msg, decode_lease_break_response, encode_lease_break_response);
      (void)oplock_break_kind(msg);
      buffer_round_trip(msg, decode_symbolic_link_error_response,
                        encode_symbolic_link_error_response);
      break;
    }
  }
  return 0;
}
