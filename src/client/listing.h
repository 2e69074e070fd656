// The accumulation side of a directory listing, without sockets: each
// QUERY_DIRECTORY response (MS-SMB2 2.2.34) goes in, each new entry comes
// out to the caller's sink at once, and a server that does not make
// progress ends the listing instead of growing it forever.
// Tree::list_each drives it; fuzz/listing_fuzz.cc drives it with
// arbitrary responses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::client {

struct FileStat;
using ListingSink = std::function<Result<void>(const FileStat&)>;

// The default cap on the entries of one listing (ClientOptions::
// max_listing_entries). A real directory this large takes minutes to list
// on smbd; the memory it costs us is the set of names seen (SeenNames).
inline constexpr uint64_t kDefaultMaxListingEntries = 10'000'000;

// A set of 64-bit hashes of names: open addressing, linear probing, at
// most 3/4 full, so about 11-21 bytes per name and nothing per name
// beyond that (no node allocation). Bounded by the listing's cap.
class SeenNames {
 public:
  // False if it was there already.
  bool insert(std::string_view name);
  bool contains(std::string_view name) const;
  size_t size() const { return count_; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(uint64_t); }
  static uint64_t hash(std::string_view name);

 private:
  void grow();
  std::vector<uint64_t> slots_;  // 0: empty (hash() never returns 0)
  size_t count_ = 0;
};

// One listing's progress check. Errors end the listing:
//   STATUS_INVALID_NETWORK_RESPONSE  a response longer than asked, one
//     that does not decode, the same response bytes twice in a row, or
//     more names returned again in this scan than names seen
//     (QUERY_DIRECTORY without RESTART_SCANS continues the enumeration,
//     MS-SMB2 3.3.5.18: it never returns an entry twice; a server that
//     does may repeat forever). A name returned again is skipped, never
//     delivered twice;
//   STATUS_NO_MEMORY  more than max_entries distinct entries;
//   whatever the sink returns.
class ListingAccumulator {
 public:
  explicit ListingAccumulator(uint64_t max_entries = kDefaultMaxListingEntries, std::string what = {});

  // The scan starts over (RESTART_SCANS on a reopened handle after a
  // reconnect): names delivered before come back once more and are
  // skipped, not delivered twice. More of them than were ever seen is
  // repetition.
  void restart();
  // A QUERY_DIRECTORY response message (header and body) with
  // STATUS_SUCCESS to a request whose OutputBufferLength was `asked`, of
  // FileIdBothDirectoryInformation entries. Delivers the new entries.
  // Returns how many entries the response held (0: the scan is over).
  Result<size_t> add(ByteView msg, uint32_t asked, const ListingSink& sink);

  uint64_t delivered() const { return delivered_; }
  // What the listing holds between responses.
  size_t memory_bytes() const { return seen_.memory_bytes(); }

 private:
  Error repeated(const std::string& why) const;
  uint64_t max_entries_;
  std::string what_;
  SeenNames seen_;
  uint64_t delivered_ = 0;
  uint64_t skipped_in_scan_ = 0;
  // The previous response's OutputBuffer in this scan (hash, length).
  uint64_t last_hash_ = 0;
  size_t last_len_ = 0;
};

}  // namespace smbkit::client
