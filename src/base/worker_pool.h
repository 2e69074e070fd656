// A few threads that run jobs from a bounded queue: used to decrypt sealed
// frames in parallel with the receiver reading the next one.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace smbkit {

class WorkerPool {
 public:
  WorkerPool(int threads, size_t max_queue);
  // Runs what is queued, then joins.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Blocks while the queue is full (back-pressure on the producer).
  void submit(std::function<void()> job) EXCLUDES(mu_);

 private:
  void run() EXCLUDES(mu_);
  // A leaf: taken after any lock of the pool's users, never held while a
  // job runs.
  Mutex mu_;
  CondVar has_job_, has_room_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  const size_t max_queue_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace smbkit
