#include "base/worker_pool.h"

namespace smbkit {

WorkerPool::WorkerPool(int threads, size_t max_queue) : max_queue_(max_queue ? max_queue : 1) {
  for (int i = 0; i < threads; i++) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  {
    MutexLock g(mu_);
    stop_ = true;
  }
  has_job_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::submit(std::function<void()> job) {
  MutexLock lk(mu_);
  while (jobs_.size() >= max_queue_) has_room_.wait(mu_);
  jobs_.push_back(std::move(job));
  has_job_.notify_one();
}

void WorkerPool::run() {
  for (;;) {
    std::function<void()> job;
    {
      MutexLock lk(mu_);
      while (!stop_ && jobs_.empty()) has_job_.wait(mu_);
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    has_room_.notify_one();
    job();
  }
}

}  // namespace smbkit
