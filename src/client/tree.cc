// File operations on a connected share.
#include <algorithm>
#include <mutex>
#include <optional>

#include "auth/crypto.h"
#include "base/completion.h"
#include "client/client.h"
#include "client/listing.h"
#include "client/query_info.h"
#include "client/open_request.h"
#include "client/reconnect.h"
#include "proto/close.h"
#include "proto/create.h"
#include "proto/create_contexts.h"
#include "proto/flush.h"
#include "proto/lock.h"
#include "proto/fscc_dir_info.h"
#include "proto/fscc_file_info.h"
#include "proto/fscc_fs_info.h"
#include "proto/query_directory.h"
#include "proto/query_info.h"
#include "proto/read.h"
#include "proto/set_info.h"
#include "proto/tree_disconnect.h"
#include "proto/write.h"

namespace smbkit::client {

using namespace proto;

Tree::~Tree() {
  {
    MutexLock g(client_->state_mu_);
    std::erase(client_->trees_, this);
  }
  if (!connected_ || client_->conn().dead()) return;
  auto r = request(SMB2_TREE_DISCONNECT, [](ByteWriter& w) {
    return encode_tree_disconnect_request(TreeDisconnectRequest{}, w);
  });
  if (r) (void)client_->conn().call(std::move(*r));
}

uint32_t Tree::id() const {
  MutexLock g(client_->state_mu_);
  return tree_id_;
}

bool Tree::encrypted() const {
  MutexLock g(client_->state_mu_);
  return encrypt_;
}

Result<Tree::Route> Tree::route(const FileId* id, FileId* current, bool any_channel) {
  MutexLock g(client_->state_mu_);
  Route rt;
  rt.conn = any_channel ? client_->io_channel_locked() : client_->conn_.get();
  rt.session_id = client_->session_.session_id;
  rt.tree_id = tree_id_;
  rt.encrypt = encrypt_;
  rt.gen = client_->gen_;
  rt.session_gen = client_->session_gen_;
  rt.dialect = rt.conn->server().dialect;
  if (id) {
    SMBKIT_TRY(*current, handles_.resolve(*id));
  }
  return rt;
}

Tree::Retry Tree::retry_kind(const Result<session::Response>& r, Connection* conn, int attempt) const {
  const ReconnectOptions& ro = client_->opts_.reconnect;
  if (!client_->reconnector_ || attempt >= ro.max_resends) return Retry::no;
  if (!r) {
    // Whatever failed on a connection that is now dead (reset, closed) is
    // sent again on the next one; not when it died of a message that
    // failed verification: something on the path is lying, and a new
    // connection through it would only be lied to again.
    if (auto dead = conn->dead()) return session::is_security_violation(*dead) ? Retry::no : Retry::lost;
    // mount.cifs `hard`: an unresponsive server is treated like a lost one.
    if (ro.hard && r.error().status == STATUS_IO_TIMEOUT) return Retry::unresponsive;
    return Retry::no;
  }
  if (status_needs_new_session(r->hdr.Status)) return Retry::expired;
  return Retry::no;
}

namespace {
// MS-SMB2 2.2.1.2 / 3.2.4.1: on 3.x a request re-sent after a reconnect
// carries SMB2_FLAGS_REPLAY_OPERATION so the server can recognise a replay
// of one it may already have run.
Cause cause_of(Tree::Retry r) {
  return r == Tree::Retry::expired ? Cause::session_expired
                                   : r == Tree::Retry::unresponsive ? Cause::unresponsive : Cause::lost;
}

// Sends of one READ or WRITE after losing channels: each loss takes one
// channel out, so this bounds the loop even if every re-bound one fails.
constexpr int kChannelResends = 2 * static_cast<int>(Client::kMaxChannels);

// Before a request the server answered with STATUS_FILE_NOT_AVAILABLE is
// replayed: growing, at most half a second (kChannelResends of them bound
// the whole at about 14 s).
std::chrono::milliseconds replay_pause(int attempt) {
  return std::chrono::milliseconds(std::min(500, 10 * (1 << std::min(attempt, 6))));
}

bool replay_flag_for(uint16_t command, uint16_t dialect) {
  if (dialect < SMB2_DIALECT_0300) return false;
  return command == SMB2_CREATE || command == SMB2_WRITE || command == SMB2_SET_INFO ||
         command == SMB2_IOCTL;
}
}  // namespace

Result<session::Response> Tree::transact(const FileId* id, uint16_t command, const Encode& encode,
                                         const std::string& what, std::initializer_list<uint32_t> also_ok,
                                         uint64_t charge_bytes, const SentHook& on_sent) {
  for (int attempt = 0;; attempt++) {
    FileId cur{};
    SMBKIT_TRY(auto rt, route(id, &cur));
    SMBKIT_TRY(auto r, make_request(command, rt.session_id, rt.tree_id,
                                    [&](ByteWriter& w) { return encode(w, rt, cur); }));
    r.encrypt = rt.encrypt;
    r.charge_bytes = charge_bytes;
    if (attempt > 0 && replay_flag_for(command, rt.dialect)) r.hdr.Flags |= SMB2_FLAGS_REPLAY_OPERATION;
    Result<session::Response> resp = Error{};
    if (on_sent) {
      Completion<Result<session::Response>> answer;
      uint64_t mid = 0;
      rt.conn->submit(std::move(r), answer.callback(), {}, &mid);
      if (!answer.ready() && mid) on_sent(*rt.conn, mid);
      resp = answer.wait();
    } else {
      resp = rt.conn->call(std::move(r));
    }
    auto rk = retry_kind(resp, rt.conn, attempt);
    if (rk != Retry::no) {
      SMBKIT_CHECK(client_->reconnector_->wait(rt.gen, cause_of(rk)));
      client_->reconnector_->count_resend();
      continue;
    }
    // Without reconnect, a bound channel that took the lost first
    // connection's place (same session, trees and handles) carries it
    // again; with reconnect the Reconnector does the same.
    if (!resp && !client_->reconnector_ && attempt < kChannelResends && client_->channel_lost(rt.conn)) continue;
    if (!resp) return resp.take_error();
    uint32_t st = resp->hdr.Status;
    if (st == STATUS_FILE_NOT_AVAILABLE && (command == SMB2_SET_INFO || command == SMB2_IOCTL) &&
        rt.dialect >= SMB2_DIALECT_0300 && attempt < kChannelResends) {
      // As for WRITEs (write_attempt): replayed after a pause.
      std::this_thread::sleep_for(replay_pause(attempt));
      continue;
    }
    if (st == STATUS_SUCCESS || std::find(also_ok.begin(), also_ok.end(), st) != also_ok.end())
      return resp;
    return nt_error(st, what);
  }
}

uint32_t Tree::max_read() const {
  const auto& s = client_->conn().server();
  // Without LARGE_MTU every request is one credit: 64 KiB at most.
  uint32_t cap = (s.dialect > SMB2_DIALECT_0202 && (s.capabilities & SMB2_GLOBAL_CAP_LARGE_MTU))
                     ? (8u << 20) : 65536u;
  return std::min(s.max_read, cap);
}
uint32_t Tree::max_write() const {
  const auto& s = client_->conn().server();
  uint32_t cap = (s.dialect > SMB2_DIALECT_0202 && (s.capabilities & SMB2_GLOBAL_CAP_LARGE_MTU))
                     ? (8u << 20) : 65536u;
  return std::min(s.max_write, cap);
}

std::string Tree::url_of(const std::string& path) const {
  std::string p = path;
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  return client_->host_url() + "/" + share_ + (p.empty() ? "" : "/" + p);
}

Result<session::Response> Tree::call(session::Request req, const std::string& what,
                                     std::initializer_list<uint32_t> also_ok) {
  SMBKIT_TRY(auto rt, route(nullptr, nullptr));
  SMBKIT_TRY(auto resp, rt.conn->call(std::move(req)));
  uint32_t st = resp.hdr.Status;
  if (st == STATUS_SUCCESS || std::find(also_ok.begin(), also_ok.end(), st) != also_ok.end())
    return resp;
  return nt_error(st, what);
}

// Appends a request to a compound frame on route rt; each one after the
// first is related (MS-SMB2 3.2.4.1.4: it acts on the file the frame's
// CREATE opened). False if it could not be encoded.
static bool add_to_frame(std::vector<session::Request>& reqs, const Tree::Route& rt, uint16_t command,
                         const std::function<Result<void>(ByteWriter&)>& encode, uint64_t charge) {
  auto r = make_request(command, rt.session_id, rt.tree_id, encode);
  if (!r) return false;
  r->encrypt = rt.encrypt;
  r->charge_bytes = charge;
  if (!reqs.empty()) r->hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  reqs.push_back(std::move(*r));
  return true;
}

// The CREATE of e with what extras.prefetch asks to ride along, related
// (MS-SMB2 3.2.4.1.4; FileId all ones: the file the CREATE opened), in one
// frame: a QUERY_INFO of FileAllInformation if want_stat, then a READ of
// the first bytes if `into` is not empty. The QUERY_INFO goes first: a
// READ at the end of file fails, and a server may fail the related
// requests after a failed one. nullopt: the frame could not be used (the
// caller opens step by step).
static std::optional<Result<session::Response>> open_compound(Tree& t, const HandleEntry& e,
                                                              const OpenExtras& extras, uint64_t& gen) {
  auto rt = t.route(nullptr, nullptr);
  if (!rt) return std::nullopt;
  gen = rt->session_gen;
  Prefetch& pf = *extras.prefetch;
  const bool with_stat = pf.want_stat, with_read = !pf.into.empty();
  std::vector<session::Request> reqs;
  auto add = [&](uint16_t command, const std::function<Result<void>(ByteWriter&)>& encode, uint64_t charge) {
    return add_to_frame(reqs, *rt, command, encode, charge);
  };
  const FileId related{~0ull, ~0ull};
  CreateRequest c = make_create(e, rt->dialect, CreateMode::first);
  if (!add(SMB2_CREATE, [&](ByteWriter& w) { return encode_create_request(c, w); }, 0)) return std::nullopt;
  const InfoQuery q = all_information_query(e.path);
  if (with_stat && !add(SMB2_QUERY_INFO, [&](ByteWriter& w) {
        return encode_query_info_request(query_info_request(q, related), w);
      }, q.output_length))
    return std::nullopt;
  ReadRequest rd;
  rd.Length = static_cast<uint32_t>(std::min<size_t>(pf.into.size(), t.max_read()));
  rd.FileId = related;
  if (with_read && !add(SMB2_READ, [&](ByteWriter& w) { return encode_read_request(rd, w); }, rd.Length))
    return std::nullopt;
  auto resps = rt->conn->call_compound(std::move(reqs));
  // Lost, or the session expired (what rode along then failed too): step
  // by step, which waits for the reconnect.
  if (!resps || status_needs_new_session(resps->front().hdr.Status)) return std::nullopt;
  if (with_stat) {
    auto info = query_info_answer((*resps)[1], q, "stat");
    if (auto s = info ? stat_of_all_information(*info) : Result<FileStat>(info.take_error())) pf.stat = std::move(*s);
  }
  if (with_read) {
    const session::Response& rr = resps->back();
    if (rr.hdr.Status == STATUS_END_OF_FILE) {
      pf.got = 0;
    } else if (rr.hdr.Status == STATUS_SUCCESS) {
      if (auto d = decode_read_response(rr.msg()); d && d->Data.size() <= pf.into.size()) {
        std::copy(d->Data.begin(), d->Data.end(), pf.into.begin());
        pf.got = d->Data.size();
      }
    }
  }
  const session::Response& created = (*resps)[0];
  if (created.hdr.Status != STATUS_SUCCESS) return Result<session::Response>(nt_error(created.hdr.Status, t.url_of(e.path)));
  return std::move((*resps)[0]);
}

Result<OpenFile> Tree::open(const std::string& path, const OpenParams& p, const OpenExtras* extras) {
  bool durable = p.durable && client_->reconnector_ != nullptr;
  Guid16 create_guid{};
  if (durable) auth::random_bytes(create_guid);
  HandleEntry e;
  e.path = path;
  e.access = p.access;
  e.disposition = p.disposition;
  e.options = p.options;
  e.attributes = p.attributes;
  e.share = p.share;
  e.want_durable = durable;
  e.create_guid = create_guid;
  if (extras) e.lease = extras->lease;
  uint64_t gen = 0;
  std::optional<Result<session::Response>> created;
  if (extras && extras->prefetch) {
    extras->prefetch->got.reset();
    extras->prefetch->stat.reset();
    if (!durable && (!extras->prefetch->into.empty() || extras->prefetch->want_stat))
      created = open_compound(*this, e, *extras, gen);
  }
  if (!created)
    created = transact(nullptr, SMB2_CREATE, [&](ByteWriter& w, const Route& rt, const FileId&) {
      gen = rt.session_gen;
      CreateRequest c = make_create(e, rt.dialect, CreateMode::first);
      return encode_create_request(c, w);
    }, url_of(path));
  SMBKIT_TRY(auto resp, std::move(*created));
  SMBKIT_TRY(auto cr, decode_create_response(resp.msg()));
  if (extras && extras->response) *extras->response = cr;
  OpenFile f;
  f.id = cr.FileId;
  f.size = cr.EndofFile;
  f.attributes = cr.FileAttributes;
  f.create_action = cr.CreateAction;
  f.created = stat_of_create(cr);
  e.stable = e.current = cr.FileId;
  e.disk_file_id = on_disk_id(cr);
  e.end_of_file = cr.EndofFile;
  e.last_write_time = cr.LastWriteTime;
  e.durable = granted_durability(cr);
  MutexLock g(client_->state_mu_);
  // A reconnect between the response and now would not have known this
  // handle: it belongs to the old connection.
  if (client_->session_gen_ != gen)
    e.lost = nt_error(STATUS_FILE_CLOSED, url_of(path) + ": the connection was re-established during the open");
  SMBKIT_CHECK(handles_.add(std::move(e)));
  return f;
}

void Tree::note_locks(const FileId& id, std::span<const LockElement> locks) {
  MutexLock g(client_->state_mu_);
  handles_.note_locks(id, locks);
}

Result<void> Tree::close(const FileId& id) {
  // A CLOSE does not wait for a reconnect: a handle whose connection is
  // gone is closed on the server already (a durable one once its timeout
  // passes), and the reconnect must not bring it back. So the handle
  // leaves the table first, and a CLOSE that fails with its connection is
  // done. (Waiting here would keep a `hard` mount whose server is gone for
  // good in RELEASE forever, even after it is unmounted.)
  FileId cur{};
  auto rt = route(&id, &cur);
  {
    MutexLock g(client_->state_mu_);
    handles_.remove(id);
  }
  if (!rt) return rt.take_error();  // lost in a reconnect: that error
  for (int attempt = 0;; attempt++) {
    if (rt->conn->dead()) {
      // Unless a bound channel took the first connection's place: then
      // the session, and the open, live on (MS-SMB2 3.3.7.1) and the
      // CLOSE goes there.
      if (attempt >= kChannelResends || !client_->channel_lost(rt->conn)) return {};
      rt = route(nullptr, nullptr);
      if (!rt) return rt.take_error();
      continue;
    }
    SMBKIT_TRY(auto req, make_request(SMB2_CLOSE, rt->session_id, rt->tree_id, [&](ByteWriter& w) {
      CloseRequest c;
      c.FileId = cur;
      return encode_close_request(c, w);
    }));
    req.encrypt = rt->encrypt;
    auto resp = rt->conn->call(std::move(req));
    if (!resp) {
      if (rt->conn->dead()) continue;
      return resp.take_error();  // e.g. STATUS_IO_TIMEOUT: left open until the connection ends
    }
    // Sent again after a loss: the first one may have closed it.
    if (attempt > 0 && resp->hdr.Status == STATUS_FILE_CLOSED) return {};
    if (resp->hdr.Status != STATUS_SUCCESS) return nt_error(resp->hdr.Status, "close");
    return {};
  }
}

void Tree::read_async(const FileId& id, uint64_t offset, MutableByteView dest, IoDone done,
                      const transport::Pipe* splice_into) {
  read_attempt(id, offset, dest, std::move(done), 0, splice_into);
}

// Reads and writes up to these sizes may share a compound frame
// (Connection::submit_gathered).
constexpr uint32_t kGatherReadMax = 64u << 10;
constexpr uint32_t kGatherWriteMax = 64u << 10;

void Tree::read_attempt(FileId id, uint64_t offset, MutableByteView dest, IoDone done, int attempt,
                        const transport::Pipe* pipe) {
  FileId cur{};
  auto rt = route(&id, &cur, true);
  if (!rt) return done(rt.take_error());
  ReadRequest rq;
  rq.Length = static_cast<uint32_t>(std::min<size_t>(dest.size(), max_read()));
  rq.Offset = offset;
  rq.FileId = cur;
  auto r = make_request(SMB2_READ, rt->session_id, rt->tree_id,
                        [&](ByteWriter& w) { return encode_read_request(rq, w); });
  if (!r) return done(r.take_error());
  r->encrypt = rt->encrypt;
  r->charge_bytes = rq.Length;
  uint32_t asked = rq.Length;
  Connection* conn = rt->conn;
  uint64_t gen = rt->gen;
  conn->io_begin(asked);
  auto completion =
      [this, id, conn, gen, attempt, dest, asked, offset, pipe, done = std::move(done)](Result<session::Response> resp) mutable {
        conn->io_end(asked);
        // A lost channel of several: at once on another (a READ may be
        // sent twice).
        if (!resp && attempt < kChannelResends && client_->channel_lost(conn)) {
          if (pipe) pipe->discard();  // what the failed attempt left
          return read_attempt(id, offset, dest, std::move(done), attempt + 1, pipe);
        }
        auto rk = retry_kind(resp, conn, attempt);
        if (rk != Retry::no) {
          client_->reconnector_->after(gen, cause_of(rk),
                                       [this, id, offset, dest, attempt, pipe, done = std::move(done)](Result<void> ok) mutable {
                                         if (!ok) return done(ok.take_error());
                                         client_->reconnector_->count_resend();
                                         if (pipe) pipe->discard();  // what a failed attempt left
                                         read_attempt(id, offset, dest, std::move(done), attempt + 1, pipe);
                                       });
          return;
        }
        if (!resp) return done(resp.take_error());
        uint32_t st = resp->hdr.Status;
        if (st == STATUS_END_OF_FILE) return done(size_t{0});
        if (st != STATUS_SUCCESS) return done(nt_error(st, "read at offset " + std::to_string(offset)));
        if (!resp->direct.empty()) {
          if (resp->direct.size() > asked) return done(protocol_error("READ returned more than asked"));
          return done(resp->direct.size());  // already in dest
        }
        auto rr = decode_read_response(resp->msg());
        if (!rr) return done(rr.take_error());
        if (rr->Data.size() > asked) return done(protocol_error("READ returned more than asked"));
        std::copy(rr->Data.begin(), rr->Data.end(), dest.begin());
        done(rr->Data.size());
      };
  // Small reads (random 4 KiB reads at a high queue depth) go out gathered
  // with the others submitted meanwhile, as one compound (the data is then
  // copied from the frame); larger ones alone, received straight into dest.
  if (asked <= kGatherReadMax) conn->submit_gathered(std::move(*r), std::move(completion));
  else conn->submit(std::move(*r), std::move(completion), dest.first(asked), nullptr, pipe);
}

void Tree::write_async(const FileId& id, uint64_t offset, ByteView src, IoDone done) {
  write_attempt(id, offset, src, std::move(done), 0);
}

void Tree::write_attempt(FileId id, uint64_t offset, ByteView src, IoDone done, int attempt) {
  FileId cur{};
  auto rt = route(&id, &cur, true);
  if (!rt) return done(rt.take_error());
  WriteRequest wq;
  wq.Length = static_cast<uint32_t>(std::min<size_t>(src.size(), max_write()));
  wq.Offset = offset;
  wq.FileId = cur;
  // Small writes (random 4 KiB writes at a high queue depth) carry their
  // data inside the request, so they can go out gathered in a compound
  // like small reads; larger ones are sent from the caller's buffer.
  const bool gather = wq.Length <= kGatherWriteMax;
  auto r = make_request(SMB2_WRITE, rt->session_id, rt->tree_id, [&](ByteWriter& w) -> Result<void> {
    SMBKIT_CHECK(encode_write_request(wq, w));
    if (gather) w.bytes(src.first(wq.Length));
    return ok_result();
  });
  if (!r) return done(r.take_error());
  r->encrypt = rt->encrypt;
  if (attempt > 0 && replay_flag_for(SMB2_WRITE, rt->dialect)) r->hdr.Flags |= SMB2_FLAGS_REPLAY_OPERATION;
  if (!gather) r->payload = src.first(wq.Length);
  r->charge_bytes = wq.Length;
  uint32_t sent = wq.Length;
  Connection* conn = rt->conn;
  uint64_t gen = rt->gen;
  conn->io_begin(sent);
  auto completion = [this, id, conn, gen, attempt, src, sent, offset,
                     done = std::move(done)](Result<session::Response> resp) mutable {
    conn->io_end(sent);
    // A lost channel of several: at once on another, flagged as a replay
    // on 3.x (MS-SMB2 3.2.4.1.7: the server may have written it already;
    // writing the same bytes again at the same offset changes nothing).
    if (!resp && attempt < kChannelResends && client_->channel_lost(conn))
      return write_attempt(id, offset, src, std::move(done), attempt + 1);
    // MS-SMB2 3.2.5 (WRITE response), 3.3.5.2.10: sent with a ChannelSequence the
    // server no longer takes (a channel was lost meanwhile), or a replay
    // it cannot order yet (requests of the older sequence still running):
    // sent again as a replay, after a pause.
    if (resp && resp->hdr.Status == STATUS_FILE_NOT_AVAILABLE && attempt < kChannelResends &&
        conn->server().dialect >= SMB2_DIALECT_0300)
      return client_->later(replay_pause(attempt), [this, id, offset, src, attempt, done = std::move(done)]() mutable {
        write_attempt(id, offset, src, std::move(done), attempt + 1);
      });
    auto rk = retry_kind(resp, conn, attempt);
    if (rk != Retry::no) {
      client_->reconnector_->after(gen, cause_of(rk),
                                   [this, id, offset, src, attempt, done = std::move(done)](Result<void> ok) mutable {
                                     if (!ok) return done(ok.take_error());
                                     client_->reconnector_->count_resend();
                                     write_attempt(id, offset, src, std::move(done), attempt + 1);
                                   });
      return;
    }
    if (!resp) return done(resp.take_error());
    if (resp->hdr.Status != STATUS_SUCCESS)
      return done(nt_error(resp->hdr.Status, "write at offset " + std::to_string(offset)));
    auto wr = decode_write_response(resp->msg());
    if (!wr) return done(wr.take_error());
    if (wr->Count > sent) return done(protocol_error("WRITE reported more than sent"));
    done(size_t{wr->Count});
  };
  if (gather) conn->submit_gathered(std::move(*r), std::move(completion));
  else conn->submit(std::move(*r), std::move(completion));
}

Result<size_t> Tree::read(const FileId& id, uint64_t offset, MutableByteView buf) {
  Completion<Result<size_t>> io;
  read_async(id, offset, buf, io.callback());
  return io.wait();
}

Result<size_t> Tree::write(const FileId& id, uint64_t offset, ByteView data) {
  Completion<Result<size_t>> io;
  write_async(id, offset, data, io.callback());
  return io.wait();
}

Result<void> Tree::flush(const FileId& id) {
  SMBKIT_TRY(auto resp, transact(&id, SMB2_FLUSH, [&](ByteWriter& w, const Route&, const FileId& cur) {
               FlushRequest f;
               f.FileId = cur;
               return encode_flush_request(f, w);
             }, "flush"));
  (void)resp;
  return {};
}

namespace {
template <class Info>
Result<Bytes> set_info_buffer(const Info& v) {
  return encode_info(v);
}
}  // namespace

Result<void> Tree::set_info(const FileId& id, uint8_t cls, Bytes buf, const std::string& what) {
  SetInfoRequest s;
  s.InfoType = SMB2_0_INFO_FILE;
  s.FileInfoClass = cls;
  s.Buffer = std::move(buf);
  SMBKIT_TRY(auto resp, transact(&id, SMB2_SET_INFO, [&](ByteWriter& w, const Route&, const FileId& cur) {
               s.FileId = cur;
               return encode_set_info_request(s, w);
             }, what));
  (void)resp;
  return {};
}

static Result<void> do_set_info(Tree& t, const FileId& id, uint8_t cls, Bytes buf, const std::string& what) {
  return t.set_info(id, cls, std::move(buf), what);
}

Result<void> Tree::set_end_of_file(const FileId& id, uint64_t size) {
  FileEndOfFileInformation e;
  e.EndOfFile = size;
  SMBKIT_TRY(Bytes b, set_info_buffer(e));
  return do_set_info(*this, id, FileEndOfFileInformation::kInfoClass, std::move(b), "truncate");
}

Result<FileStat> Tree::stat_handle(const FileId& id) {
  SMBKIT_TRY(Bytes buf, query_info(*this, id, all_information_query(), "stat"));
  return stat_of_all_information(buf);
}

std::optional<Result<std::vector<session::Response>>> Tree::compound_on(const std::string& path,
                                                                          const OpenParams& p,
                                                                          const std::vector<Related>& middle) {
  // MS-SMB2 3.2.4.1.4: CREATE, the requests on the file it opened (related:
  // FileId all ones, 3.2.4.1.4 / 3.3.5.2.7.2), and its CLOSE, in one frame:
  // one round trip. The handle never outlives the frame, so it is not in
  // the handle table.
  auto rt = route(nullptr, nullptr);
  if (!rt) return std::nullopt;
  const FileId related{~0ull, ~0ull};
  CreateRequest c;
  c.DesiredAccess = p.access;
  c.ShareAccess = p.share;
  c.CreateDisposition = p.disposition;
  c.CreateOptions = p.options;
  c.FileAttributes = p.attributes;
  c.Name = to_smb_path(path);
  CloseRequest cl;
  cl.FileId = related;
  std::vector<session::Request> reqs;
  auto add = [&](uint16_t command, const std::function<Result<void>(ByteWriter&)>& encode, uint64_t charge) {
    return add_to_frame(reqs, *rt, command, encode, charge);
  };
  if (!add(SMB2_CREATE, [&](ByteWriter& w) { return encode_create_request(c, w); }, 0)) return std::nullopt;
  for (const Related& m : middle)
    if (!add(m.command, [&](ByteWriter& w) { return m.encode(w, related); }, m.charge_bytes)) return std::nullopt;
  if (!add(SMB2_CLOSE, [&](ByteWriter& w) { return encode_close_request(cl, w); }, 0)) return std::nullopt;
  auto resps = rt->conn->call_compound(std::move(reqs));
  // A lost connection or an expired session: the step-by-step path waits
  // for the reconnect and tries again.
  if (!resps) return std::nullopt;
  for (const auto& r : *resps)
    if (status_needs_new_session(r.hdr.Status)) return std::nullopt;
  const auto& created = resps->front();
  if (created.hdr.Status != STATUS_SUCCESS) return Result<std::vector<session::Response>>(nt_error(created.hdr.Status, url_of(path)));
  if (resps->back().hdr.Status != STATUS_SUCCESS) {
    // A server may fail the requests after a failed one in the chain,
    // CLOSE included (3.3.5.2.7.2): close what the CREATE opened.
    if (auto cr = decode_create_response(created.msg())) close_quietly(*rt->conn, rt->session_id, rt->tree_id, rt->encrypt, cr->FileId);
  }
  resps->pop_back();
  return resps;
}

// MS-SMB2 3.2.4.1.4: CREATE with p, a SET_INFO for each of `infos` (in
// order), a QUERY_INFO of FileAllInformation if `query`, and CLOSE, in one
// compound frame; step by step (open, requests, close) when the frame
// cannot be used (connection lost, session expired). The first failure is
// the error (a SET_INFO's status named `what`); the file's attributes
// after the changes if `query`.
static Result<std::optional<FileStat>> on_path(Tree& t, const std::string& path, const OpenParams& p,
                                               const std::vector<Tree::InfoToSet>& infos, bool query,
                                               const std::string& what) {
  std::vector<Tree::Related> middle;
  for (const auto& i : infos)
    middle.push_back({SMB2_SET_INFO, [&i](ByteWriter& w, const FileId& id) {
                        SetInfoRequest s;
                        s.InfoType = SMB2_0_INFO_FILE;
                        s.FileInfoClass = i.info_class;
                        s.Buffer = i.buffer;
                        s.FileId = id;
                        return encode_set_info_request(s, w);
                      }});
  const InfoQuery q = all_information_query(path);
  if (query) middle.push_back(related_query(q));
  auto stat_of = [](const Bytes& buf) -> Result<std::optional<FileStat>> {
    SMBKIT_TRY(FileStat s, stat_of_all_information(buf));
    return std::optional<FileStat>(std::move(s));
  };
  if (auto r = t.compound_on(path, p, middle)) {
    if (!*r) return (*r).take_error();
    const auto& resps = **r;
    for (size_t i = 0; i < infos.size(); i++)
      if (uint32_t st = resps[1 + i].hdr.Status; st != STATUS_SUCCESS) return nt_error(st, what);
    if (!query) return std::optional<FileStat>{};
    SMBKIT_TRY(auto info, query_info_answer(resps.back(), q, t.url_of(path)));
    return stat_of(info);
  }
  SMBKIT_TRY(auto f, t.open(path, p));
  Result<std::optional<FileStat>> out = std::optional<FileStat>{};
  for (const auto& i : infos) {
    if (auto set = t.set_info(f.id, i.info_class, i.buffer, what); !set) {
      out = set.take_error();
      break;
    }
  }
  if (out && query) {
    if (auto info = query_info(t, f.id, q, t.url_of(path))) out = stat_of(*info);
    else out = info.take_error();
  }
  auto c = t.close(f.id);
  if (out && !c) return c.take_error();
  return out;
}

// on_path's stat, named by the path's last component.
static Result<FileStat> named_stat_on_path(Tree& t, const std::string& path, const OpenParams& p,
                                           const std::vector<Tree::InfoToSet>& infos, const std::string& what) {
  SMBKIT_TRY(auto s, on_path(t, path, p, infos, true, what));
  auto pos = path.find_last_of("/\\");
  s->name = pos == std::string::npos ? path : path.substr(pos + 1);
  return std::move(*s);
}

Result<FileStat> Tree::stat(const std::string& path) {
  OpenParams p;
  p.access = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  return named_stat_on_path(*this, path, p, {}, url_of(path));
}

Result<FileStat> Tree::set_info_on_path(const std::string& path, uint32_t access, const std::vector<InfoToSet>& infos,
                                        const std::string& what) {
  OpenParams p;
  p.access = access | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  return named_stat_on_path(*this, path, p, infos, what);
}

Result<void> Tree::list_each(const std::string& dir, const std::string& pattern, const ListingSink& each) {
  OpenParams p;
  p.access = FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_DIRECTORY_FILE;
  ListingAccumulator acc(client_->opts_.max_listing_entries, url_of(dir));
  const uint32_t asked = std::min<uint32_t>(client_->conn().server().max_transact, 1u << 20);
  {
    // One round trip for a listing that fits one response: CREATE,
    // QUERY_DIRECTORY twice (the second should say STATUS_NO_MORE_FILES),
    // CLOSE. A longer listing is read step by step instead.
    QueryDirectoryRequest q;
    q.FileInformationClass = FILE_ID_BOTH_DIRECTORY_INFORMATION;
    q.FileName = pattern;
    q.OutputBufferLength = asked;
    auto query = [&](uint8_t flags) {
      return Related{SMB2_QUERY_DIRECTORY, [&q, flags](ByteWriter& w, const FileId& id) {
                       QueryDirectoryRequest r = q;
                       r.Flags = flags;
                       r.FileId = id;
                       return encode_query_directory_request(r, w);
                     }, q.OutputBufferLength};
    };
    auto r = compound_on(dir, p, {query(SMB2_RESTART_SCANS), query(0)});
    if (r && !*r) return (*r).take_error();
    if (r) {
      const auto& first = (**r)[1];
      const auto& second = (**r)[2];
      // MS-SMB2 3.3.5.18: a first query that matches nothing is
      // STATUS_NO_SUCH_FILE: an empty listing.
      if (first.hdr.Status == STATUS_NO_MORE_FILES || first.hdr.Status == STATUS_NO_SUCH_FILE) return {};
      if (first.hdr.Status != STATUS_SUCCESS) return nt_error(first.hdr.Status, url_of(dir));
      if (second.hdr.Status == STATUS_NO_MORE_FILES) {
        SMBKIT_TRY(size_t n, acc.add(first.msg(), asked, each));
        (void)n;
        return {};
      }
      if (second.hdr.Status != STATUS_SUCCESS) return nt_error(second.hdr.Status, url_of(dir));
      // More than two responses' worth: read it all step by step (the
      // compound's entries were not delivered).
    }
  }
  SMBKIT_TRY(auto f, open(dir, p));
  Result<void> out;
  uint64_t scan_gen = 0;
  bool restart = false;
  // MS-SMB2 3.2.4.17: repeat QUERY_DIRECTORY until STATUS_NO_MORE_FILES.
  // No round limit: each round delivers a new entry or ends the listing
  // (the accumulator's cap and repetition check).
  for (bool first = true;; first = false) {
    QueryDirectoryRequest q;
    q.FileInformationClass = FILE_ID_BOTH_DIRECTORY_INFORMATION;
    q.Flags = first ? SMB2_RESTART_SCANS : 0;
    q.FileName = pattern;
    q.OutputBufferLength = asked;
    auto resp = transact(&f.id, SMB2_QUERY_DIRECTORY, [&](ByteWriter& w, const Route& rt, const FileId& cur) {
      if (first) scan_gen = rt.session_gen;
      if (rt.session_gen != scan_gen) {
        // A listing cut by a reconnect starts over on the reopened handle
        // (an enumeration position does not survive a reopen).
        q.Flags = SMB2_RESTART_SCANS;
        restart = true;
        scan_gen = rt.session_gen;
      }
      q.FileId = cur;
      return encode_query_directory_request(q, w);
    }, url_of(dir), {STATUS_NO_MORE_FILES, STATUS_NO_SUCH_FILE}, q.OutputBufferLength);
    if (!resp) { out = resp.take_error(); break; }
    if (restart) acc.restart();
    restart = false;
    if (resp->hdr.Status == STATUS_NO_MORE_FILES || resp->hdr.Status == STATUS_NO_SUCH_FILE) break;
    auto n = acc.add(resp->msg(), asked, each);
    if (!n) { out = n.take_error(); break; }
    if (*n == 0) break;
  }
  (void)close(f.id);
  return out;
}

Result<std::vector<FileStat>> Tree::list(const std::string& dir, const std::string& pattern) {
  std::vector<FileStat> out;
  SMBKIT_CHECK(list_each(dir, pattern, [&](const FileStat& s) -> Result<void> {
    out.push_back(s);
    return {};
  }));
  return out;
}

Result<FsStat> Tree::statfs() {
  OpenParams p;
  p.access = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_DIRECTORY_FILE;
  // The share root's sizes and file system attributes: CREATE, two
  // QUERY_INFOs and CLOSE in one compound frame, else step by step.
  const InfoQuery full{SMB2_0_INFO_FILESYSTEM, FILE_FS_FULL_SIZE_INFORMATION, kFsFullSizeLength};
  const InfoQuery attrs{SMB2_0_INFO_FILESYSTEM, FILE_FS_ATTRIBUTE_INFORMATION, kFsAttributeLength};
  Result<Bytes> size = Error{}, attr = Error{};
  if (auto r = compound_on("", p, {related_query(full), related_query(attrs)})) {
    if (!*r) return (*r).take_error();
    size = query_info_answer((**r)[1], full, "statfs");
    attr = query_info_answer((**r)[2], attrs, "statfs");
  } else {
    SMBKIT_TRY(auto f, open("", p));
    size = query_info(*this, f.id, full, "statfs");
    attr = query_info(*this, f.id, attrs, "statfs");
    (void)close(f.id);
  }
  if (!size) return size.take_error();
  FsStat out;
  FileFsFullSizeInformation fs;
  SMBKIT_CHECK(decode_info(*size, fs));
  uint64_t unit = static_cast<uint64_t>(fs.SectorsPerAllocationUnit) * fs.BytesPerSector;
  out.bytes_per_unit = static_cast<uint32_t>(unit);
  out.total_bytes = fs.TotalAllocationUnits * unit;
  out.avail_bytes = fs.CallerAvailableAllocationUnits * unit;
  out.free_bytes = fs.ActualAvailableAllocationUnits * unit;
  if (attr) {
    FileFsAttributeInformation a;
    if (decode_info(*attr, a)) {
      out.fs_name = a.FileSystemName;
      out.fs_attributes = a.FileSystemAttributes;
      out.max_name = a.MaximumComponentNameLength;
    }
  }
  return out;
}

Result<FileStat> Tree::mkdir(const std::string& path, bool read_only) {
  OpenParams p;
  p.access = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.disposition = FILE_CREATE;
  p.options = FILE_DIRECTORY_FILE;
  p.attributes = FILE_ATTRIBUTE_DIRECTORY | (read_only ? FILE_ATTRIBUTE_READONLY : 0);
  // The new directory's attributes ride in the frame. Once the CREATE has
  // succeeded the directory exists: a query that fails after it is no
  // failure of the mkdir, and what the CREATE response said stands in.
  const InfoQuery q = all_information_query(path);
  if (auto r = compound_on(path, p, {related_query(q)})) {
    if (!*r) return (*r).take_error();
    SMBKIT_TRY(auto cr, decode_create_response((**r)[0].msg()));
    auto info = query_info_answer((**r)[1], q, url_of(path));
    auto s = info ? stat_of_all_information(*info) : Result<FileStat>(info.take_error());
    return s ? std::move(*s) : stat_of_create(cr);
  }
  SMBKIT_TRY(auto f, open(path, p));
  auto info = query_info(*this, f.id, q, url_of(path));
  auto s = info ? stat_of_all_information(*info) : Result<FileStat>(info.take_error());
  (void)close(f.id);
  return s ? std::move(*s) : f.created;
}

// A path operation whose middle request is one SET_INFO (delete, rename).
static Result<void> set_one_on_path(Tree& t, const std::string& path, const OpenParams& p, uint8_t cls, Bytes buf,
                                    const std::string& what) {
  SMBKIT_TRY(auto s, on_path(t, path, p, {{cls, std::move(buf)}}, false, what));
  (void)s;
  return {};
}

// Delete through FileDispositionInformation on an open handle, so that a
// failure (directory not empty, file in use) is reported instead of being
// deferred to close as FILE_DELETE_ON_CLOSE would.
static Result<void> remove_path(Tree& t, const std::string& path, bool dir) {
  OpenParams p;
  p.access = DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = dir ? FILE_DIRECTORY_FILE : FILE_NON_DIRECTORY_FILE;
  FileDispositionInformation d;
  d.DeletePending = 1;
  SMBKIT_TRY(Bytes b, encode_info(d));
  return set_one_on_path(t, path, p, FileDispositionInformation::kInfoClass, std::move(b), t.url_of(path));
}

Result<void> Tree::rmdir(const std::string& path) { return remove_path(*this, path, true); }
Result<void> Tree::unlink(const std::string& path) { return remove_path(*this, path, false); }

Result<void> Tree::rename(const std::string& from, const std::string& to, bool replace) {
  OpenParams p;
  p.access = DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  FileRenameInformation ri;
  ri.ReplaceIfExists = replace ? 1 : 0;
  ri.FileName = to_smb_path(to);
  SMBKIT_TRY(Bytes b, encode_info(ri));
  return set_one_on_path(*this, from, p, FileRenameInformation::kInfoClass, std::move(b), url_of(from) + " -> " + to);
}

}  // namespace smbkit::client
