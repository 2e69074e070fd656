// The Reconnector's decisions against a stand-in target: which attempts it
// makes, what it tells the operations that wait, and when it gives up,
// at every point an attempt can fail. No server, no sockets; the backoff
// is a few milliseconds so each test ends within a second or two.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "client/reconnect.h"
#include "client/reconnect_observers.h"

namespace smbkit::client {
namespace {

using namespace std::chrono_literals;

// Scripted: each reestablish() takes the next result of `attempts` (the
// last one repeats); success bumps the generation.
class FakeTarget : public ReconnectTarget {
 public:
  mutable std::mutex mu;
  uint64_t gen = 0;
  bool dead = false;
  std::deque<Result<Reopens>> attempts;
  std::vector<bool> patience;  // the `patient` of each attempt
  Result<void> reauth_result;
  int reauths = 0, echoes = 0, drops = 0;
  uint64_t frames = 0;
  std::thread::id last_thread;

  uint64_t generation() const override {
    std::lock_guard g(mu);
    return gen;
  }
  bool connection_dead() const override {
    std::lock_guard g(mu);
    return dead;
  }
  std::string where() const override { return "smb://fake"; }
  Result<void> reauthenticate() override {
    std::lock_guard g(mu);
    reauths++;
    return reauth_result;
  }
  Result<Reopens> reestablish(bool patient) override {
    std::lock_guard g(mu);
    patience.push_back(patient);
    last_thread = std::this_thread::get_id();
    Result<Reopens> r = attempts.empty() ? Result<Reopens>(Reopens{}) : attempts.front();
    if (attempts.size() > 1) attempts.pop_front();
    if (r) {
      gen++;
      dead = false;
    }
    return r;
  }
  uint64_t frames_in() const override {
    std::lock_guard g(mu);
    return frames;
  }
  bool can_echo() const override { return true; }
  void send_echo() override {
    std::lock_guard g(mu);
    echoes++;
  }
  void drop_connection() override {
    std::lock_guard g(mu);
    drops++;
    dead = true;
  }
  size_t attempt_count() const {
    std::lock_guard g(mu);
    return patience.size();
  }
};

ReconnectOptions fast(bool hard = false) {
  ReconnectOptions o;
  o.hard = hard;
  o.soft_timeout = 300ms;
  o.initial_backoff = 5ms;
  o.max_backoff = 20ms;
  o.echo_interval = std::chrono::seconds(0);
  return o;
}

Error transient() { return nt_error(STATUS_CONNECTION_REFUSED, "refused"); }

// Waits for the resume of after() (bounded: 10 s, far beyond any backoff
// here); nullopt if it never ran.
struct Waiter {
  std::promise<Result<void>> p;
  std::thread::id ran_on;
  Reconnector::Resume resume() {
    return [this](Result<void> r) {
      ran_on = std::this_thread::get_id();
      p.set_value(std::move(r));
    };
  }
  std::optional<Result<void>> get() {
    auto f = p.get_future();
    if (f.wait_for(10s) != std::future_status::ready) return std::nullopt;
    return f.get();
  }
};

TEST(Reconnector, AnOlderGenerationResumesAtOnceOnTheReconnectThread) {
  FakeTarget t;
  t.gen = 3;
  Reconnector rc(t, fast());
  Waiter w;
  rc.after(2, Cause::lost, w.resume());
  auto r = w.get();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok());
  EXPECT_NE(w.ran_on, std::this_thread::get_id()) << "resume ran inline in after()";
  EXPECT_EQ(t.attempt_count(), 0u) << "no attempt needed: the connection is already newer";
}

TEST(Reconnector, TransientFailuresAreRetriedUntilAnAttemptSucceeds) {
  FakeTarget t;
  t.dead = true;
  ReconnectTarget::Reopens ok;
  ok.durable = 2;
  ok.by_path = 1;
  t.attempts = {transient(), transient(), ok};
  Reconnector rc(t, fast());
  Waiter w;
  rc.after(0, Cause::lost, w.resume());
  auto r = w.get();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok()) << r->error().message();
  EXPECT_EQ(t.attempt_count(), 3u);
  EXPECT_EQ(t.generation(), 1u);
  auto s = rc.stats();
  EXPECT_EQ(s.reconnects, 1u);
  EXPECT_EQ(s.failed_attempts, 2u);
  EXPECT_EQ(s.durable_reopens, 2u);
  EXPECT_EQ(s.path_reopens, 1u);
  EXPECT_NE(w.ran_on, std::this_thread::get_id());
}

