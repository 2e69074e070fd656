// One client connection of the server: the session machine's checks, then
// the commands. NEGOTIATE, SESSION_SETUP, LOGOFF, TREE_CONNECT,
// TREE_DISCONNECT, ECHO, CANCEL and VALIDATE_NEGOTIATE run here, on the
// connection's event loop (CPU only); file commands go to a worker through
// ConnIo::run_blocking and their answers come back to the loop. A compound
// chain runs in order, one step at a time, and is answered as one frame.
// A file command that must wait (FileReply::pending) goes async (MS-SMB2
// 3.3.4.2): an interim response now, the final one when its PendingCall
// finishes (conn_async.cc).
//
// Single owner: every method runs on the connection's loop thread. The
// sessions it serves are server-wide (sessions.h): a session bound to
// several connections is reached from each, and its trees and opens are
// shared by them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/spnego_acceptor.h"
#include "base/result.h"
#include "proto/ioctl.h"
#include "proto/session_setup.h"
#include "server/file_service.h"
#include "server/negotiate.h"
#include "server/sessions.h"
#include "server/state.h"
#include "session/server_machine.h"

namespace smbkit::server {

// What a connection needs from its event loop.
class ConnIo {
 public:
  virtual ~ConnIo() = default;
  // Queues a frame; frames go out in the order queued. `hold` keeps what
  // the frame's payload points into alive until it is sent.
  virtual void send(session::OutFrame f, std::shared_ptr<void> hold) = 0;
  // Queues a frame whose last f.trailer bytes are `region` (a READ's data
  // left in the file): they go from the page cache to the socket without
  // a copy. The default reads them and sends a copy.
  virtual void send_region(session::OutFrame f, std::shared_ptr<void> hold, FileRegion region);
  // Queues a frame whose signature or seal is still to apply (f.head
  // empty, f.transform set): `finish` completes it on a worker thread and
  // the frame keeps its place in the order; until then it counts as
  // `size` bytes (what the finished frame will hold) against the bound on
  // queued answers. The default runs finish here.
  using FinishFrame = std::function<Result<void>(session::OutFrame&)>;
  virtual void send_finished_elsewhere(session::OutFrame f, size_t size, std::shared_ptr<void> hold,
                                       FinishFrame finish);
  // Runs `work` on a worker thread, then `done` on this connection's loop.
  virtual void run_blocking(std::function<void()> work, std::function<void()> done) = 0;
  // Posts `fn` to this connection's loop from any thread. The returned
  // poster stays valid after the connection is gone (it posts to the
  // loop), so `fn` must check that its connection is still open.
  virtual std::function<void(std::function<void()>)> poster() = 0;
  virtual uint64_t now_filetime() = 0;
  // Ends the connection once what is queued is sent: for an error found
  // outside on_frame (a frame decrypted on a worker that did not decrypt).
  virtual void end() {}
  // The peer runs on this host (a loopback address, or our own): it copies
  // what we send out of the same memory, so sendfile saves it nothing
  // (FileServiceOptions::zero_copy_same_host).
  virtual bool peer_on_this_host() const { return false; }
};

class Conn : public std::enable_shared_from_this<Conn> {
 public:
  Conn(ServerState& st, ConnIo& io, std::string peer);
  ~Conn();

  // One frame without its Direct TCP header. An error ends the
  // connection (the loop closes it after what is queued is sent).
  Result<void> on_frame(Bytes frame);
  // The 4-byte Direct TCP header's length, checked.
  Result<size_t> frame_length(ByteView hdr) const { return machine_.frame_length(hdr); }

  // A session has authenticated (the loop's unauthenticated timeout ends).
  bool authenticated() const { return authenticated_; }
  // Requests whose final answer has not been queued yet, waiting ones
  // (async) included: a connection with one is not idle.
  size_t in_flight() const { return in_flight_ + incoming_.size(); }
  // Requests gone async whose final answer has not been queued yet.
  size_t waiting() const { return waiting_.size(); }
  // What requests taken from the socket and not answered yet may still
  // add to the answers queued, for the loop's bound on them: each frame
  // waiting to be decrypted or taken (its size and the largest READ's
  // answer) and each request on a worker (its size and the most
  // its answer may hold). Requests that wait (async) are bounded by count
  // (kMaxWaiting) instead: their end may need the client's next request.
  size_t held_bytes() const { return held_bytes_; }

