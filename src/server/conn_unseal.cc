// Large sealed frames (8 MiB WRITEs) decrypted on the worker threads while
// the loop goes on: each connection's frames are still taken by the
// session machine in the order they arrived (MessageIds, preauth hashes
// and compound chains depend on it), so a frame queues behind one being
// decrypted. Decryption is the heaviest work of a sealed WRITE; on the
// loop it would keep every other connection of that loop waiting.
#include "base/log.h"
#include "proto/transform_header.h"
#include "server/conn.h"

namespace smbkit::server {

bool Conn::unseal_elsewhere(ByteView frame) const {
  return parallel_crypto_min_ && frame.size() >= parallel_crypto_min_ && frame.size() >= 4 &&
         load_le32(frame.data()) == proto::kTransformProtocolId;
}

Result<void> Conn::queue_frame(Bytes frame) {
  auto in = std::make_shared<Incoming>();
  in->frame = std::move(frame);
  // Until it is taken its requests are unknown: it may ask for the
  // largest READ.
  in->held = in->frame.size() + st_.files().options().max_read;
  held_bytes_ += in->held;
  if (unseal_elsewhere(in->frame) && neg_) {
    // An unknown session or a malformed header ends the connection now,
    // as receive would.
    SMBKIT_TRY(in->key, machine_.unseal_key(in->frame));
    in->sealed = true;
    auto self = shared_from_this();
    io_.run_blocking(
        [in] { in->result = session::unseal_frame(in->key.cipher, in->key.key, MutableByteView(in->frame)); },
        [self, in] {
          in->ready = true;
          if (self->closed_) return;
          if (auto r = self->drain_frames(); !r) {
            SMBKIT_LOG(info, "{}: closing: {}", self->peer_, r.error().message());
            self->io_.end();
          }
        });
  } else {
    in->ready = true;
  }
  incoming_.push_back(std::move(in));
  return drain_frames();
}

Result<void> Conn::drain_frames() {
  while (!incoming_.empty() && incoming_.front()->ready) {
    if (closed_) return protocol_error("connection closed");
    std::shared_ptr<Incoming> in = std::move(incoming_.front());
    incoming_.pop_front();
    held_bytes_ -= in->held;
    if (!in->sealed) {
      SMBKIT_CHECK(take_frame(std::move(in->frame)));
      continue;
    }
    if (!in->result) return in->result.take_error();
    std::vector<session::ServerRequest> reqs;
    SMBKIT_CHECK(machine_.receive_unsealed(std::move(in->frame), in->key, *in->result, reqs));
    SMBKIT_CHECK(run_requests(std::move(reqs)));
  }
  return {};
}

}  // namespace smbkit::server
