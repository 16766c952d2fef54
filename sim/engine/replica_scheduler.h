// The seam between the simulation loop and an engine's iteration policy: one
// ReplicaScheduler per DP rank decides what that rank computes next.
#ifndef SERVESIM_SIM_ENGINE_REPLICA_SCHEDULER_H_
#define SERVESIM_SIM_ENGINE_REPLICA_SCHEDULER_H_

#include <cstdint>

#include "sim/engine/batch.h"
#include "sim/engine/request.h"

namespace servesim::engine {

class ReplicaScheduler {
 public:
  virtual ~ReplicaScheduler() = default;

  // A request routed to this rank joins its waiting queue.
  virtual void Enqueue(RequestId id, RequestTable& requests) = 0;
  // Forms the next batch into `out` (cleared first; empty when there is
  // nothing to run). Allocates the KV the batch needs, preempting or
  // retracting as the engine does.
  virtual void Schedule(RequestTable& requests, StepBatch* out) = 0;
  // Schedule's two halves, for engines whose lockstep ranks must agree on a
  // step's phase (serving::EngineTopology::ranks_agree_on_phase): a prefill
  // batch into `out` if one forms (true), and the decode batch. Each clears
  // `out` first. Engines that set that flag override both; for the others
  // the first is all of Schedule and the second runs nothing.
  virtual bool SchedulePrefillOnly(RequestTable& requests, StepBatch* out) {
    Schedule(requests, out);
    return !out->empty();
  }
  virtual void ScheduleDecodeOnly(RequestTable& /*requests*/, StepBatch* out) { out->clear(); }
  // Applies the finished step: tokens, finished requests, freed KV.
  virtual void Complete(const StepBatch& batch, RequestTable& requests, StepOutcome* out) = 0;

  // Every rank of the engine found nothing to run, so its event loop idles
  // (under DP attention a rank with nothing to do runs idle batches while
  // any other rank has work: it idles only with all of them).
  virtual void OnEngineIdle() {}

  virtual bool HasWork() const = 0;
  virtual int64_t num_waiting() const = 0;
  virtual int64_t num_running() const = 0;
  virtual const class KvCacheManager& kv_cache() const = 0;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_REPLICA_SCHEDULER_H_
