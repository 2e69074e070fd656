// Fuzzes listing accumulation (client/listing.h): a sequence of
// QUERY_DIRECTORY responses, some raw bytes, some well-formed entries drawn
// from a small pool of names (so repetition, restarts and the cap are
// reached), fed to one ListingAccumulator as Tree::list_each does. Checks:
// no crash, never more entries than the cap, no entry delivered twice, and
// memory bounded by the names seen (not by the number of responses).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "client/client.h"
#include "client/listing.h"
#include "proto/constants.h"
#include "proto/fscc_dir_info.h"
#include "proto/query_directory.h"

using namespace smbkit;
using namespace smbkit::proto;

namespace {

Bytes message(ByteView output) {
  Bytes msg(kHeaderSize);
  ByteWriter w(msg);
  QueryDirectoryResponse r;
  r.OutputBuffer.assign(output.begin(), output.end());
  (void)encode_query_directory_response(r, w);
  return msg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint64_t cap = in.ConsumeIntegralInRange<uint64_t>(0, 64);
  client::ListingAccumulator acc(cap, "fuzz");
  std::set<std::string> delivered;
  bool ended = false;
  for (int round = 0; round < 64 && in.remaining_bytes() > 0 && !ended; round++) {
    const uint8_t kind = in.ConsumeIntegral<uint8_t>();
    const uint32_t asked = in.ConsumeIntegralInRange<uint32_t>(0, 1u << 16);
    if (kind % 8 == 0) acc.restart();
    Bytes msg;
    if (kind & 0x80) {  // raw bytes: the whole message after the header
      std::string raw = in.ConsumeRandomLengthString(4096);
      msg.resize(kHeaderSize);
      for (char ch : raw) msg.push_back(static_cast<std::byte>(ch));
    } else if (kind & 0x40) {  // raw OutputBuffer in a well-formed response
      std::string raw = in.ConsumeRandomLengthString(4096);
      msg = message(ByteView(reinterpret_cast<const std::byte*>(raw.data()), raw.size()));
    } else {  // entries named from a pool of 200
      std::vector<DirEntry> es(in.ConsumeIntegralInRange<size_t>(0, 40));
      for (auto& e : es) e.FileName = "n" + std::to_string(in.ConsumeIntegralInRange<int>(0, 199));
      Bytes out;
      if (!es.empty()) {
        auto enc = encode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, es);
        if (!enc.ok()) continue;
        out = std::move(*enc);
      }
      msg = message(out);
    }
    auto n = acc.add(msg, asked, [&](const client::FileStat& s) -> Result<void> {
      // Tree::list_each's promise: once per name, within the cap.
      if (!delivered.insert(s.name).second) __builtin_trap();
      if (delivered.size() > cap) __builtin_trap();
      return {};
    });
    ended = !n.ok() || *n == 0;
  }
  if (acc.delivered() != delivered.size()) __builtin_trap();
  // The seen set holds at most cap + 1 names (the one past the cap ends
  // the listing): 8-byte slots, at most 3/4 full, doubled from 64.
  if (acc.memory_bytes() > 8 * 128) __builtin_trap();
  return 0;
}
