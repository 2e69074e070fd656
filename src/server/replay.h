// Replay of a durable v2 CREATE (MS-SMB2 3.3.5.9.10): a CREATE carrying
// SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2 is remembered by its ClientGuid and
// CreateGuid for as long as its open lives, so that the same CREATE sent
// again with SMB2_FLAGS_REPLAY_OPERATION (a client that lost the answer
// with its channel) gets that open back instead of a second one or a
// sharing violation; one still being worked on (waiting for a break)
// answers STATUS_FILE_NOT_AVAILABLE, and the GUID sent again without the
// flag STATUS_DUPLICATE_OBJECTID, as smbd does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "server/file_internal.h"

namespace smbkit::server {

// At most this many remembered at once, and no more than the server's
// bound on open files (each one is a live open or a CREATE in progress;
// one whose CREATE went without an open is dropped when room is needed).
inline constexpr size_t kMaxReplayEntries = 1u << 20;

// A durable v2 CREATE's place in the table, from before its file is opened
// to its answer: erased unless the CREATE succeeds (`done`) or waits
// (`waiting`).
class ReplaySlot {
 public:
  ReplaySlot(FileService& svc, ReplayKey key) : svc_(svc), key_(std::move(key)) {}
  ~ReplaySlot();
  ReplaySlot(const ReplaySlot&) = delete;
  ReplaySlot& operator=(const ReplaySlot&) = delete;
  void waiting(const std::shared_ptr<CreateWait>& w);
  void done(const OpenPtr& o, uint32_t create_action);

 private:
  FileService& svc_;
  ReplayKey key_;
  bool kept_ = false;
};

// What the table says of a CREATE with a durable v2 request and `key`:
// `open` (with the action it was made with) for a replay of a CREATE that
// succeeded; `status` for one that must fail; neither: a new CREATE, now
// busy in the table (the caller makes the ReplaySlot). `resumed`: the
// CREATE is this one's own wait, run again after a break.
struct ReplayLookup {
  OpenPtr open;
  uint32_t create_action = 0;
  uint32_t status = 0;
};
ReplayLookup replay_lookup(FileService& svc, const ReplayKey& key, bool replay,
                           const std::shared_ptr<CreateWait>& resumed);

// An open goes, is used by another request, or loses its connection:
// its CREATE is no longer replayed (smbd: the first request on the handle
// ends it; a replay after it is a new CREATE).
void forget_replay(FileService::Impl& impl, Open& o);

}  // namespace smbkit::server
