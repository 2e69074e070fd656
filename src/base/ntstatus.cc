#include "base/ntstatus.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace smbkit {
namespace {

constexpr NtStatusInfo kTable[] = {
#define X(name, value, meaning, err) {value, #name, meaning, err},
#include "base/ntstatus_table.inc"
#undef X
};

}  // namespace

std::span<const NtStatusInfo> ntstatus_table() {
  return {kTable, std::size(kTable)};
}

const NtStatusInfo* ntstatus_info(uint32_t status) {
  for (const auto& e : kTable)
    if (e.value == status) return &e;
  return nullptr;
}

std::string ntstatus_name(uint32_t status) {
  if (const auto* i = ntstatus_info(status)) return std::string(i->name);
  char buf[32];
  std::snprintf(buf, sizeof buf, "NTSTATUS 0x%08x", status);
  return buf;
}

int ntstatus_to_errno(uint32_t status) {
  if (const auto* i = ntstatus_info(status)) return i->err;
  return nt_success(status) ? 0 : EIO;
}

}  // namespace smbkit
