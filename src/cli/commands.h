#pragma once

#include <string>
#include <vector>

#include "cli/context.h"
#include "cli/output.h"

namespace smbkit::cli {

Result<void> cmd_ls(Context& c, const std::string& url, const ListFormat& format);
Result<void> cmd_stat(Context& c, const std::string& url, bool json);
Result<void> cmd_cat(Context& c, const std::string& url);
Result<void> cmd_get(Context& c, const std::string& url, const std::string& local);
Result<void> cmd_put(Context& c, const std::string& local, const std::string& url);
Result<void> cmd_cp(Context& c, const std::string& src, const std::string& dst, bool recursive);
// put - URL: standard input.
Result<void> cmd_rm(Context& c, const std::string& url, bool recursive = false);
Result<void> cmd_mkdir(Context& c, const std::string& url, bool parents = false);
Result<void> cmd_rmdir(Context& c, const std::string& url);
Result<void> cmd_mv(Context& c, const std::string& from, const std::string& to);
Result<void> cmd_df(Context& c, const std::string& url, bool json);

}  // namespace smbkit::cli
