// MS-SMB2 2.2.2: SMB2 ERROR response, its error contexts (2.2.2.1) and the
// ErrorData formats of 2.2.2.2 that a client acts on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.2.1: ErrorId.
enum ErrorId : uint32_t {
  SMB2_ERROR_ID_DEFAULT = 0x00000000,
  SMB2_ERROR_ID_SHARE_REDIRECT = 0x72645253,
};

// MS-SMB2 2.2.2.1: one SMB2 ERROR Context response.
struct ErrorContext {
  uint32_t ErrorId = 0;
  Bytes ErrorContextData;
  bool operator==(const ErrorContext&) const = default;
};

// MS-SMB2 2.2.2. The body of every failed command: the caller picks this
// decoder from the header Status (error severity, or
// STATUS_STOPPED_ON_SYMLINK), except where a command documents a normal
// body for an error status (IOCTL copychunk, STATUS_BUFFER_OVERFLOW...).
struct ErrorResponse {
  // ErrorContextCount == 0 (SMB 2.x/3.0.x, and most 3.1.1 errors): the raw
  // ErrorData (ByteCount bytes). Decoding always fills it; encoding uses it
  // only when ErrorContexts is empty.
  Bytes ErrorData;
  // ErrorContextCount > 0 (3.1.1): the contexts ErrorData holds.
  std::vector<ErrorContext> ErrorContexts;
  bool operator==(const ErrorResponse&) const = default;
};

// MS-SMB2 2.2.2: appends the body after the 64-byte header already in w.
// An empty ErrorData is sent as the one zero byte the spec requires.
Result<void> encode_error_response(const ErrorResponse& rsp, ByteWriter& w);
// MS-SMB2 2.2.2: msg is the whole message, header first.
Result<ErrorResponse> decode_error_response(ByteView msg);

// MS-SMB2 2.2.2.2.1: Symbolic Link Error Response (STATUS_STOPPED_ON_SYMLINK).
struct SymbolicLinkErrorResponse {
  static constexpr uint32_t SYMLINK_ERROR_TAG = 0x4C4D5953;
  static constexpr uint32_t IO_REPARSE_TAG_SYMLINK = 0xA000000C;  // MS-FSCC 2.1.2.1
  static constexpr uint32_t SYMLINK_FLAG_RELATIVE = 0x00000001;   // Flags
  // Bytes (UTF-16) at the end of the opened path that were not parsed yet.
  uint16_t UnparsedPathLength = 0;
  std::string SubstituteName;  // UTF-8
  std::string PrintName;       // UTF-8
  uint32_t Flags = 0;
  bool operator==(const SymbolicLinkErrorResponse&) const = default;
};

// MS-SMB2 2.2.2.2.1: the structure alone (what ErrorData or an
// SMB2_ERROR_ID_DEFAULT context holds). Names go SubstituteName then
// PrintName in PathBuffer.
Result<Bytes> encode_symbolic_link_error_response(const SymbolicLinkErrorResponse& s);
Result<SymbolicLinkErrorResponse> decode_symbolic_link_error_response(ByteView data);

// The ErrorData a client reads for a status (MS-SMB2 2.2.2.2): the raw
// ErrorData when there are no contexts, else the SMB2_ERROR_ID_DEFAULT
// context's data. Fails if there is none.
Result<ByteView> default_error_data(const ErrorResponse& rsp);
// MS-SMB2 2.2.2.2.1 through default_error_data.
Result<SymbolicLinkErrorResponse> symbolic_link_error(const ErrorResponse& rsp);
// MS-SMB2 2.2.2.2 (STATUS_BUFFER_TOO_SMALL): the 4-byte minimum buffer length.
Result<uint32_t> buffer_too_small_length(const ErrorResponse& rsp);

}  // namespace smbkit::proto
