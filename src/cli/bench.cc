#include "cli/bench.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "base/completion.h"
#include "cli/bench_util.h"
#include "proto/constants.h"
#include "proto/create.h"
#include "proto/read.h"
#include "proto/write.h"

namespace smbkit::cli {

using namespace proto;
using namespace bench;
using client::Clock;

CLI::App* add_bench_command(CLI::App& app, BenchOptions& o, std::string& url) {
  auto* b = app.add_subcommand(
      "bench", "measure throughput, IOPS and latency on a test file (every byte read is verified)");
  b->add_option("--mode", o.modes,
                "seqwrite, seqread, randwrite, randread; repeatable or a comma list, run in order "
                "(default seqwrite,seqread)")
      ->delimiter(',');
  b->add_option("--bs", o.bs, "request size, e.g. 4k, 1M, 8M (default 1M for seq modes, 4k for rand modes)");
  b->add_option("--qd", o.qd, "requests kept in flight (default 16)")->check(CLI::Range(1, 4096));
  b->add_option("--size", o.size,
                "test file size (default 1G); without --time every mode moves this many bytes");
  b->add_option("--time", o.time_s, "run each mode for this many seconds instead (at most 3600)")
      ->check(CLI::Range(0.0, 3600.0));
  b->add_flag("--json", o.json, "print the results as JSON on standard output");
  b->add_flag("--keep", o.keep,
              "reuse URL if it exists (it must hold this pattern) and keep it afterwards; "
              "without --keep URL must not exist and is deleted at the end");
  b->add_option("URL", url, "the test file, smb://host/share/path")->required();
  return b;
}

namespace {

// Every 8-byte word of the test file is its offset XOR this.
constexpr uint64_t kSeed = 0x736d626b69742d62ull;  // "smbkit-b"

struct Job {
  Mode mode = Mode::seqread;
  uint32_t bs = 0;
  int qd = 1;
  uint64_t file_size = 0;
  uint64_t bytes = 0;   // to move when there is no time limit
  double seconds = 0;   // time limit; 0: none
  uint64_t rng_seed = 0;
};

struct ModeResult {
  Mode mode = Mode::seqread;
  uint32_t bs = 0;
  int qd = 0;
  uint64_t ops = 0, bytes = 0, verified = 0;
  double seconds = 0;
  LatencyHistogram lat;
  double mb_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0; }
  double iops() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
};

// Completions arrive on the receiver thread with their completion time;
// the bench thread checks, verifies and resubmits.
struct Done {
  size_t slot;
  Clock::time_point at;
  Result<session::Response> resp;
};
using Inbox = CompletionQueue<Done>;

Error with_context(Error e, const std::string& what) {
  e.context = e.context.empty() ? what : what + ": " + e.context;
  return e;
}

// Keeps exactly j.qd READs or WRITEs in flight until j.bytes have been
// issued (or the time is up), then waits for the last ones. On an error it
// stops issuing, waits for what is in flight and returns the first error.
Result<ModeResult> run_mode(client::Tree& t, const FileId& id, const Job& j, bool reused_file) {
  auto& conn = t.client().conn();
  const bool write = !is_read(j.mode);
  auto inbox = std::make_shared<Inbox>();
  struct Slot {
    uint64_t off = 0;
    uint32_t len = 0;
    Clock::time_point sent;
    // WRITE data, or where READ data lands (the engine's zero-copy path
    // when the response is not sealed); the completion keeps it alive too.
    std::shared_ptr<Bytes> buf;
  };
  std::vector<Slot> slots(static_cast<size_t>(j.qd));
  for (auto& s : slots) s.buf = std::make_shared<Bytes>(j.bs);
  // A read slot is refilled before its data is verified: it takes the
  // spare buffer and gives its own back after the check.
  std::shared_ptr<Bytes> spare = write ? nullptr : std::make_shared<Bytes>(j.bs);
  SplitMix64 rng(j.rng_seed);
  const uint64_t nblocks = j.file_size / j.bs;
  uint64_t seq_next = 0, issued = 0;
  size_t in_flight = 0;
  ModeResult res;
  res.mode = j.mode;
  res.bs = j.bs;
  res.qd = j.qd;

  const auto start = Clock::now();
  const auto deadline =
      j.seconds > 0 ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(j.seconds))
                    : Clock::time_point::max();
  auto more = [&] { return j.seconds > 0 ? Clock::now() < deadline : issued < j.bytes; };

