// A mutex, its scoped locks and a condition variable that Clang's thread
// safety analysis understands (std::mutex in libstdc++ carries no
// annotations). Each Mutex is declared with the lock order it takes part
// in (ACQUIRED_BEFORE/ACQUIRED_AFTER) and the data it guards (GUARDED_BY
// on the data).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace smbkit {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { m_.lock(); }
  void unlock() RELEASE() { m_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return m_.try_lock(); }
  // Tells the analysis the caller holds it (where it cannot see that).
  void assert_held() const SMBKIT_TSA(assert_capability(this)) {}

 private:
  friend class CondVar;
  std::mutex m_;
};

// Holds a Mutex for a scope (std::lock_guard).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) ACQUIRE(m) : m_(m) { m_.lock(); }
  ~MutexLock() RELEASE() { m_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& m_;
};

// Holds a Mutex for a scope, and may let it go early (std::unique_lock
// without the deferred and moved forms).
class SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& m) ACQUIRE(m) : m_(m) { m_.lock(); }
  ~UniqueLock() RELEASE() {
    if (held_) m_.unlock();
  }
  void unlock() RELEASE() {
    m_.unlock();
    held_ = false;
  }
  void lock() ACQUIRE() {
    m_.lock();
    held_ = true;
  }
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

 private:
  Mutex& m_;
  bool held_ = true;
};

// std::condition_variable on a Mutex the caller holds.
class CondVar {
 public:
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }
  void wait(Mutex& m) REQUIRES(m) {
    std::unique_lock<std::mutex> lk(m.m_, std::adopt_lock);
    cv_.wait(lk);
    lk.release();
  }
  template <class Pred>
  void wait(Mutex& m, Pred pred) REQUIRES(m) {
    while (!pred()) wait(m);
  }
  // Whether it woke before the deadline (std::cv_status::no_timeout).
  template <class Clock, class Duration>
  std::cv_status wait_until(Mutex& m, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(m) {
    std::unique_lock<std::mutex> lk(m.m_, std::adopt_lock);
    auto s = cv_.wait_until(lk, deadline);
    lk.release();
    return s;
  }
  template <class Rep, class Period>
  std::cv_status wait_for(Mutex& m, const std::chrono::duration<Rep, Period>& d) REQUIRES(m) {
    return wait_until(m, std::chrono::steady_clock::now() + d);
  }
  // Waits at most d for pred() (called with m held; a lambda that reads
  // guarded data says so with m.assert_held()); its value at the end.
  template <class Rep, class Period, class Pred>
  bool wait_for(Mutex& m, const std::chrono::duration<Rep, Period>& d, Pred pred) REQUIRES(m) {
    auto deadline = std::chrono::steady_clock::now() + d;
    while (!pred())
      if (wait_until(m, deadline) == std::cv_status::timeout) return pred();
    return true;
  }

 private:
  std::condition_variable cv_;
};

}  // namespace smbkit
