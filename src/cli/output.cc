#include "cli/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/progress.h"
#include "client/names.h"
#include "proto/types.h"

namespace smbkit::cli {

using nlohmann::json;

namespace {

std::string time_text(uint64_t ft, bool utc, const char* format) {
  if (ft == 0) return {};
  timespec ts = proto::filetime_to_timespec(ft);
  tm t{};
  if (utc) gmtime_r(&ts.tv_sec, &t);
  else localtime_r(&ts.tv_sec, &t);
  char buf[40];
  strftime(buf, sizeof buf, format, &t);
  return buf;
}

// A FILETIME of 0 means "not given": null in JSON.
json time_json(uint64_t ft) {
  std::string s = utc_time_text(ft);
  return s.empty() ? json(nullptr) : json(s);
}

// One document on stdout. A name the server sent that is not valid UTF-8
// gets U+FFFD instead of failing the whole document.
void emit(const json& j) {
  std::string s = j.dump(2, ' ', false, json::error_handler_t::replace);
  std::printf("%s\n", s.c_str());
}

json entry_json(const client::FileStat& e) {
  return json{{"name", e.name},
              {"type", e.is_dir ? "directory" : "file"},
              {"size", e.size},
              {"allocation", e.allocation},
              {"attributes", e.attributes},
              {"modified", time_json(e.write_time)}};
}

std::string size_text(uint64_t n, bool human) {
  return human ? human_bytes(static_cast<double>(n)) : std::to_string(n);
}

}  // namespace

std::string local_time_text(uint64_t ft) { return time_text(ft, false, "%Y-%m-%d %H:%M:%S"); }
std::string utc_time_text(uint64_t ft) { return time_text(ft, true, "%Y-%m-%dT%H:%M:%SZ"); }

void print_listing(const std::string& url, std::vector<client::FileStat>& v, const ListFormat& f) {
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::erase_if(v, [](const client::FileStat& e) { return e.name == "." || e.name == ".."; });
  if (f.json) {
    json entries = json::array();
    for (const auto& e : v) entries.push_back(entry_json(e));
    emit(json{{"url", url}, {"entries", std::move(entries)}});
    return;
  }
  size_t width = 0;
  if (f.long_format)
    for (const auto& e : v) width = std::max(width, size_text(e.size, f.human).size());
  for (const auto& e : v) {
    std::string name = client::escape_for_display(e.name);
    if (e.is_dir) name += '/';
    if (f.long_format)
      std::printf("%c %*s %s %s\n", e.is_dir ? 'd' : '-', static_cast<int>(width), size_text(e.size, f.human).c_str(),
                  local_time_text(e.write_time).c_str(), name.c_str());
    else
      std::printf("%s\n", name.c_str());
  }
}

void print_shares(const std::string& host, const std::vector<ShareEntry>& shares, bool json_out) {
  if (json_out) {
    json a = json::array();
    for (const auto& s : shares) a.push_back(json{{"name", s.name}, {"type", s.type}, {"comment", s.comment}});
    emit(json{{"server", host}, {"shares", std::move(a)}});
    return;
  }
  size_t width = 0;
  for (const auto& s : shares) width = std::max(width, client::escape_for_display(s.name).size());
  for (const auto& s : shares) {
    std::string line = fmt::format("{:<{}}  {:<7} {}", client::escape_for_display(s.name), width, s.type,
                                   client::escape_for_display(s.comment));
    line.erase(line.find_last_not_of(' ') + 1);
    std::printf("%s\n", line.c_str());
  }
}

void print_stat(const std::string& url, const client::FileStat& s, bool json_out) {
  if (json_out) {
    emit(json{{"url", url},
              {"type", s.is_dir ? "directory" : "file"},
              {"size", s.size},
              {"allocation", s.allocation},
              {"attributes", s.attributes},
              {"links", s.links},
              {"file_id", s.file_id},
              {"created", time_json(s.creation_time)},
              {"modified", time_json(s.write_time)},
              {"accessed", time_json(s.access_time)},
              {"changed", time_json(s.change_time)}});
    return;
  }
  std::printf(
      "  File: %s\n  Type: %s\n  Size: %llu\n  Allocated: %llu\n  Attributes: 0x%08x\n"
      "  Links: %u\n  FileId: %llu\n  Created: %s\n  Modified: %s\n  Accessed: %s\n  Changed: %s\n",
      client::escape_for_display(url).c_str(), s.is_dir ? "directory" : "regular file",
      static_cast<unsigned long long>(s.size), static_cast<unsigned long long>(s.allocation), s.attributes, s.links,
      static_cast<unsigned long long>(s.file_id), local_time_text(s.creation_time).c_str(),
      local_time_text(s.write_time).c_str(), local_time_text(s.access_time).c_str(),
      local_time_text(s.change_time).c_str());
}

void print_df(const std::string& share, const client::FsStat& s, bool json_out) {
  // A server may report less total than free (quotas): never wrap.
  uint64_t used = s.total_bytes > s.free_bytes ? s.total_bytes - s.free_bytes : 0;
  if (json_out) {
    emit(json{{"share", share},
              {"size", s.total_bytes},
              {"used", used},
              {"available", s.avail_bytes},
              {"free", s.free_bytes},
              {"filesystem", s.fs_name}});
    return;
  }
  double pct = s.total_bytes ? 100.0 * static_cast<double>(used) / static_cast<double>(s.total_bytes) : 0;
  std::printf("%-30s %14s %14s %14s %5s  %s\n", "Share", "Size", "Used", "Avail", "Use%", "Type");
  std::printf("%-30s %14s %14s %14s %4.0f%%  %s\n", client::escape_for_display(share).c_str(),
              human_bytes(static_cast<double>(s.total_bytes)).c_str(), human_bytes(static_cast<double>(used)).c_str(),
              human_bytes(static_cast<double>(s.avail_bytes)).c_str(), pct,
              client::escape_for_display(s.fs_name).c_str());
}

void print_transfer_summary(const TransferSummary& s) {
  json j{{"command", s.command},     {"source", s.source}, {"destination", s.destination},
         {"files", s.files},         {"bytes", s.bytes},   {"skipped", s.skipped},
         {"failed", s.failed},       {"seconds", s.seconds}};
  if (s.is_sync) {
    j["unchanged"] = s.unchanged;
    j["removed"] = s.removed;
    j["dry_run"] = s.dry_run;
    if (s.dry_run) {
      json a = json::array();
      for (const auto& [action, path] : s.planned) a.push_back(json{{"action", action}, {"path", path}});
      j["planned"] = std::move(a);
    }
  }
  emit(j);
}

}  // namespace smbkit::cli