  // Server stop: cancels every request that waits, so that each is
  // answered (STATUS_CANCELLED) and in_flight() comes down.
  void cancel_waiting();
  // Connection loss or server stop: cancels what waits and closes every
  // open; answers still on workers are dropped when they return.
  void shutdown();

  // Runs file commands through `ex` instead of the server's FileService
  // (tests: requests that wait).
  using FileExecutor = std::function<FileReply(ConnOpens&, const CallCtx&, uint16_t command, ByteView msg)>;
  void set_executor(FileExecutor ex) { exec_ = std::move(ex); }
  // The most requests that may wait at once on one connection: past it a
  // request that would wait fails with STATUS_INSUFFICIENT_RESOURCES.
  static constexpr size_t kMaxWaiting = 512;
  const std::string& peer() const { return peer_; }

 private:
  // This connection's side of a session: the server-wide session once it
  // authenticated here or was bound here (a channel), and a setup or a
  // binding in progress.
  struct Channel {
    std::shared_ptr<ServerSession> s;                    // null while its first setup runs
    bool ready = false;                                  // a channel of s: its requests run
    bool binding = false;                                // the setup in progress binds s here
    uint64_t previous_session = 0;                       // PreviousSessionId, as its first request named it
    std::shared_ptr<const Snapshot> snap;                // what a first setup authenticates against
    std::unique_ptr<auth::SpnegoNtlmAcceptor> acceptor;  // a setup in progress
  };
  // The requests of one frame and their answers.
  struct Chain {
    std::vector<session::ServerRequest> reqs;
    std::vector<session::ServerResponse> rsps;
    std::vector<std::shared_ptr<void>> keep;  // READ data the answers point into
    std::optional<FileRegion> region;         // a lone READ's data left in the file
    size_t next = 0;
    proto::FileId fid{};      // the chain's FileId (MS-SMB2 3.3.5.2.7.2)
    uint32_t create_err = 0;  // a failed CREATE fails the related requests after it
    size_t sent = 0;          // rsps already queued (before an interim response)
  };
  // A response signed or sealed on a worker, with what its payload
  // points into.
  struct Deferred {
    session::ServerResponse rsp;
    std::shared_ptr<void> hold;
  };
  // A request gone async (MS-SMB2 3.3.1.1 Request.AsyncId): its chain
  // waits at c->next until the call's final reply comes.
  struct Waiting {
    std::shared_ptr<Chain> c;
    std::shared_ptr<PendingCall> call;
    uint64_t message_id = 0;
    uint64_t session_id = 0;
    uint32_t tree_id = 0;
  };

