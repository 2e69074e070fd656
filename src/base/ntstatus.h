// NTSTATUS codes (MS-ERREF 2.3.1) and the one table that names them.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <span>
#include <string_view>

namespace smbkit {

enum : uint32_t {
#define X(name, value, meaning, err) name = value,
#include "base/ntstatus_table.inc"
#undef X
};

struct NtStatusInfo {
  uint32_t value;
  std::string_view name;     // "STATUS_BAD_NETWORK_NAME"
  std::string_view meaning;  // "no such share"
  int err;                   // errno
};

// Entry for a status, or nullptr if it is not in the table.
const NtStatusInfo* ntstatus_info(uint32_t status);
// "STATUS_X" or "NTSTATUS 0x%08x" for unknown values.
std::string ntstatus_name(uint32_t status);
// errno for a status: from the table; unknown errors map to EIO.
int ntstatus_to_errno(uint32_t status);
// The whole table, for tests and docs.
std::span<const NtStatusInfo> ntstatus_table();

// Severity bits (MS-ERREF 2.3): 0xC... is an error, 0x8... a warning.
inline bool nt_error_severity(uint32_t s) { return (s >> 30) == 3; }
inline bool nt_success(uint32_t s) { return (s >> 30) == 0; }

}  // namespace smbkit
