// `smbkit cp smb://… smb://…`: one remote file to another. Within one share
// the server copies (client/server_copy.h); across shares or servers the
// bytes stream through this client, one buffer at a time.
#pragma once

#include <string>

#include "cli/context.h"

namespace smbkit::cli {

Result<void> copy_remote_to_remote(Context& c, const std::string& src, const std::string& dst);

}  // namespace smbkit::cli