TEST(Reconnector, AFinalErrorEndsTheOutageAtOnceAndNamesTheServer) {
  FakeTarget t;
  t.attempts = {Result<ReconnectTarget::Reopens>(nt_error(STATUS_LOGON_FAILURE, "session setup"))};
  Reconnector rc(t, fast(/*hard=*/true));
  Waiter w;
  rc.after(0, Cause::lost, w.resume());
  auto r = w.get();
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->error().status, STATUS_LOGON_FAILURE);
  EXPECT_NE(r->error().context.find("smb://fake"), std::string::npos) << r->error().context;
  EXPECT_EQ(t.attempt_count(), 1u) << "bad credentials are not tried again, even under hard";
}

TEST(Reconnector, SoftGivesUpWithATimeoutAfterItsDeadline) {
  FakeTarget t;
  t.attempts = {Result<ReconnectTarget::Reopens>(transient())};
  Reconnector rc(t, fast());
  Waiter w;
  auto began = std::chrono::steady_clock::now();
  rc.after(0, Cause::lost, w.resume());
  auto r = w.get();
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->error().status, STATUS_IO_TIMEOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - began, 300ms) << "gave up before the soft timeout";
  EXPECT_GE(t.attempt_count(), 3u);
  // The deadline bounds the attempts: 300 ms at 5..20 ms apart.
  EXPECT_LE(t.attempt_count(), 40u);
  // A give-up is per outage: the next operation starts a new one.
  t.attempts = {ReconnectTarget::Reopens{}};
  Waiter again;
  rc.after(0, Cause::lost, again.resume());
  auto r2 = again.get();
  ASSERT_TRUE(r2.has_value());
  EXPECT_TRUE(r2->ok());
}

TEST(Reconnector, PatienceWithHandlesStillOpenEndsHalfwayToTheSoftTimeout) {
  FakeTarget t;
  // A handle still held for the old connection: the target refuses while
  // patient, and succeeds (losing that handle) once told not to wait.
  t.attempts = {Result<ReconnectTarget::Reopens>(nt_error(STATUS_SHARING_VIOLATION, "still open"))};
  Reconnector rc(t, fast());
  std::thread flip([&] {
    for (int i = 0; i < 1000; i++) {
      {
        std::lock_guard g(t.mu);
        if (!t.patience.empty() && !t.patience.back()) {
          ReconnectTarget::Reopens lost_one;
          lost_one.lost = 1;
          t.attempts = {lost_one};
          return;
        }
      }
      std::this_thread::sleep_for(2ms);
    }
  });
  Waiter w;
  rc.after(0, Cause::lost, w.resume());
  auto r = w.get();
  flip.join();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok()) << r->error().message();
  std::lock_guard g(t.mu);
  ASSERT_GE(t.patience.size(), 2u);
  EXPECT_TRUE(t.patience.front()) << "the first attempt waits for the old open";
  EXPECT_FALSE(t.patience.back()) << "patience never ended";
  EXPECT_EQ(rc.stats().lost_handles, 1u);
}

TEST(Reconnector, AnExpiredSessionIsReauthenticatedBeforeAnyReconnect) {
  FakeTarget t;
  Reconnector rc(t, fast());
  Waiter w;
  rc.after(0, Cause::session_expired, w.resume());
  auto r = w.get();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(t.reauths, 1);
  EXPECT_EQ(t.attempt_count(), 0u) << "the connection was fine: no reconnect";
  EXPECT_EQ(rc.stats().reauths, 1u);
}

TEST(Reconnector, AFailedReauthenticationFallsBackToAReconnect) {
  FakeTarget t;
  t.reauth_result = nt_error(STATUS_USER_SESSION_DELETED, "gone");
  Reconnector rc(t, fast());
  Waiter w;
  rc.after(0, Cause::session_expired, w.resume());
  auto r = w.get();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(t.reauths, 1);
  EXPECT_EQ(t.attempt_count(), 1u);
  EXPECT_EQ(t.generation(), 1u);
}

