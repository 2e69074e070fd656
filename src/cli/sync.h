// smbkit sync SRC DST: one side local, the other smb://. Copies the files
// whose size or modification time differ (or, with --checksum, whose
// content does), leaves the rest alone, and with --delete removes what
// DST has that SRC does not. Many files in flight as cp -r
// (cli/tree_engine.h); per-file failures named and counted (exit 3).
#pragma once

#include <string>

#include "cli/context.h"

namespace smbkit::cli {

struct SyncOptions {
  bool del = false;       // --delete: remove extras on DST
  bool dry_run = false;   // --dry-run: print the plan, change nothing
  bool checksum = false;  // --checksum: compare SHA-256 of the content
};

Result<void> cmd_sync(Context& c, const std::string& src, const std::string& dst, const SyncOptions& o);

}  // namespace smbkit::cli
