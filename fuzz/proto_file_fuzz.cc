// Fuzzes every file-command decoder (CREATE..SET_INFO and CHANGE_NOTIFY,
// requests and responses, and the FILE_NOTIFY_INFORMATION list) on the
// same input, taken as one whole SMB2 message. When a decode succeeds,
// the result is re-encoded and decoded again: that must succeed too (the
// encoders accept whatever the decoders produce).
#include <cstddef>
#include <cstdint>

#include "proto/change_notify.h"
#include "proto/close.h"
#include "proto/constants.h"
#include "proto/create.h"
#include "proto/flush.h"
#include "proto/lock.h"
#include "proto/query_directory.h"
#include "proto/query_info.h"
#include "proto/read.h"
#include "proto/set_info.h"
#include "proto/write.h"

using namespace smbkit;
using namespace smbkit::proto;

namespace {

// Re-encodes `v` after a 64-byte zero header and decodes it with `dec`.
template <class T, class Enc, class Dec>
void round_trip(const T& v, Enc enc, Dec dec) {
  Bytes b(kHeaderSize);
  ByteWriter w(b);
  auto e = enc(v, w);
  if (!e.ok()) return;  // e.g. a name that is not valid UTF-8 after a lossy decode
  if (!dec(ByteView(b)).ok()) __builtin_trap();
}

template <class Dec, class Enc>
void check(ByteView msg, Dec dec, Enc enc) {
  auto d = dec(msg);
  if (d.ok()) round_trip(*d, enc, dec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView msg(reinterpret_cast<const std::byte*>(data), size);
  check(msg, decode_create_request, encode_create_request);
  check(msg, decode_create_response, encode_create_response);
  check(msg, decode_close_request, encode_close_request);
  check(msg, decode_close_response, encode_close_response);
  check(msg, decode_flush_request, encode_flush_request);
  check(msg, decode_flush_response, encode_flush_response);
  check(msg, decode_read_request, encode_read_request);
  check(msg, decode_read_response, encode_read_response);
  check(msg, decode_lock_request, encode_lock_request);
  check(msg, decode_lock_response, encode_lock_response);
  check(msg, decode_query_directory_request, encode_query_directory_request);
  check(msg, decode_query_directory_response, encode_query_directory_response);
  check(msg, decode_query_info_request, encode_query_info_request);
  check(msg, decode_query_info_response, encode_query_info_response);
  check(msg, decode_set_info_request, encode_set_info_request);
  check(msg, decode_set_info_response, encode_set_info_response);
  check(msg, decode_write_response, encode_write_response);
  check(msg, decode_change_notify_request, encode_change_notify_request);
  check(msg, decode_change_notify_response, encode_change_notify_response);
  // FILE_NOTIFY_INFORMATION: what decodes encodes and decodes to the same.
  if (auto n = decode_file_notify_information(msg); n.ok()) {
    auto e = encode_file_notify_information(*n);
    if (e.ok()) {
      auto again = decode_file_notify_information(*e);
      if (!again.ok() || *again != *n) __builtin_trap();
    }
  }

  // WRITE: the encoder writes the fixed part; the payload follows.
  if (auto w = decode_write_request(msg); w.ok()) {
    if (w->Data.size() != w->Length) __builtin_trap();
    Bytes b(kHeaderSize);
    ByteWriter bw(b);
    if (encode_write_request(*w, bw).ok()) {
      b.insert(b.end(), w->Data.begin(), w->Data.end());
      if (!decode_write_request(b).ok()) __builtin_trap();
    }
  }
  // READ: the fixed-part decoder agrees with the full one.
  if (auto f = decode_read_response_fixed(msg); f.ok()) {
    auto full = decode_read_response(msg);
    if (full.ok() != read_data_fits(*f, msg.size())) __builtin_trap();
    if (full.ok() && full->Data.size() != f->DataLength) __builtin_trap();
  }
  return 0;
}
