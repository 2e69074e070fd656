// smbkit bench URL: sequential and random READ/WRITE load on one test file
// through the asynchronous engine (Tree::request + Connection::submit),
// with exactly --qd requests in flight, every byte read verified against a
// known pattern, and MB/s, IOPS and latency percentiles per mode.
#pragma once

#include <string>
#include <vector>

#include "cli/context.h"

namespace CLI {
class App;
}

namespace smbkit::cli {

struct BenchOptions {
  std::vector<std::string> modes;  // --mode, repeatable, each may be a comma list
  std::string bs;                  // --bs; empty: 1M for seq modes, 4k for rand modes
  int qd = 16;                     // --qd: requests in flight
  std::string size = "1G";         // --size: the file size
  double time_s = 0;               // --time: seconds per mode (0: move --size bytes per mode)
  bool json = false;               // --json
  bool keep = false;               // --keep: reuse an existing file, leave it afterwards
};

// Registers the `bench` subcommand on app; URL goes to `url`.
CLI::App* add_bench_command(CLI::App& app, BenchOptions& o, std::string& url);
Result<void> cmd_bench(Context& c, const std::string& url, const BenchOptions& o);

}  // namespace smbkit::cli
