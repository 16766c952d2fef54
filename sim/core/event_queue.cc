#include "sim/core/event_queue.h"

#include <algorithm>

#include "base/check.h"

namespace servesim::sim {
namespace {
// std heaps are max-heaps: "less" means "runs later".
bool RunsLater(const Event& a, const Event& b) { return RunsBefore(b, a); }
}  // namespace

void EventQueue::Push(Event e) {
  e.seq = next_seq_++;
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), RunsLater);
}

Event EventQueue::Pop() {
  SERVESIM_CHECK(!heap_.empty(), "Pop on an empty event queue");
  std::pop_heap(heap_.begin(), heap_.end(), RunsLater);
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace servesim::sim
