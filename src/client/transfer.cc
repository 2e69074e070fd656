#include "client/transfer.h"

#include <deque>
#include <map>

#include "base/completion.h"
#include "client/window.h"

namespace smbkit::client {

using namespace proto;

namespace {
WindowController::Time mono_now() {
  return std::chrono::duration_cast<WindowController::Time>(std::chrono::steady_clock::now().time_since_epoch());
}
WindowController make_window(const TransferOptions& o) {
  return WindowController({o.min_window_bytes, std::max(o.min_window_bytes, o.max_window_bytes)});
}
}  // namespace


Result<uint64_t> download(Tree& t, const FileId& id, uint64_t size,
                          const std::function<Result<void>(uint64_t, ByteView)>& sink,
                          const TransferOptions& o) {
  Stripe s{&t, id};
  return download(std::span<const Stripe>(&s, 1), size, sink, o);
}

Result<uint64_t> upload(Tree& t, const FileId& id, uint64_t size,
                        const std::function<Result<void>(uint64_t, MutableByteView)>& source,
                        const TransferOptions& o) {
  Stripe s{&t, id};
  return upload(std::span<const Stripe>(&s, 1), size, source, o);
}

Result<uint64_t> download(std::span<const Stripe> stripes, uint64_t size,
                          const std::function<Result<void>(uint64_t, ByteView)>& sink,
                          const TransferOptions& o) {
  return download_chunks(
      stripes, size, [&](DownloadedChunk c) { return sink(c.offset, c.data()); }, o);
}

Result<uint64_t> download_chunks(std::span<const Stripe> stripes, uint64_t size,
                                 const std::function<Result<void>(DownloadedChunk)>& sink,
                                 const TransferOptions& o) {
  if (stripes.empty()) return nt_error(STATUS_INVALID_PARAMETER, "download: no connection");
  uint32_t chunk = o.chunk_bytes;
  for (auto& st : stripes) chunk = std::min(chunk, st.tree->max_read());
  size_t turn = 0;
  // Completions by offset; they may outlive an early return.
  struct Arrival {
    uint64_t off;
    Result<size_t> r;
    WindowController::Time at;
  };
  auto inbox = std::make_shared<CompletionQueue<Arrival>>();
  std::map<uint64_t, Result<size_t>> arrived;  // by offset, not yet delivered
  struct Slot {
    std::shared_ptr<Bytes> buf;
    uint32_t len;
    WindowController::Time sent;
  };
  std::map<uint64_t, Slot> in_flight;
  auto win = make_window(o);
  WindowController::Time last_arrival{};
  uint64_t next = std::min(o.start, size), delivered = next, eof = size;
  auto issue = [&](uint64_t off, uint32_t len) {
    // Chunks go round-robin over the stripes. READ data lands straight in
    // this pooled buffer; the callback keeps it alive if we return early.
    const Stripe& st = stripes[turn++ % stripes.size()];
    auto buf = st.tree->client().conn().pool().get(len);
    in_flight[off] = Slot{buf, len, mono_now()};
    st.tree->read_async(st.id, off, MutableByteView(buf->data(), len), [inbox, off, buf](Result<size_t> r) {
      inbox->put({off, std::move(r), mono_now()});
    });
  };
  while (delivered < eof) {
    while (next < eof && (next - delivered) < win.window()) {
      uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(chunk, eof - next));
      issue(next, len);
      next += len;
    }
    if (in_flight.empty()) break;
    // The window learns of each READ when it arrived, in arrival order,
    // not when it is delivered (in offset order, after the sink: a sink
    // that waits would make completions look bunched).
    // (Stamped before the queue's lock, two connections' stamps may cross:
    // the window is given them in order.)
    while (arrived.count(delivered) == 0)
      for (auto& a : inbox->wait_some()) {
        const Slot& sl = in_flight.at(a.off);
        last_arrival = std::max(last_arrival, a.at);
        win.on_complete(sl.len, sl.sent, last_arrival);
        arrived.emplace(a.off, std::move(a.r));
      }
    auto it = arrived.find(delivered);
    Result<size_t> r = std::move(it->second);
    arrived.erase(it);
    Slot slot = in_flight[delivered];
    in_flight.erase(delivered);
    if (!r) return r.take_error();
    size_t got = *r;
    if (got > slot.len) return protocol_error("READ returned more than asked");
    if (got == 0) {
      eof = delivered;  // the file shrank under us
      continue;
    }
    SMBKIT_CHECK(sink(DownloadedChunk{delivered, std::move(slot.buf), got}));
    delivered += got;
    if (got < slot.len) issue(delivered, slot.len - static_cast<uint32_t>(got));  // short read
    if (o.progress) o.progress(delivered, size);
  }
  return delivered;
}

Result<uint64_t> upload(std::span<const Stripe> stripes, uint64_t size,
                        const std::function<Result<void>(uint64_t, MutableByteView)>& source,
                        const TransferOptions& o) {
  if (stripes.empty()) return nt_error(STATUS_INVALID_PARAMETER, "upload: no connection");
  uint32_t chunk = o.chunk_bytes;
  for (auto& st : stripes) chunk = std::min(chunk, st.tree->max_write());
  size_t turn = 0;
  // Completions by offset; they may outlive an early return.
  auto inbox = std::make_shared<CompletionQueue<std::pair<uint64_t, Result<size_t>>>>();
  struct Slot {
    uint32_t len;
    WindowController::Time sent;
  };
  std::map<uint64_t, Slot> in_flight;
  uint64_t next = std::min(o.start, size), acked = next, pending_bytes = 0;
  auto win = make_window(o);
  for (;;) {
    const uint64_t span = upload_span(o);
    while (next < size && pending_bytes < win.window()) {
      uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(chunk, size - next));
      // Keep holes (WRITEs not yet done) within `span` of each other; see
      // upload_span().
      if (!in_flight.empty() && next + len > in_flight.begin()->first + span) break;
      // Pooled chunk, sent straight from this buffer (scatter-gather); the
      // callback keeps it alive until the WRITE is answered.
      const Stripe& st = stripes[turn++ % stripes.size()];
      auto buf = st.tree->client().conn().pool().get(len);
      SMBKIT_CHECK(source(next, MutableByteView(buf->data(), len)));
      in_flight[next] = Slot{len, mono_now()};
      pending_bytes += len;
      uint64_t off = next;
      st.tree->write_async(st.id, off, ByteView(buf->data(), len), [inbox, off, buf](Result<size_t> r) {
        inbox->put({off, std::move(r)});
      });
      next += len;
    }
    if (in_flight.empty()) break;
    auto got = inbox->wait_some();
    for (auto& [off, r] : got) {
      Slot slot = in_flight[off];
      uint32_t len = slot.len;
      in_flight.erase(off);
      pending_bytes -= len;
      win.on_complete(len, slot.sent, mono_now());
      if (!r) return r.take_error();
      if (*r != len) return nt_error(STATUS_DISK_FULL, "short write at offset " + std::to_string(off));
      acked += len;
      if (o.progress) o.progress(acked, size);
    }
    // Everything below the lowest WRITE still in flight is on the server.
    if (o.written_prefix) o.written_prefix(in_flight.empty() ? next : in_flight.begin()->first);
  }
  return acked;
}

}  // namespace smbkit::client