  // A frame the machine takes now; the requests it carries.
  Result<void> take_frame(Bytes frame);
  Result<void> run_requests(std::vector<session::ServerRequest> reqs);
  // conn_unseal.cc: large sealed frames decrypted on workers, every frame
  // still taken in the order it arrived.
  struct Incoming {
    Bytes frame;
    size_t held = 0;      // its part of held_bytes_
    bool sealed = false;  // decrypted on a worker: key and result apply
    bool ready = false;
    session::ServerMachine::UnsealKey key;
    Result<size_t> result = size_t{0};
  };
  bool unseal_elsewhere(ByteView frame) const;
  Result<void> queue_frame(Bytes frame);
  Result<void> drain_frames();
  void run_chain(std::shared_ptr<Chain> c);
  // A file command of a chain as a worker runs it: its context, what the
  // context points into, and its reply once `ran`.
  struct FileJob {
    CallCtx ctx;
    std::shared_ptr<TreeCtx> tree;
    std::shared_ptr<const Snapshot> snap;
    std::shared_ptr<ConnOpens> opens;
    FileReply reply;
    bool ran = false;
  };
  std::shared_ptr<FileJob> file_job(Chain& c, const session::ServerRequest& r,
                                    const std::shared_ptr<ServerSession>& sess, const SessionTree& tree);
  // The CHANGE_NOTIFY queued first goes to a worker once none runs.
  void next_notify();
  // Queues the chain's answers not sent yet, as one frame; with
  // `interim_async_id`, an interim response for c.reqs[c.next] ends it.
  void flush_chain(Chain& c, uint64_t interim_async_id = 0);
  void finish_chain(Chain& c);
  // A file command's reply, as the chain's answer to c.reqs[c.next].
  void add_reply(Chain& c, FileReply& fr);
  // conn_async.cc: c.reqs[c.next] must wait on `call`.
  void go_async(std::shared_ptr<Chain> c, std::shared_ptr<PendingCall> call);
  void complete(uint64_t async_id, FileReply fr);
  // MS-SMB2 3.3.5.16: CANCEL by AsyncId, or by MessageId.
  void cancel_request(const session::ServerRequest& r);
  // Cancels the waiting requests `pick` chooses (tree disconnect, logoff).
  void cancel_where(const std::function<bool(const Waiting&)>& pick);
  // The inline commands: each returns the answer to queue (none for CANCEL).
  std::optional<session::ServerResponse> run_inline(const session::ServerRequest& r);
  session::ServerResponse negotiate(const session::ServerRequest& r);
  Result<void> smb1_negotiate(Bytes frame);
  NegotiatePolicy negotiate_policy();
  // session_setup.cc: MS-SMB2 3.3.5.5.
  session::ServerResponse session_setup(const session::ServerRequest& r);
  session::ServerResponse bind_session(const session::ServerRequest& r, const proto::SessionSetupRequest& req);
  // The identity of who authenticated on `acceptor` (guest and anonymous
  // sessions as `guest account` when serving as each user); an error
  // says why the session is refused.
  Result<SessionAuth> session_auth(const auth::SpnegoNtlmAcceptor& acceptor, const Snapshot& snap);
  // This connection's hooks for a session it has a channel of.
  ChannelHooks channel_hooks();
  // A session ended elsewhere (or here, after its last answer): its
  // waiting requests cancelled, its keys and channel dropped.
  void forget_session(uint64_t id);
  session::ServerResponse logoff(const session::ServerRequest& r);
  session::ServerResponse tree_connect(const session::ServerRequest& r);
  session::ServerResponse tree_disconnect(const session::ServerRequest& r);
  session::ServerResponse echo(const session::ServerRequest& r);
  session::ServerResponse validate_negotiate(const session::ServerRequest& r);
  // interfaces.cc: FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2 3.3.5.15.11).
  session::ServerResponse network_interfaces(const session::ServerRequest& r, const proto::IoctlRequest& q);
  // A file command's preconditions: a valid session and tree, sealing
  // where the tree needs it. 0 when it may run.
  uint32_t check_file_command(const session::ServerRequest& r, std::shared_ptr<ServerSession>* s, SessionTree* tree);
  bool is_file_command(uint16_t command, const session::ServerRequest& r) const;
  // The session `id` when this connection is one of its channels and it
  // has not ended.
  std::shared_ptr<ServerSession> valid_session(uint64_t id);
  void send_one(session::ServerResponse& rsp);
  // An oplock or lease break of a session's open, sent on this loop.
  void send_break(const BreakNotice& n);

  ServerState& st_;
  ConnIo& io_;
  std::string peer_;
  session::ServerMachine machine_;
  std::optional<NegotiateOutcome> neg_;
  const uint64_t conn_id_;
  std::map<uint64_t, Channel> chans_;
  // Sessions to forget once the answers queued now are sent: a LOGOFF's
  // or a failed setup's answer is signed with the key it drops.
  std::vector<uint64_t> forget_after_send_;
  bool authenticated_ = false;
  bool closed_ = false;
  size_t in_flight_ = 0;
  size_t held_bytes_ = 0;
  FileExecutor exec_;
  // Requests gone async, by AsyncId; MessageIds of file commands on a
  // worker, with whether a CANCEL named them there.
  std::map<uint64_t, Waiting> waiting_;
  std::map<uint64_t, bool> running_;
  // CHANGE_NOTIFYs go to a worker one at a time, in the order they came:
  // two on one open wait in that order, and the first takes the changes
  // buffered before it. Chains whose next request is a CHANGE_NOTIFY
  // wait here while one runs.
  bool notify_running_ = false;
  std::deque<std::shared_ptr<Chain>> notify_queue_;
  uint64_t next_async_id_ = 1;
  // Responses with at least this much payload are signed or sealed on a
  // worker (smbkitd:parallel crypto); 0: never.
  size_t parallel_crypto_min_ = 0;
  // Frames received and not yet taken: the first is being decrypted.
  std::deque<std::shared_ptr<Incoming>> incoming_;
};

}  // namespace smbkit::server
