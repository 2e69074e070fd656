// How ls, stat and df print: for people (ls -l, -h) or as one JSON
// document (--json) for scripts. Names from the server are data: escaped
// for the terminal, or JSON strings (control characters as \u00XX).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"

namespace smbkit::cli {

struct ListFormat {
  bool long_format = false;  // -l: type, size, modification time
  bool human = false;        // -h: sizes in KiB, MiB, GiB
  bool json = false;         // --json: one JSON document on stdout
};

// "2026-12-02 13:27:02" in local time (ls -l, stat).
std::string local_time_text(uint64_t filetime);
// "2026-12-02T13:27:02Z" (JSON: UTC, ISO 8601).
std::string utc_time_text(uint64_t filetime);

// ls: entries sorted by name ("." and ".." left out).
void print_listing(const std::string& url, std::vector<client::FileStat>& entries, const ListFormat& f);

struct ShareEntry {
  std::string name, type, comment;
};
// ls smb://host/: the shares, as smbclient -L lists them.
void print_shares(const std::string& host, const std::vector<ShareEntry>& shares, bool json);

void print_stat(const std::string& url, const client::FileStat& s, bool json);

void print_df(const std::string& share, const client::FsStat& s, bool json);

// What cp, get, put or sync did, as one JSON document (--json): command,
// source, destination, files, bytes, skipped, failed, seconds; sync adds
// unchanged, removed, dry_run and, for a dry run, planned: [{action, path}].
struct TransferSummary {
  std::string command, source, destination;
  uint64_t files = 0, bytes = 0, skipped = 0, failed = 0, unchanged = 0, removed = 0;
  double seconds = 0;
  bool is_sync = false, dry_run = false;
  std::vector<std::pair<std::string, std::string>> planned;  // action, path
};
void print_transfer_summary(const TransferSummary& s);

}  // namespace smbkit::cli
