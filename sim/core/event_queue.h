// The simulator's event queue: a binary heap of small event values ordered by
// one comparator, (time, phase, seq), so simultaneous events resolve the same
// way on every run.
#ifndef SERVESIM_SIM_CORE_EVENT_QUEUE_H_
#define SERVESIM_SIM_CORE_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "sim/core/sim_time.h"

namespace servesim::sim {

// At equal times, lower phases run first. The order is chosen so that work
// finishing at t frees its resources before new work is scheduled at t:
// a step that ends at t completes (tokens emitted, KV freed) before requests
// arriving at t are queued, and both before any engine forms its next batch.
enum class EventPhase : uint8_t {
  kStepEnd = 0,       // an engine iteration finishes
  kArrival = 1,       // the client sends a request / the API server hands it on
  kScheduleStep = 2,  // an idle engine looks for work
};

enum class EventType : uint8_t { kStepEnd, kArrival, kScheduleStep, kEngineArrival };

struct Event {
  SimTime time;
  EventPhase phase = EventPhase::kArrival;
  uint64_t seq = 0;  // insertion order: the last tie-breaker
  EventType type = EventType::kArrival;
  int64_t target = 0;  // request index or engine index, per type
};

// Each type's phase: a request the API server hands on arrives as the
// client's requests do.
constexpr EventPhase PhaseOf(EventType type) {
  switch (type) {
    case EventType::kStepEnd:
      return EventPhase::kStepEnd;
    case EventType::kScheduleStep:
      return EventPhase::kScheduleStep;
    case EventType::kArrival:
    case EventType::kEngineArrival:
      break;
  }
  return EventPhase::kArrival;
}

// An event of `type` at `time`; the queue sets `seq` when it is pushed.
inline Event MakeEvent(EventType type, SimTime time, int64_t target) {
  return Event{time, PhaseOf(type), 0, type, target};
}

// True when `a` runs before `b`. The only definition of event order.
inline bool RunsBefore(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.phase != b.phase) return a.phase < b.phase;
  return a.seq < b.seq;
}

class EventQueue {
 public:
  // Stamps `seq` and inserts.
  void Push(Event e);
  // Precondition: !empty().
  Event Pop();
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

 private:
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CORE_EVENT_QUEUE_H_
