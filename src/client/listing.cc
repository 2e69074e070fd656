#include "client/listing.h"

#include "client/client.h"
#include "proto/fscc_dir_info.h"
#include "proto/query_directory.h"

namespace smbkit::client {

using namespace proto;

uint64_t SeenNames::hash(std::string_view name) {
  // FNV-1a, then a 64-bit finalizer (splitmix64) to spread the low bits
  // the table indexes by. Not keyed: a server that forges collisions can
  // only end its own listing early, which it can do anyway. Two real
  // names of a 10-million-entry listing collide with odds of ~3e-6.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h ? h : 1;
}

bool SeenNames::contains(std::string_view name) const {
  if (slots_.empty()) return false;
  uint64_t h = hash(name);
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return true;
    if (slots_[i] == 0) return false;
  }
}

bool SeenNames::insert(std::string_view name) {
  if ((count_ + 1) * 4 > slots_.size() * 3) grow();
  uint64_t h = hash(name);
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return false;
    if (slots_[i] == 0) {
      slots_[i] = h;
      count_++;
      return true;
    }
  }
}

void SeenNames::grow() {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, 0);
  size_t mask = slots_.size() - 1;
  for (uint64_t h : old) {
    if (!h) continue;
    size_t i = h & mask;
    while (slots_[i]) i = (i + 1) & mask;
    slots_[i] = h;
  }
}

namespace {
FileStat stat_from(const DirEntry& e) {
  FileStat s;
  s.name = e.FileName;
  s.size = e.EndOfFile;
  s.allocation = e.AllocationSize;
  s.attributes = e.FileAttributes;
  s.is_dir = e.FileAttributes & FILE_ATTRIBUTE_DIRECTORY;
  s.creation_time = e.CreationTime;
  s.access_time = e.LastAccessTime;
  s.write_time = e.LastWriteTime;
  s.change_time = e.ChangeTime;
  s.file_id = e.FileId;
  return s;
}

uint64_t bytes_hash(ByteView b) {
  return SeenNames::hash(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}
}  // namespace

ListingAccumulator::ListingAccumulator(uint64_t max_entries, std::string what)
    : max_entries_(max_entries), what_(std::move(what)) {}

void ListingAccumulator::restart() {
  skipped_in_scan_ = 0;
  last_hash_ = 0;
  last_len_ = 0;
}

Error ListingAccumulator::repeated(const std::string& why) const {
  return protocol_error((what_.empty() ? std::string("listing") : what_) + ": the server " + why +
                        " (QUERY_DIRECTORY made no progress)");
}

Result<size_t> ListingAccumulator::add(ByteView msg, uint32_t asked, const ListingSink& sink) {
  SMBKIT_TRY(ByteView out, query_directory_output(msg));
  // MS-SMB2 3.3.5.18: the server returns at most OutputBufferLength bytes.
  if (out.size() > asked)
    return protocol_error(what_ + ": QUERY_DIRECTORY returned " + std::to_string(out.size()) +
                          " bytes, more than the " + std::to_string(asked) + " asked");
  if (out.empty()) return size_t{0};
  uint64_t h = bytes_hash(out);
  if (h == last_hash_ && out.size() == last_len_) return repeated("sent the same entries twice in a row");
  last_hash_ = h;
  last_len_ = out.size();
  size_t n = 0;
  SMBKIT_CHECK(for_each_directory_entry(FILE_ID_BOTH_DIRECTORY_INFORMATION, out, [&](DirEntry&& e) -> Result<void> {
    n++;
    if (!seen_.insert(e.FileName)) {
      // A name comes once per scan, and once more after a restart (the
      // reconnected scan starts over): either way it is skipped, not
      // delivered twice. More skips than names is a server going round in
      // circles, which ends the listing.
      if (++skipped_in_scan_ > seen_.size()) return repeated("returned \"" + e.FileName + "\" again");
      return ok_result();
    }
    if (delivered_ >= max_entries_)
      return nt_error(STATUS_NO_MEMORY, what_ + ": more than " + std::to_string(max_entries_) +
                                            " entries (the listing cap, ClientOptions::max_listing_entries)");
    delivered_++;
    return sink(stat_from(e));
  }));
  return n;
}

}  // namespace smbkit::client