TEST(Reconnector, ADeadConnectionIsReconnectedWithNothingWaiting) {
  // Durable handles live on the server only for its timeout: a dead
  // connection is replaced at once, not at the next operation.
  FakeTarget t;
  t.dead = true;
  Reconnector rc(t, fast());
  for (int i = 0; i < 500 && t.generation() == 0; i++) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(t.generation(), 1u);
  EXPECT_FALSE(t.connection_dead());
}

TEST(Reconnector, ShutdownFailsTheWaitersAndLaterCallers) {
  FakeTarget t;
  t.attempts = {Result<ReconnectTarget::Reopens>(transient())};
  auto o = fast(/*hard=*/true);
  auto rc = std::make_unique<Reconnector>(t, o);
  Waiter w;
  rc->after(0, Cause::lost, w.resume());
  for (int i = 0; i < 500 && t.attempt_count() == 0; i++) std::this_thread::sleep_for(2ms);
  rc->shutdown();
  auto r = w.get();
  ASSERT_TRUE(r.has_value()) << "a waiter was left hanging by shutdown";
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->error().status, STATUS_CONNECTION_DISCONNECTED);
  Waiter late;
  rc->after(0, Cause::lost, late.resume());
  auto r2 = late.get();
  ASSERT_TRUE(r2.has_value());
  EXPECT_FALSE(r2->ok());
  size_t attempts = t.attempt_count();
  rc.reset();  // joins the thread
  EXPECT_EQ(t.attempt_count(), attempts) << "attempts went on after shutdown";
}

TEST(Reconnector, AQuietConnectionIsEchoedThenDroppedAfterThreeIntervals) {
  FakeTarget t;
  auto o = fast();
  o.echo_interval = std::chrono::seconds(1);
  Reconnector rc(t, o);
  // Nothing is ever heard: an ECHO after one interval, the drop after
  // three (then a reconnect, which bumps the generation).
  for (int i = 0; i < 500 && t.generation() == 0; i++) std::this_thread::sleep_for(10ms);
  std::lock_guard g(t.mu);
  EXPECT_GE(t.echoes, 1);
  EXPECT_EQ(t.drops, 1);
  EXPECT_EQ(t.gen, 1u);
}

TEST(ReconnectObservers, RunWithoutTheLockSoTheyMayAddAndRemoveObservers) {
  ReconnectObservers obs;
  std::atomic<int> begins{0}, dones{0};
  uint64_t self = 0;
  self = obs.add({[&] {
                    begins++;
                    obs.remove(self);  // deadlocked while observers ran under the list's lock
                    obs.add({{}, [&](const std::vector<proto::CreateLease>&) { dones++; }});
                  },
                  {}});
  auto ran = std::async(std::launch::async, [&] { obs.run_begins(); });
  ASSERT_EQ(ran.wait_for(10s), std::future_status::ready) << "an observer changing the list deadlocked";
  obs.run_begins();  // removed: does not run again
  EXPECT_EQ(begins.load(), 1);
  obs.run_done({});
  EXPECT_EQ(dones.load(), 1);
}

TEST(ReconnectObservers, RemoveReturnsOnlyOnceTheObserverCanNoLongerRun) {
  ReconnectObservers obs;
  std::promise<void> entered, release;
  auto release_f = release.get_future().share();
  std::atomic<bool> finished{false};
  uint64_t id = obs.add({[&] {
                           entered.set_value();
                           release_f.wait_for(10s);
                           finished = true;
                         },
                         {}});
  auto run = std::async(std::launch::async, [&] { obs.run_begins(); });
  ASSERT_EQ(entered.get_future().wait_for(10s), std::future_status::ready);
  auto removed = std::async(std::launch::async, [&] {
    obs.remove(id);
    return finished.load();
  });
  EXPECT_EQ(removed.wait_for(50ms), std::future_status::timeout) << "remove returned while its observer ran";
  release.set_value();
  ASSERT_EQ(removed.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(removed.get()) << "remove returned before the running observer finished";
  run.get();
}

}  // namespace
}  // namespace smbkit::client