  auto issue = [&](size_t i) -> Result<void> {
    Slot& s = slots[i];
    if (is_random(j.mode)) {
      s.off = rng.below(nblocks) * j.bs;
      s.len = j.bs;
    } else {
      if (seq_next >= j.file_size) seq_next = 0;  // --time: wrap around
      s.off = seq_next;
      s.len = static_cast<uint32_t>(std::min<uint64_t>(j.bs, j.file_size - seq_next));
      seq_next += s.len;
    }
    session::Request r;
    MutableByteView read_into;
    if (write) {
      MutableByteView data = MutableByteView(*s.buf).first(s.len);
      fill_pattern(s.off, data, kSeed);
      WriteRequest wq;
      wq.Length = s.len;
      wq.Offset = s.off;
      wq.FileId = id;
      SMBKIT_TRY(r, t.request(SMB2_WRITE, [&](ByteWriter& w) { return encode_write_request(wq, w); }));
      r.payload = data;
    } else {
      ReadRequest rq;
      rq.Length = s.len;
      rq.Offset = s.off;
      rq.FileId = id;
      SMBKIT_TRY(r, t.request(SMB2_READ, [&](ByteWriter& w) { return encode_read_request(rq, w); }));
      read_into = MutableByteView(*s.buf).first(s.len);
    }
    r.charge_bytes = s.len;
    issued += s.len;
    in_flight++;
    s.sent = Clock::now();
    conn.submit(std::move(r), [inbox, i, keep = s.buf](Result<session::Response> resp) {
      inbox->put(Done{i, Clock::now(), std::move(resp)});
    }, read_into);
    return {};
  };

  std::optional<Error> failure;
  for (size_t i = 0; i < slots.size() && more(); i++) {
    auto is = issue(i);
    if (!is) {
      failure = is.take_error();
      break;
    }
  }
  Clock::time_point last = start;
  std::vector<Done> batch;
  while (in_flight > 0) {
    batch = inbox->wait_some();
    for (auto& d : batch) {
      in_flight--;
      Slot& s = slots[d.slot];
      const uint64_t off = s.off;
      const uint32_t len = s.len;
      if (failure) continue;  // draining
      auto what = [&] { return fmt::format("{} of {} bytes at offset {}", mode_name(j.mode), len, off); };
      if (!d.resp) {
        failure = with_context(d.resp.take_error(), what());
        continue;
      }
      if (d.resp->hdr.Status != STATUS_SUCCESS) {
        failure = nt_error(d.resp->hdr.Status, what());
        continue;
      }
      ByteView data;
      std::shared_ptr<Bytes> held;  // the READ buffer being verified
      if (write) {
        auto wr = decode_write_response(d.resp->msg());
        if (!wr) {
          failure = with_context(wr.take_error(), what());
          continue;
        }
        if (wr->Count != len) {
          failure = nt_error(STATUS_DISK_FULL, fmt::format("{}: short write ({} bytes)", what(), wr->Count));
          continue;
        }
      } else {
        if (!d.resp->direct.empty()) {
          data = d.resp->direct;  // already in s.buf
        } else {
          auto rr = decode_read_response(d.resp->msg());
          if (!rr) {
            failure = with_context(rr.take_error(), what());
            continue;
          }
          data = rr->Data;  // lives in d.resp's frame until the batch is cleared
        }
        if (data.size() != len) {
          failure = nt_error(STATUS_END_OF_FILE, fmt::format("{}: short read ({} bytes)", what(), data.size()));
          continue;
        }
        held = std::exchange(s.buf, std::exchange(spare, nullptr));
      }
      res.lat.record(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d.at - s.sent).count()));
      res.ops++;
      res.bytes += len;
      last = std::max(last, d.at);
      // Refill the slot first, verify after: the queue stays full while we check.
      if (more()) {
        auto is = issue(d.slot);
        if (!is) failure = is.take_error();
      }
      if (!write) {
        if (auto bad = check_pattern(off, data, kSeed)) {
          uint8_t got = std::to_integer<uint8_t>(data[*bad - off]);
          failure = nt_error(
              STATUS_DATA_ERROR,
              fmt::format("{}: data mismatch at file offset {}: expected 0x{:02x}, read 0x{:02x}{}", what(), *bad,
                          pattern_byte(*bad, kSeed), got,
                          reused_file ? " (the file was reused with --keep: was it written by smbkit bench?)"
                                      : ""));
          continue;
        }
        res.verified += len;
        spare = std::move(held);
      }
    }
    batch.clear();
  }
  if (failure) return *failure;
  res.seconds = std::chrono::duration<double>(last - start).count();
  return res;
}

