// The client's top objects: a Client is one authenticated SMB2 session on
// one connection; a Tree is a connected share with the file operations the
// CLI and (later) the mount use. All calls are synchronous here; the
// asynchronous engine underneath is Connection::submit.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "auth/ntlm.h"
#include "client/connection.h"
#include "proto/types.h"

namespace smbkit::client {

struct Credentials {
  std::string user, password, domain;
  bool anonymous() const { return user.empty() && password.empty(); }
};

struct ClientOptions {
  ConnectionOptions conn;
  Credentials creds;
};

struct SessionInfo {
  uint64_t session_id = 0;
  bool guest = false, anonymous = false;
  bool signing = false, encrypting = false;
};

class Tree;

class Client {
 public:
  // Connect, negotiate and authenticate.
  static Result<std::unique_ptr<Client>> connect(const ClientOptions& opts);
  ~Client();

  Result<std::unique_ptr<Tree>> tree_connect(const std::string& share);
  Result<void> logoff();

  Connection& conn() { return *conn_; }
  const SessionInfo& session() const { return session_; }
  const ClientOptions& options() const { return opts_; }
  // smb://host[:port] for messages.
  std::string host_url() const;

 private:
  Client() = default;
  Result<void> session_setup();
  Result<void> validate_negotiate(uint32_t tree_id, bool encrypt);

  ClientOptions opts_;
  std::shared_ptr<Connection> conn_;
  SessionInfo session_;
  bool logged_off_ = false;
  friend class Tree;
};

// File metadata in POSIX-friendly form.
struct FileStat {
  std::string name;
  uint64_t size = 0, allocation = 0;
  uint32_t attributes = 0;
  bool is_dir = false;
  uint64_t creation_time = 0, access_time = 0, write_time = 0, change_time = 0;  // FILETIME
  uint64_t file_id = 0;
  uint32_t links = 1;
};

struct FsStat {
  uint64_t total_bytes = 0, free_bytes = 0, avail_bytes = 0;
  uint32_t bytes_per_unit = 0;
  std::string fs_name;
  uint32_t fs_attributes = 0;
  uint32_t max_name = 0;
};

struct OpenParams {
  uint32_t access = 0;        // DesiredAccess
  uint32_t disposition = 1;   // FILE_OPEN
  uint32_t options = 0;       // CreateOptions
  uint32_t attributes = 0;    // FILE_ATTRIBUTE_*
  uint32_t share = 7;         // FILE_SHARE_READ|WRITE|DELETE
};

struct OpenFile {
  proto::FileId id;
  uint64_t size = 0;
  uint32_t attributes = 0;
  uint32_t create_action = 0;
  bool is_dir() const { return attributes & 0x10; }
};

class Tree {
 public:
  ~Tree();
  uint32_t id() const { return tree_id_; }
  bool encrypted() const { return encrypt_; }
  Client& client() { return *client_; }
  const std::string& share() const { return share_; }

  // Paths are relative to the share root, '/' or '\' separated.
  Result<OpenFile> open(const std::string& path, const OpenParams& p);
  Result<void> close(const proto::FileId& id);
  // One READ of up to max_read bytes at offset into buf; returns the
  // bytes read (0 at end of file).
  Result<size_t> read(const proto::FileId& id, uint64_t offset, MutableByteView buf);
  Result<size_t> write(const proto::FileId& id, uint64_t offset, ByteView data);
  Result<void> flush(const proto::FileId& id);

  // Asynchronous I/O: one READ or WRITE of at most max_read()/max_write()
  // bytes. `done` runs on the connection's receiver thread (or the caller's
  // on an early failure) with the byte count; a read at end of file gives 0.
  // READ data lands directly in `dest` when the response is not sealed.
  // dest/src must stay valid until `done` runs.
  using IoDone = std::function<void(Result<size_t>)>;
  void read_async(const proto::FileId& id, uint64_t offset, MutableByteView dest, IoDone done);
  void write_async(const proto::FileId& id, uint64_t offset, ByteView src, IoDone done);
  Result<void> set_end_of_file(const proto::FileId& id, uint64_t size);

  Result<FileStat> stat(const std::string& path);
  Result<FileStat> stat_handle(const proto::FileId& id);
  Result<std::vector<FileStat>> list(const std::string& dir, const std::string& pattern = "*");
  Result<FsStat> statfs();
  Result<void> mkdir(const std::string& path);
  Result<void> rmdir(const std::string& path);
  Result<void> unlink(const std::string& path);
  Result<void> rename(const std::string& from, const std::string& to, bool replace);

  // Builds a request on this tree (encryption and ids filled in).
  template <class F>
  Result<session::Request> request(uint16_t command, F&& encode) {
    auto r = make_request(command, client_->session_.session_id, tree_id_, std::forward<F>(encode));
    if (r.ok()) r->encrypt = encrypt_;
    return r;
  }
  // Sends and returns the response if its Status is success (or one of
  // `also_ok`), else the status as an error naming `what`.
  Result<session::Response> call(session::Request req, const std::string& what,
                                 std::initializer_list<uint32_t> also_ok = {});

  uint32_t max_read() const;
  uint32_t max_write() const;
  std::string url_of(const std::string& path) const;

 private:
  friend class Client;
  Tree() = default;
  Client* client_ = nullptr;
  uint32_t tree_id_ = 0;
  bool encrypt_ = false;
  std::string share_;
  bool connected_ = false;
};

// "a/b/c" -> "a\b\c" without leading or trailing separators.
std::string to_smb_path(const std::string& path);
// FILETIME now (for NTLM).
uint64_t filetime_now();

}  // namespace smbkit::client
