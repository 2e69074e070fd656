// One client connection of the server: the session machine's checks, then
// the commands. NEGOTIATE, SESSION_SETUP, LOGOFF, TREE_CONNECT,
// TREE_DISCONNECT, ECHO, CANCEL and VALIDATE_NEGOTIATE run here, on the
// connection's event loop (CPU only); file commands go to a worker through
// ConnIo::run_blocking and their answers come back to the loop. A compound
// chain runs in order, one step at a time, and is answered as one frame.
//
// Single owner: every method runs on the connection's loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/spnego_acceptor.h"
#include "base/result.h"
#include "server/negotiate.h"
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
  // Runs `work` on a worker thread, then `done` on this connection's loop.
  virtual void run_blocking(std::function<void()> work, std::function<void()> done) = 0;
  // Posts `fn` to this connection's loop from any thread. The returned
  // poster stays valid after the connection is gone (it posts to the
  // loop), so `fn` must check that its connection is still open.
  virtual std::function<void(std::function<void()>)> poster() = 0;
  virtual uint64_t now_filetime() = 0;
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
  // Requests whose answer has not been queued yet.
  size_t in_flight() const { return in_flight_; }
  // Connection loss or server stop: closes every open; answers still on
  // workers are dropped when they return.
  void shutdown();
  const std::string& peer() const { return peer_; }

 private:
  struct Tree {
    std::shared_ptr<TreeCtx> ctx;
    bool encrypt = false;  // requests must be sealed (MS-SMB2 3.3.5.2.11)
  };
  struct Session {
    uint64_t id = 0;
    bool valid = false;  // authenticated (or guest / anonymous) and usable
    bool guest = false, anonymous = false;
    std::string user;
    std::shared_ptr<const Snapshot> snap;                // shares and users it authenticated against
    std::unique_ptr<auth::SpnegoNtlmAcceptor> acceptor;  // a setup in progress
    std::map<uint32_t, Tree> trees;
    uint32_t next_tree_id = 1;
  };
  // The requests of one frame and their answers.
  struct Chain {
    std::vector<session::ServerRequest> reqs;
    std::vector<session::ServerResponse> rsps;
    std::vector<Bytes> keep;  // READ data the answers point into
    size_t next = 0;
    proto::FileId fid{};      // the chain's FileId (MS-SMB2 3.3.5.2.7.2)
    uint32_t create_err = 0;  // a failed CREATE fails the related requests after it
  };

  void run_chain(std::shared_ptr<Chain> c);
  void finish_chain(Chain& c);
  // A file command's answer, back on the loop: queued, then the chain goes on.
  void file_done(const std::shared_ptr<Chain>& c, FileReply fr);
  // The inline commands: each returns the answer to queue (none for CANCEL).
  std::optional<session::ServerResponse> run_inline(const session::ServerRequest& r);
  session::ServerResponse negotiate(const session::ServerRequest& r);
  Result<void> smb1_negotiate(Bytes frame);
  NegotiatePolicy negotiate_policy();
  session::ServerResponse session_setup(const session::ServerRequest& r);
  session::ServerResponse logoff(const session::ServerRequest& r);
  session::ServerResponse tree_connect(const session::ServerRequest& r);
  session::ServerResponse tree_disconnect(const session::ServerRequest& r);
  session::ServerResponse echo(const session::ServerRequest& r);
  session::ServerResponse validate_negotiate(const session::ServerRequest& r);
  // A file command's preconditions: a valid session and tree, sealing
  // where the tree needs it. 0 when it may run.
  uint32_t check_file_command(const session::ServerRequest& r, Tree** tree);
  bool is_file_command(uint16_t command, const session::ServerRequest& r) const;
  Session* valid_session(uint64_t id);
  void send_one(session::ServerResponse& rsp);
  // Oplock and lease breaks from the file layer, sent on this loop.
  void install_break_sink();
  void send_break(const BreakNotice& n);

  ServerState& st_;
  ConnIo& io_;
  std::string peer_;
  session::ServerMachine machine_;
  std::optional<NegotiateOutcome> neg_;
  std::map<uint64_t, Session> sessions_;
  std::shared_ptr<ConnOpens> opens_;
  bool authenticated_ = false;
  bool closed_ = false;
  bool break_sink_set_ = false;
  size_t in_flight_ = 0;
};

}  // namespace smbkit::server
