// The answer to `smbkitd status`: connections and open files, as text for
// a person (one line per open, like smbstatus -L).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/file_service.h"

namespace smbkit::server {

std::string format_status(const std::vector<FileService::OpenStatus>& opens, uint32_t connections);

}  // namespace smbkit::server
