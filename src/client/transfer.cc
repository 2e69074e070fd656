#include "client/transfer.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include "proto/read.h"
#include "proto/write.h"

namespace smbkit::client {

using namespace proto;

namespace {

// Completions arrive on the receiver thread; the caller's thread waits.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::map<uint64_t, Result<session::Response>> done;  // by offset
  void put(uint64_t off, Result<session::Response> r) {
    std::lock_guard<std::mutex> g(mu);
    done.emplace(off, std::move(r));
    cv.notify_one();
  }
};

}  // namespace

Result<uint64_t> download(Tree& t, const FileId& id, uint64_t size,
                          const std::function<Result<void>(uint64_t, ByteView)>& sink,
                          const TransferOptions& o) {
  uint32_t chunk = std::min(t.max_read(), o.chunk_bytes);
  auto inbox = std::make_shared<Inbox>();
  std::map<uint64_t, uint32_t> in_flight;  // offset -> length asked
  uint64_t next = 0, delivered = 0, eof = size;
  auto issue = [&](uint64_t off, uint32_t len) -> Result<void> {
    ReadRequest rq;
    rq.Length = len;
    rq.Offset = off;
    rq.FileId = id;
    SMBKIT_TRY(auto r, t.request(SMB2_READ, [&](ByteWriter& w) { return encode_read_request(rq, w); }));
    r.charge_bytes = len;
    in_flight[off] = len;
    t.client().conn().submit(std::move(r), [inbox, off](Result<session::Response> resp) {
      inbox->put(off, std::move(resp));
    });
    return {};
  };
  while (delivered < eof) {
    while (next < eof && (next - delivered) < o.window_bytes) {
      uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(chunk, eof - next));
      SMBKIT_CHECK(issue(next, len));
      next += len;
    }
    if (in_flight.empty()) break;
    // Wait for the chunk at `delivered` (deliver in order).
    Result<session::Response> resp = Error{};
    {
      std::unique_lock<std::mutex> lk(inbox->mu);
      inbox->cv.wait(lk, [&] { return inbox->done.count(delivered) != 0; });
      auto it = inbox->done.find(delivered);
      resp = std::move(it->second);
      inbox->done.erase(it);
    }
    uint32_t asked = in_flight[delivered];
    in_flight.erase(delivered);
    // On failure return at once: late completions land in the inbox,
    // which the callbacks keep alive.
    if (!resp) return resp.take_error();
    uint32_t st = resp->hdr.Status;
    if (st == STATUS_END_OF_FILE) {
      eof = delivered;  // the file shrank under us
      continue;
    }
    if (st != STATUS_SUCCESS) return nt_error(st, "read at offset " + std::to_string(delivered));
    SMBKIT_TRY(auto rr, decode_read_response(resp->msg()));
    if (rr.Data.size() > asked) return protocol_error("READ returned more than asked");
    SMBKIT_CHECK(sink(delivered, rr.Data));
    uint64_t got = rr.Data.size();
    delivered += got;
    if (got < asked) {
      if (got == 0) {
        eof = delivered;
        continue;
      }
      // Short read: ask for the rest of this chunk.
      SMBKIT_CHECK(issue(delivered, asked - static_cast<uint32_t>(got)));
    }
    if (o.progress) o.progress(delivered, size);
  }
  return delivered;
}

Result<uint64_t> upload(Tree& t, const FileId& id, uint64_t size,
                        const std::function<Result<void>(uint64_t, MutableByteView)>& source,
                        const TransferOptions& o) {
  uint32_t chunk = std::min(t.max_write(), o.chunk_bytes);
  auto inbox = std::make_shared<Inbox>();
  struct Slot {
    std::shared_ptr<Bytes> buf;  // pooled: no zero-fill per chunk
    size_t len = 0;
    MutableByteView data() { return MutableByteView(buf->data(), len); }
  };
  std::map<uint64_t, std::shared_ptr<Slot>> in_flight;
  uint64_t next = 0, acked = 0;
  std::optional<Error> failure;
  while (true) {
    while (!failure && next < size && in_flight.size() * uint64_t{chunk} < o.window_bytes) {
      uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(chunk, size - next));
      auto slot = std::make_shared<Slot>();
      slot->buf = t.client().conn().pool().get(len);
      slot->len = len;
      auto s = source(next, slot->data());
      if (!s) {
        failure = s.take_error();
        break;
      }
      WriteRequest wq;
      wq.Length = len;
      wq.Offset = next;
      wq.FileId = id;
      auto r = t.request(SMB2_WRITE, [&](ByteWriter& w) { return encode_write_request(wq, w); });
      if (!r) {
        failure = r.take_error();
        break;
      }
      r->payload = slot->data();
      r->charge_bytes = len;
      in_flight[next] = slot;
      uint64_t off = next;
      // The slot stays alive in the completion until the write is answered.
      t.client().conn().submit(std::move(*r), [inbox, off, slot](Result<session::Response> resp) {
        inbox->put(off, std::move(resp));
      });
      next += len;
    }
    if (in_flight.empty()) break;
    std::map<uint64_t, Result<session::Response>> got;
    {
      std::unique_lock<std::mutex> lk(inbox->mu);
      inbox->cv.wait(lk, [&] { return !inbox->done.empty(); });
      got.swap(inbox->done);
    }
    for (auto& [off, resp] : got) {
      uint64_t len = in_flight[off]->len;
      in_flight.erase(off);
      if (failure) continue;
      if (!resp) {
        failure = resp.take_error();
        continue;
      }
      if (resp->hdr.Status != STATUS_SUCCESS) {
        failure = nt_error(resp->hdr.Status, "write at offset " + std::to_string(off));
        continue;
      }
      auto wr = decode_write_response(resp->msg());
      if (!wr) {
        failure = wr.take_error();
        continue;
      }
      if (wr->Count != len) {
        failure = nt_error(STATUS_DISK_FULL, "short write at offset " + std::to_string(off));
        continue;
      }
      acked += len;
      if (o.progress) o.progress(acked, size);
    }
  }
  if (failure) return *failure;
  return acked;
}

}  // namespace smbkit::client
