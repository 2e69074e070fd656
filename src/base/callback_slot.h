// One replaceable callback that runs without any lock held, and whose
// replacement waits for the calls of the old one still running: once set()
// returns, the callback it replaced is not running (unless set() is called
// from within it) and will not run again, so its owner may go away.
// The lock is a leaf: nothing else is taken while it is held.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace smbkit {

template <class... Args>
class CallbackSlot {
 public:
  using Fn = std::function<void(Args...)>;

  void set(Fn f) EXCLUDES(mu_) {
    MutexLock g(mu_);
    fn_ = f ? std::make_shared<const Fn>(std::move(f)) : nullptr;
    // A callback that replaces itself would wait for itself.
    auto self = std::this_thread::get_id();
    idle_.wait(mu_, [&] {
      mu_.assert_held();
      return std::all_of(runners_.begin(), runners_.end(), [&](std::thread::id t) { return t == self; });
    });
  }

  // Calls the callback set now with no lock held; false when there is none.
  bool operator()(Args... args) EXCLUDES(mu_) {
    std::shared_ptr<const Fn> f;
    auto self = std::this_thread::get_id();
    {
      MutexLock g(mu_);
      if (!fn_) return false;
      f = fn_;
      runners_.push_back(self);
    }
    (*f)(args...);
    MutexLock g(mu_);
    runners_.erase(std::find(runners_.begin(), runners_.end(), self));
    idle_.notify_all();
    return true;
  }

 private:
  Mutex mu_;
  CondVar idle_;
  std::shared_ptr<const Fn> fn_ GUARDED_BY(mu_);
  std::vector<std::thread::id> runners_ GUARDED_BY(mu_);  // threads inside a call
};

}  // namespace smbkit
