// Blocking waits for asynchronous completions, which run on another thread
// (the connection's receiver or completer):
//   Completion<T>       one result;
//   Completions<T>      N results, one per callback(i), returned in index
//                       order whatever order they arrive in;
//   CompletionQueue<T>  results that keep arriving, taken in batches in
//                       arrival order.
// A Completion or Completions must outlive its callbacks: wait() before it
// goes out of scope. A waiter that may return while callbacks are still
// outstanding holds a CompletionQueue in a std::shared_ptr that each
// callback captures.
//
// Each helper's mutex is a leaf: nothing else is locked under it, and no
// callback runs under it. The wake-up is signalled with the mutex held: the
// waiter may destroy the object as soon as wait() returns, so the callback
// must not touch it after letting the mutex go.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace smbkit {

template <class T>
class Completion {
 public:
  Completion() = default;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // What to hand to the asynchronous call; to be called once.
  auto callback() {
    return [this](T r) { set(std::move(r)); };
  }
  void set(T r) {
    MutexLock g(mu_);
    out_.emplace(std::move(r));
    cv_.notify_one();
  }
  // Whether the callback ran already (wait() would not block).
  bool ready() const {
    MutexLock g(mu_);
    return out_.has_value();
  }
  T wait() {
    MutexLock g(mu_);
    while (!out_) cv_.wait(mu_);
    return std::move(*out_);
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::optional<T> out_ GUARDED_BY(mu_);
};

template <class T>
class Completions {
 public:
  explicit Completions(size_t n) : left_(n), out_(n) {}
  Completions(const Completions&) = delete;
  Completions& operator=(const Completions&) = delete;

  // The callback for result i (< n); each is called once.
  auto callback(size_t i) {
    return [this, i](T r) { set(i, std::move(r)); };
  }
  void set(size_t i, T r) {
    MutexLock g(mu_);
    out_[i].emplace(std::move(r));
    if (--left_ == 0) cv_.notify_one();
  }
  bool ready() const {
    MutexLock g(mu_);
    return left_ == 0;
  }
  // All n results, result i at index i.
  std::vector<T> wait() {
    MutexLock g(mu_);
    while (left_ != 0) cv_.wait(mu_);
    std::vector<T> all;
    all.reserve(out_.size());
    for (auto& r : out_) all.push_back(std::move(*r));
    return all;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  size_t left_ GUARDED_BY(mu_);
  std::vector<std::optional<T>> out_ GUARDED_BY(mu_);
};

template <class T>
class CompletionQueue {
 public:
  void put(T v) {
    MutexLock g(mu_);
    q_.push_back(std::move(v));
    cv_.notify_one();
  }
  // Blocks until at least one result arrived; returns every result that
  // arrived since the last call, in arrival order.
  std::vector<T> wait_some() {
    MutexLock g(mu_);
    while (q_.empty()) cv_.wait(mu_);
    return std::exchange(q_, {});
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<T> q_ GUARDED_BY(mu_);
};

}  // namespace smbkit
