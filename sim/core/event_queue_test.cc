#include "sim/core/event_queue.h"

#include <gtest/gtest.h>

#include <utility>

namespace servesim::sim {
namespace {

Event At(int64_t ns, EventPhase phase, int64_t target) {
  Event e;
  e.time = Nanoseconds(ns);
  e.phase = phase;
  e.target = target;
  return e;
}

TEST(EventQueueTest, PopsInTimeOrder) {
  EventQueue q;
  q.Push(At(30, EventPhase::kArrival, 3));
  q.Push(At(10, EventPhase::kArrival, 1));
  q.Push(At(20, EventPhase::kArrival, 2));
  EXPECT_EQ(q.Pop().target, 1);
  EXPECT_EQ(q.Pop().target, 2);
  EXPECT_EQ(q.Pop().target, 3);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, AtEqualTimesStepEndRunsBeforeArrivalBeforeSchedule) {
  EventQueue q;
  q.Push(At(5, EventPhase::kScheduleStep, 3));
  q.Push(At(5, EventPhase::kArrival, 2));
  q.Push(At(5, EventPhase::kStepEnd, 1));
  EXPECT_EQ(q.Pop().target, 1);
  EXPECT_EQ(q.Pop().target, 2);
  EXPECT_EQ(q.Pop().target, 3);
}

// MakeEvent takes the phase from the type: an engine arrival (the API
// server handing a request on) is an arrival, after a step's end and before
// an idle engine's look for work at the same instant.
TEST(EventQueueTest, MakeEventPhasesFollowTheirType) {
  EventQueue q;
  q.Push(MakeEvent(EventType::kScheduleStep, Nanoseconds(5), 4));
  q.Push(MakeEvent(EventType::kEngineArrival, Nanoseconds(5), 3));
  q.Push(MakeEvent(EventType::kArrival, Nanoseconds(5), 2));
  q.Push(MakeEvent(EventType::kStepEnd, Nanoseconds(5), 1));
  // Each event's phase by hand (MakeEvent's own PhaseOf would compare it with
  // itself): the two arrivals share one, so they pop in insertion order.
  const std::pair<int64_t, EventPhase> want[] = {{1, EventPhase::kStepEnd},
                                                 {3, EventPhase::kArrival},
                                                 {2, EventPhase::kArrival},
                                                 {4, EventPhase::kScheduleStep}};
  for (const auto& [target, phase] : want) {
    const Event e = q.Pop();
    EXPECT_EQ(e.target, target);
    EXPECT_EQ(e.phase, phase) << target;
  }
}

TEST(EventQueueTest, EqualTimeAndPhaseResolveInInsertionOrder) {
  EventQueue q;
  for (int i = 0; i < 100; ++i) q.Push(At(7, EventPhase::kArrival, i));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(q.Pop().target, i);
}

TEST(SimTimeTest, MicrosecondsRoundToNearestNanosecond) {
  EXPECT_EQ(Microseconds(1.0004).ns(), 1000);
  EXPECT_EQ(Microseconds(1.0006).ns(), 1001);
  EXPECT_EQ(Seconds(2).ns(), 2'000'000'000);
}

}  // namespace
}  // namespace servesim::sim
