#include "client/reconnect.h"

#include "base/await.h"
#include "base/log.h"

namespace smbkit::client {

using SteadyClock = std::chrono::steady_clock;

Reconnector::Reconnector(ReconnectTarget& target, ReconnectOptions opts) : target_(target), opts_(opts) {
  thread_ = std::thread([this] { run(); });
}

Reconnector::~Reconnector() {
  shutdown();
  if (thread_.joinable()) thread_.join();
}

void Reconnector::shutdown() {
  {
    MutexLock g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

void Reconnector::after(uint64_t gen, Cause why, Resume resume) {
  {
    MutexLock g(mu_);
    if (!stop_) {
      // Lock order: mu_, then the client's state lock (generation()).
      if (gen < target_.generation()) {
        ready_.emplace_back(std::move(resume), Result<void>{});
      } else {
        waiting_.push_back(std::move(resume));
        if (why != Cause::lost) drop_current_ = true;
        if (why == Cause::session_expired) reauth_first_ = true;
      }
      cv_.notify_all();
      return;
    }
  }
  resume(nt_error(STATUS_CONNECTION_DISCONNECTED, "connection lost while the client was closing"));
}

Result<void> Reconnector::wait(uint64_t gen, Cause why) {
  return await_completion<Result<void>>([&](Resume done) { after(gen, why, std::move(done)); });
}

void Reconnector::count_resend() {
  MutexLock g(mu_);
  stats_.resent++;
}

ReconnectStats Reconnector::stats() const {
  MutexLock g(mu_);
  return stats_;
}

bool Reconnector::needs_reconnect_locked() {
  if (!waiting_.empty() || drop_current_) return true;
  // Reconnect a dead connection at once, even with nothing waiting: durable
  // handles only live on the server for its timeout. After a soft give-up
  // the next operation starts the next round.
  if (target_.connection_dead()) return target_.generation() != gave_up_gen_;
  return false;
}

void Reconnector::run() {
  UniqueLock lk(mu_);
  for (;;) {
    auto wake = SteadyClock::now() + std::chrono::milliseconds(250);
    while (!(stop_ || !ready_.empty() || !waiting_.empty() || drop_current_))
      if (cv_.wait_until(mu_, wake) == std::cv_status::timeout) break;
    if (stop_) break;
    if (!ready_.empty()) {
      auto run_now = std::move(ready_);
      ready_.clear();
      lk.unlock();
      for (auto& [fn, r] : run_now) fn(std::move(r));
      lk.lock();
      continue;
    }
    if (needs_reconnect_locked()) {
      outage();
      continue;
    }
    lk.unlock();
    echo_tick(SteadyClock::now());
    lk.lock();
  }
  // Closing: nothing is re-sent any more (the Trees may be going too).
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& [fn, r] : ready_) waiting.push_back(std::move(fn));
  ready_.clear();
  lk.unlock();
  for (auto& fn : waiting) fn(nt_error(STATUS_CONNECTION_DISCONNECTED, "client closed while reconnecting"));
}

void Reconnector::outage() {
  const ReconnectOptions& o = opts_;
  const auto began = SteadyClock::now();
  // How long a handle still open for the old connection may hold up the
  // reconnect (then it is lost): 10 s, and under `soft` at most half the
  // time before everything fails.
  SteadyClock::duration patience = std::chrono::seconds(10);
  if (!o.hard) patience = std::min(patience, std::chrono::duration_cast<SteadyClock::duration>(o.soft_timeout) / 2);
  Backoff backoff(o, began);
  std::string where = target_.where();
  auto give_up = [&](Error e) REQUIRES(mu_) {
    drop_current_ = reauth_first_ = false;
    gave_up_gen_ = target_.generation();
    for (auto& w : waiting_) ready_.emplace_back(std::move(w), e);
    waiting_.clear();
  };
  if (!reauth_first_) {
    // A lost connection another channel of the session can stand in for
    // (multichannel): no new session, nothing reopened.
    mu_.unlock();
    const bool replaced = target_.replace_lost_connection();
    mu_.lock();
    if (replaced) {
      stats_.replaced++;
      drop_current_ = false;
      for (auto& w : waiting_) ready_.emplace_back(std::move(w), Result<void>{});
      waiting_.clear();
      SMBKIT_LOG(info, "{}: connection lost; a bound channel carries the session on", where);
      return;
    }
  }
  if (reauth_first_) {
    // MS-SMB2 3.2.5.1.6: re-authenticate the session where it is; the
    // connection, trees and handles stay. If that fails, start over.
    reauth_first_ = false;
    mu_.unlock();
    auto r =
        target_.connection_dead() ? Result<void>(nt_error(STATUS_CONNECTION_DISCONNECTED)) : target_.reauthenticate();
    mu_.lock();
    if (r) {
      stats_.reauths++;
      drop_current_ = false;
      for (auto& w : waiting_) ready_.emplace_back(std::move(w), Result<void>{});
      waiting_.clear();
      return;
    }
    SMBKIT_LOG(debug, "re-authenticating with {} failed ({}); reconnecting", where, r.error().message());
  }
  for (;;) {
    if (stop_) return;
    mu_.unlock();
    auto r = target_.reestablish(SteadyClock::now() - began < patience);
    mu_.lock();
    if (r) {
      stats_.reconnects++;
      stats_.durable_reopens += r->durable;
      stats_.path_reopens += r->by_path;
      stats_.lost_handles += r->lost;
      stats_.relocked += r->relocked;
      stats_.lost_locks += r->lost_locks;
      drop_current_ = reauth_first_ = false;
      gave_up_gen_ = ~0ull;
      for (auto& w : waiting_) ready_.emplace_back(std::move(w), Result<void>{});
      waiting_.clear();
      SMBKIT_LOG(info, "reconnected to {}", where);
      return;
    }
    stats_.failed_attempts++;
    Error e = r.take_error();
    SMBKIT_LOG(debug, "reconnect to {} failed: {}", where, e.message());
    if (reconnect_error_is_final(e)) {
      e.context = "reconnect to " + where + (e.context.empty() ? "" : ": " + e.context);
      give_up(std::move(e));
      return;
    }
    auto next = backoff.after_failure(SteadyClock::now());
    if (!next) {
      give_up(nt_error(STATUS_IO_TIMEOUT, "reconnect to " + where + ": the server did not come back within " +
                                              std::to_string(o.soft_timeout.count()) +
                                              " ms (soft mount); last error: " + e.message()));
      return;
    }
    while (!stop_ && cv_.wait_until(mu_, *next) != std::cv_status::timeout) {
    }
  }
}

void Reconnector::echo_tick(SteadyClock::time_point now) {
  auto iv = std::chrono::duration_cast<SteadyClock::duration>(opts_.echo_interval);
  if (iv.count() == 0) return;
  uint64_t gen = target_.generation();
  if (gen != echo_gen_) {
    echo_gen_ = gen;
    last_frames_in_ = target_.frames_in();
    last_heard_ = last_echo_ = now;
    return;
  }
  if (target_.connection_dead()) return;
  uint64_t in = target_.frames_in();
  if (in != last_frames_in_) {
    last_frames_in_ = in;
    last_heard_ = now;
  }
  if (now - last_heard_ >= 3 * iv) {
    // Like the Linux client's server_unresponsive(): nothing for three
    // echo intervals; drop the connection and let reconnect take over.
    SMBKIT_LOG(info, "{}: no answer for {} s; dropping the connection", target_.where(),
               std::chrono::duration_cast<std::chrono::seconds>(now - last_heard_).count());
    target_.drop_connection();
    return;
  }
  if (now - last_heard_ >= iv && now - last_echo_ >= iv && target_.can_echo()) {
    last_echo_ = now;
    {
      MutexLock g(mu_);
      stats_.echoes++;
    }
    target_.send_echo();
  }
}

}  // namespace smbkit::client
