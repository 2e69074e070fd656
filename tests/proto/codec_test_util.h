// Helpers shared by the proto codec tests: building and patching messages,
// and the checks every codec test makes (docs/design/proto-codec.md, "Tests
// and captures"): every truncation of a valid message fails, a mutated
// field fails, a decoded capture re-encodes byte for byte.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"
#include "proto/fscc_file_info.h"  // decode_info_as
#include "proto/header.h"

namespace smbkit::proto {

// ---- building messages ------------------------------------------------------

// The 64 bytes of `h`, which every body follows.
inline Bytes header_bytes(const Header& h = {}) {
  Bytes b;
  ByteWriter w(b);
  encode_header(h, w);
  return b;
}

// A sync header for `command`; a response has SMB2_FLAGS_SERVER_TO_REDIR.
inline Bytes header_for(uint16_t command, bool response) {
  Header h;
  h.Command = command;
  if (response) h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
  return header_bytes(h);
}

// `header` followed by the body written as hex (spaces allowed).
inline Bytes with_body(Bytes header, std::string_view body_hex) {
  Bytes body = from_hex(body_hex);
  header.insert(header.end(), body.begin(), body.end());
  return header;
}

// header_for(command, response) followed by the body written as hex.
inline Bytes msg(uint16_t command, bool response, std::string_view body_hex) {
  return with_body(header_for(command, response), body_hex);
}

// `good` with the bytes of `hex` written at `at`.
inline Bytes patched(const Bytes& good, size_t at, std::string_view hex) {
  Bytes b = good;
  Bytes p = from_hex(hex);
  std::copy(p.begin(), p.end(), b.begin() + at);
  return b;
}

// `header` followed by the body `encode` writes for `value`; a failed
// encode is a test failure.
template <class T, class Encode>
Bytes encoded(const T& value, Encode&& encode, Bytes header = header_bytes()) {
  ByteWriter w(header);
  auto e = encode(value, w);
  EXPECT_TRUE(e.ok()) << e.error().message();
  return header;
}

// ---- checks -----------------------------------------------------------------

// Every proper prefix of `good`, each in a buffer of its own size (so that
// ASan sees a read past it), must be refused as malformed
// (STATUS_INVALID_NETWORK_RESPONSE). `decode` takes a ByteView and returns
// a Result.
template <class Decode>
void expect_truncations_fail(ByteView good, Decode&& decode) {
  for (size_t n = 0; n < good.size(); n++) {
    Bytes prefix(good.begin(), good.begin() + n);
    auto r = decode(ByteView(prefix));
    EXPECT_FALSE(r.ok()) << "prefix of " << n << " bytes";
    if (!r.ok()) {
      EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE) << n;
    }
  }
}

// A checker for mutated copies of `good`:
//   auto bad = refuses(good, decode_x);
//   bad([](Bytes& b) { b.pop_back(); });
// expects `decode` to refuse each mutated copy as malformed.
template <class Decode>
auto refuses(Bytes good, Decode decode) {
  return [good = std::move(good), decode](auto mutate) {
    Bytes b = good;
    mutate(b);
    auto r = decode(ByteView(b));
    EXPECT_FALSE(r.ok());
    if (!r.ok()) {
      EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
    }
  };
}

// Encodes `value` after the 64-byte header of the captured `wire`: the
// result must be `wire` again, byte for byte.
template <class T, class Encode>
void expect_reencodes(ByteView wire, const T& value, Encode&& encode) {
  Bytes out(wire.begin(), wire.begin() + kHeaderSize);
  ByteWriter w(out);
  auto e = encode(value, w);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(to_hex(out), to_hex(wire));
}

// A hand-built `value` encodes, after the header of `want` (header and
// body written field by field), to exactly `want`, which decodes to `value`
// again.
template <class T, class Encode, class Decode>
void expect_encodes_as(const T& value, const Bytes& want, Encode&& encode, Decode&& decode) {
  expect_reencodes(want, value, encode);
  auto back = decode(ByteView(want));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, value);
}

// MS-FSCC classes: encode_info(v) has `expected_size` bytes and decodes back
// to v.
template <class T>
void expect_info_round_trip(const T& v, size_t expected_size) {
  auto b = encode_info(v);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), expected_size);
  auto d = decode_info_as<T>(*b);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(*d, v);
}

// ---- commands whose body is StructureSize (4) and Reserved only -------------
// ECHO, LOGOFF, TREE_DISCONNECT and CANCEL share their tests
// (empty_body_test.cc); each command's test file instantiates them with its
// codecs and Samba captures.

struct EmptyBodyCodec {
  std::string name;  // the test name suffix, e.g. "EchoRequest"
  uint16_t command = 0;
  bool response = false;
  std::function<Result<void>(ByteWriter&)> encode;  // encodes the (empty) struct
  std::function<Result<bool>(ByteView)> decode;     // true: decoded equals the struct
  std::string_view samba_capture;                    // hex of a real message, or empty
};

template <class T>
EmptyBodyCodec empty_body_codec(std::string name, uint16_t command, bool response,
                                Result<void> (*encode)(const T&, ByteWriter&),
                                Result<T> (*decode)(ByteView), std::string_view capture = {}) {
  return EmptyBodyCodec{std::move(name), command, response,
                        [encode](ByteWriter& w) { return encode(T{}, w); },
                        [decode](ByteView m) -> Result<bool> {
                          auto r = decode(m);
                          if (!r.ok()) return r.take_error();
                          return *r == T{};
                        },
                        capture};
}

class EmptyBodyTest : public ::testing::TestWithParam<EmptyBodyCodec> {};
class EmptyBodyCaptureTest : public ::testing::TestWithParam<EmptyBodyCodec> {};

// gtest prints the parameter by its name, not as raw bytes.
inline void PrintTo(const EmptyBodyCodec& c, std::ostream* os) { *os << c.name; }

inline std::string empty_body_name(const ::testing::TestParamInfo<EmptyBodyCodec>& info) {
  return info.param.name;
}

}  // namespace smbkit::proto