std::string dialect_name(uint16_t d) {
  switch (d) {
    case SMB2_DIALECT_0202: return "2.0.2";
    case SMB2_DIALECT_0210: return "2.1";
    case SMB2_DIALECT_0300: return "3.0";
    case SMB2_DIALECT_0302: return "3.0.2";
    case SMB2_DIALECT_0311: return "3.1.1";
  }
  return fmt::format("{:#x}", d);
}

std::string fmt_latency(uint64_t ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  if (ns < 1000000000) return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

// Short binary size for the table ("1.0G", "256M", "12k").
std::string human_size(uint64_t b) {
  const char* units[] = {"", "k", "M", "G", "T"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  if (u == 0) return fmt::format("{}", b);
  return v < 10 ? fmt::format("{:.1f}{}", v, units[u]) : fmt::format("{:.0f}{}", v, units[u]);
}

void print_header() {
  std::fputs(fmt::format("{:<10} {:>5} {:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}\n", "mode",
                         "bs", "qd", "MB/s", "IOPS", "lat p50", "p90", "p99", "max", "bytes", "time")
                 .c_str(),
             stdout);
}

void print_row(const ModeResult& r) {
  std::fputs(fmt::format("{:<10} {:>5} {:>4} {:>10.1f} {:>10.0f} {:>10} {:>10} {:>10} {:>10} {:>8} {:>7.2f}s\n",
                         mode_name(r.mode), format_size(r.bs), r.qd, r.mb_per_s(), r.iops(),
                         fmt_latency(r.lat.percentile(50)), fmt_latency(r.lat.percentile(90)),
                         fmt_latency(r.lat.percentile(99)), fmt_latency(r.lat.max()),
                         human_size(r.bytes), r.seconds)
                 .c_str(),
             stdout);
  std::fflush(stdout);
}

}  // namespace

Result<void> cmd_bench(Context& c, const std::string& url, const BenchOptions& o) {
  // Everything that can be checked before connecting is.
  std::vector<Mode> modes;
  for (auto& m : o.modes) {
    SMBKIT_TRY(auto v, parse_modes(m));
    modes.insert(modes.end(), v.begin(), v.end());
  }
  if (modes.empty()) modes = {Mode::seqwrite, Mode::seqread};
  SMBKIT_TRY(uint64_t size, parse_size(o.size));
  if (size == 0) return nt_error(STATUS_INVALID_PARAMETER, "--size must be more than 0");
  std::optional<uint64_t> bs_opt;
  if (!o.bs.empty()) {
    SMBKIT_TRY(uint64_t v, parse_size(o.bs));
    if (v == 0 || v > (1ull << 30))
      return nt_error(STATUS_INVALID_PARAMETER, "--bs " + o.bs + ": expected 1 byte to 1G");
    bs_opt = v;
  }
  auto bs_for = [&](Mode m) -> uint32_t {
    return static_cast<uint32_t>(bs_opt ? *bs_opt : is_random(m) ? 4096 : 1u << 20);
  };
  for (Mode m : modes)
    if (is_random(m) && bs_for(m) > size)
      return nt_error(STATUS_INVALID_PARAMETER, fmt::format("{}: --bs {} is larger than --size {}", mode_name(m),
                                                            format_size(bs_for(m)), format_size(size)));
  if (o.time_s < 0 || o.time_s > 3600)
    return nt_error(STATUS_INVALID_PARAMETER, "--time: expected 0 to 3600 seconds");

  SMBKIT_TRY(auto u, client::parse_smb_url(url));
  if (u.path.empty())
    return nt_error(STATUS_OBJECT_PATH_SYNTAX_BAD,
                    u.str() + ": name a test file inside the share, e.g. smb://host/share/bench.bin");
  SMBKIT_TRY(client::Tree * t, c.tree(u));
  for (Mode m : modes) {
    uint32_t cap = is_read(m) ? t->max_read() : t->max_write();
    if (bs_for(m) > cap)
      return nt_error(STATUS_INVALID_PARAMETER,
                      fmt::format("{}: --bs {} is more than the server's {} ({} bytes)", mode_name(m),
                                  format_size(bs_for(m)), is_read(m) ? "MaxReadSize" : "MaxWriteSize", cap));
  }

  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | DELETE | SYNCHRONIZE;
  p.options = FILE_NON_DIRECTORY_FILE | (o.keep ? 0 : FILE_DELETE_ON_CLOSE);
  p.disposition = o.keep ? FILE_OPEN_IF : FILE_CREATE;
  p.share = FILE_SHARE_READ;
  auto opened = t->open(u.path, p);
  if (!opened) {
    if (opened.error().is(STATUS_OBJECT_NAME_COLLISION))
      return nt_error(STATUS_OBJECT_NAME_COLLISION,
                      u.str() + ": exists (pass --keep to reuse it as the test file, or choose a new name)");
    return opened.take_error();
  }
  const FileId id = opened->id;
  const bool reused = opened->create_action == FILE_OPENED;
  // A kept file of at least --size bytes is taken to hold the pattern
  // already (reads verify it anyway).
  bool filled = reused && opened->size >= size;

  const auto& srv = t->client().conn().server();
  const auto& sess = t->client().session();
  const bool encrypting = sess.encrypting || t->encrypted();
  const bool quiet = o.json || c.opts().quiet;
  if (!o.json) {
    std::fputs(fmt::format("bench {}: {} file ({}), SMB {}, signing {}, encryption {}{}\n", u.str(),
                           format_size(size),
                           reused ? "reused, kept" : o.keep ? "new, kept" : "new, deleted at exit",
                           dialect_name(srv.dialect), sess.signing ? "on" : "off", encrypting ? "on" : "off",
                           o.time_s > 0 ? fmt::format(", {:g} s per mode", o.time_s) : "")
                   .c_str(),
               stdout);
    print_header();
    std::fflush(stdout);
  }

  std::vector<ModeResult> results;
  Result<void> failed;
  uint64_t run_no = 0;
  for (Mode m : modes) {
    if (is_read(m) && !filled) {
      // Reads need the pattern in place: write it once, untimed.
      if (!quiet) std::fprintf(stderr, "bench: writing the %s test pattern first\n", format_size(size).c_str());
      Job prep{Mode::seqwrite, std::min<uint32_t>(1u << 20, t->max_write()), 16, size, size, 0, 0};
      auto r = run_mode(*t, id, prep, reused);
      if (!r) {
        failed = with_context(r.take_error(), "writing the test pattern");
        break;
      }
      filled = true;
    }
    Job j;
    j.mode = m;
    j.bs = bs_for(m);
    j.qd = o.qd;
    j.file_size = size;
    j.bytes = is_random(m) ? size / j.bs * j.bs : size;
    j.seconds = o.time_s;
    j.rng_seed = kSeed + 0x9e3779b97f4a7c15ull * ++run_no;
    auto r = run_mode(*t, id, j, reused);
    if (!r) {
      failed = r.take_error();
      break;
    }
    // A sequential write over the whole file leaves the pattern everywhere.
    if (m == Mode::seqwrite && r->bytes >= size) filled = true;
    if (!o.json) print_row(*r);
    results.push_back(std::move(*r));
  }

  auto closed = t->close(id);  // deletes the file unless --keep
  if (!failed) return failed;
  if (!closed) return closed;

  if (o.json) {
    std::string out = fmt::format(
        "{{\n  \"url\": \"{}\",\n  \"file_size\": {},\n  \"file_reused\": {},\n  \"dialect\": \"{}\",\n"
        "  \"signing\": {},\n  \"encryption\": {},\n  \"time_limit_s\": {},\n  \"results\": [",
        json_escape(u.str()), size, reused, dialect_name(srv.dialect), sess.signing, encrypting, o.time_s);
    for (size_t i = 0; i < results.size(); i++) {
      const auto& r = results[i];
      auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1e3; };
      out += fmt::format(
          "{}\n    {{\"mode\": \"{}\", \"bs\": {}, \"qd\": {}, \"ops\": {}, \"bytes\": {}, \"verified_bytes\": {}, "
          "\"seconds\": {:.6f}, \"mb_per_s\": {:.2f}, \"iops\": {:.1f}, \"latency_us\": {{\"mean\": {:.1f}, "
          "\"p50\": {:.1f}, \"p90\": {:.1f}, \"p99\": {:.1f}, \"max\": {:.1f}}}}}",
          i ? "," : "", mode_name(r.mode), r.bs, r.qd, r.ops, r.bytes, r.verified, r.seconds, r.mb_per_s(), r.iops(),
          r.lat.mean() / 1e3, us(r.lat.percentile(50)), us(r.lat.percentile(90)), us(r.lat.percentile(99)),
          us(r.lat.max()));
    }
    out += "\n  ]\n}\n";
    std::fputs(out.c_str(), stdout);
  }
  return {};
}

}  // namespace smbkit::cli
