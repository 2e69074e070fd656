// Requests that wait (MS-SMB2 3.3.4.2 interim responses, 3.3.5.16
// CANCEL): a file command whose FileReply carries a PendingCall gets an
// AsyncId and an interim response (STATUS_PENDING, which grants its
// credits); its final answer is sent async when the call finishes, posted
// back to the loop. Every method runs on the connection's loop.
//
// In a compound chain (MS-SMB2 3.3.5.2.7, and smbd alike): the answers
// before the request that waits go out with its interim response in one
// frame, and the rest of the chain runs when it finishes. Only the last
// request of a chain or a CREATE (waiting for an oplock or lease break)
// may wait; any other request that would wait in the middle of a chain is
// cancelled at once and the chain goes on with its answer (STATUS_CANCELLED
// as a rule), as smbd does (MS-SMB2 <206> on 3.3.5.2.7).
#include "base/log.h"
#include "proto/create.h"
#include "server/conn.h"

namespace smbkit::server {

using namespace proto;
using session::ServerMachine;
using session::ServerRequest;

void Conn::go_async(std::shared_ptr<Chain> c, std::shared_ptr<PendingCall> call) {
  const ServerRequest& q = c->reqs[c->next];
  const bool last = c->next + 1 == c->reqs.size();
  const bool may_wait = last || q.hdr.Command == SMB2_CREATE;
  const bool too_many = waiting_.size() >= kMaxWaiting;
  if (too_many || !may_wait) {
    // Answered without an interim response: cancelled before it starts,
    // the call finishes at once; a hostile client cannot pile waiters up.
    call->cancel();
    if (too_many) {
      call->start([](FileReply) {});
      FileReply fr;
      fr.status = STATUS_INSUFFICIENT_RESOURCES;
      add_reply(*c, fr);
      c->next++;
      run_chain(std::move(c));
      return;
    }
  }
  const uint64_t async_id = next_async_id_++;
  Waiting w;
  w.c = c;
  w.call = call;
  w.message_id = q.hdr.MessageId;
  w.session_id = q.session_id;
  w.tree_id = q.tree_id;
  waiting_.emplace(async_id, std::move(w));
  // A request cancelled at once in the middle of a chain waits for its
  // answer without an interim response (the chain answers it in order).
  if (may_wait) flush_chain(*c, async_id);
  if (closed_) return;
  std::weak_ptr<Conn> weak = weak_from_this();
  auto post = io_.poster();
  call->start([weak, post, async_id](FileReply fr) {
    auto reply = std::make_shared<FileReply>(std::move(fr));
    post([weak, async_id, reply] {
      if (auto self = weak.lock()) self->complete(async_id, std::move(*reply));
    });
  });
}

void Conn::complete(uint64_t async_id, FileReply fr) {
  if (closed_) return;
  auto it = waiting_.find(async_id);
  if (it == waiting_.end()) return;  // answered already (`done` runs once; a bound refusal)
  std::shared_ptr<Chain> c = std::move(it->second.c);
  waiting_.erase(it);
  if (fr.pending) {  // a call must not wait again: treat as a failure
    fr.pending->cancel();
    fr = FileReply{};
    fr.status = STATUS_UNSUCCESSFUL;
  }
  const bool create = c->reqs[c->next].hdr.Command == SMB2_CREATE;
  add_reply(*c, fr);
  // MS-SMB2 3.3.5.2.7.2: a CREATE that waited (for a break's
  // acknowledgment) still names the chain's file for the related
  // requests after it.
  if (create && fr.status == STATUS_SUCCESS && !c->rsps.empty())
    if (auto d = decode_create_response(c->rsps.back().msg)) c->fid = d->FileId;
  c->next++;
  run_chain(std::move(c));
}

void Conn::cancel_request(const ServerRequest& r) {
  // MS-SMB2 3.3.5.16: an async CANCEL names the AsyncId; a sync one the
  // MessageId of a request that has not gone async yet (or has: smbd and
  // Windows match either). Nothing found: nothing is answered.
  if (r.hdr.is_async()) {
    auto it = waiting_.find(r.hdr.AsyncId);
    if (it != waiting_.end() && it->second.session_id == r.session_id) it->second.call->cancel();
    return;
  }
  if (auto run = running_.find(r.hdr.MessageId); run != running_.end()) {
    run->second = true;  // applied when the worker returns
    return;
  }
  for (auto& [id, w] : waiting_) {
    if (w.message_id == r.hdr.MessageId && w.session_id == r.session_id) {
      std::shared_ptr<PendingCall> call = w.call;
      call->cancel();  // may complete (and erase `w`) at once
      return;
    }
  }
}

void Conn::cancel_where(const std::function<bool(const Waiting&)>& pick) {
  // Collected first: a call may finish, and leave waiting_, inside cancel().
  std::vector<std::shared_ptr<PendingCall>> calls;
  for (auto& [id, w] : waiting_)
    if (pick(w)) calls.push_back(w.call);
  for (auto& call : calls) call->cancel();
}

void Conn::cancel_waiting() {
  cancel_where([](const Waiting&) { return true; });
}

}  // namespace smbkit::server
