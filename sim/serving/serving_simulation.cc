#include "sim/serving/serving_simulation.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "sim/core/event_queue.h"

namespace servesim::serving {
namespace {

using engine::RequestId;
using sim::Event;
using sim::EventPhase;
using sim::EventType;
using sim::SimTime;

// A set of ranks that step together.
struct Instance {
  std::vector<int> ranks;
  bool busy = false;
  bool step_pending = false;  // a kScheduleStep event is queued
  std::vector<engine::StepBatch> batches;
};

class Simulation {
 public:
  Simulation(const EngineTopology& topology, cost::ExecutionTimePredictor& predictor,
             const SimulationInput& input)
      : topology_(topology),
        predictor_(predictor),
        input_(input),
        chat_stream_(input.chat_endpoint ? topology.chat_stream : ChatStreamFraming{}) {}

  absl::StatusOr<SimulationResult> Run();

 private:
  void Send(RequestId id, SimTime now);
  void ReachEngine(RequestId id, SimTime now);
  int PickReplica();
  int PickRank(int replica);
  void WakeInstance(int instance, SimTime now);
  bool FormBatches(Instance& inst, bool* any_work);
  bool RevealUnseen(const Instance& inst);
  absl::Status StartStep(int instance, SimTime now);
  void FinishStep(int instance, SimTime now);
  void ReleaseClientSlot(SimTime now);
  void RecordStep(int instance, SimTime now, SimTime dt);
  void QueueFinishedRerun(int rank, const engine::StepBatch& batch);

  const EngineTopology& topology_;
  cost::ExecutionTimePredictor& predictor_;
  const SimulationInput& input_;
  const ChatStreamFraming chat_stream_;  // none unless the client streams chat

  sim::EventQueue events_;
  engine::RequestTable requests_;
  std::vector<std::unique_ptr<engine::ReplicaScheduler>> schedulers_;
  std::vector<int> instance_of_rank_;
  // Per rank: requests that reached it while its instance stepped, which an
  // engine that schedules one step ahead has not yet seen (arrival order).
  std::vector<std::vector<RequestId>> unseen_;
  // Per rank, one step ahead: decode rows of the requests that finished in
  // the step that just ended, which the batch formed ahead still runs.
  std::vector<std::vector<engine::ScheduledSeq>> finished_rerun_;
  // Per rank: how many of those rows the running step's batch ends with.
  std::vector<size_t> rerun_rows_;
  std::vector<Instance> instances_;
  SimulationResult result_;
  std::deque<RequestId> client_backlog_;  // waiting for a concurrency slot
  int64_t in_flight_ = 0;
  std::vector<int64_t> round_robin_next_;  // per replica, over its ranks
  int64_t replica_round_robin_next_ = 0;
  int64_t replica_last_pick_ = -1;  // least-outstanding: ties go in turn from the next replica
  std::vector<int64_t> replica_outstanding_;  // sent to a replica, not finished
  std::vector<int> replica_of_request_;
  int64_t outstanding_ = 0;  // sent or pending, not yet finished
  // When the last request ended (finished or rejected): vllm bench serve's
  // duration. Not the last event: an engine that schedules one step ahead
  // runs a step past its last finished request, whose tokens nobody reads.
  SimTime last_request_end_ = SimTime::Zero();
  std::vector<SimTime> frontend_free_;  // per replica: when its API server is next free
  engine::StepOutcome outcome_;
};

absl::StatusOr<SimulationResult> Simulation::Run() {
  const size_t n = input_.requests.size();
  requests_.resize(n);
  result_.records.resize(n);
  // Ranks are numbered replica-major: replica k holds ranks [k*R, (k+1)*R).
  const int ranks_per_replica = topology_.num_ranks;
  const int replicas = std::max(topology_.replicas, 1);
  for (int k = 0; k < replicas; ++k) {
    for (int r = 0; r < ranks_per_replica; ++r)
      schedulers_.push_back(topology_.make_scheduler(r, n));
    if (topology_.lockstep) {
      Instance inst;
      for (int r = 0; r < ranks_per_replica; ++r) {
        inst.ranks.push_back(k * ranks_per_replica + r);
        instance_of_rank_.push_back(static_cast<int>(instances_.size()));
      }
      instances_.push_back(std::move(inst));
    } else {
      for (int r = 0; r < ranks_per_replica; ++r) {
        instance_of_rank_.push_back(static_cast<int>(instances_.size()));
        instances_.push_back(Instance{{k * ranks_per_replica + r}});
      }
    }
  }
  unseen_.resize(schedulers_.size());
  finished_rerun_.resize(schedulers_.size());
  rerun_rows_.assign(schedulers_.size(), 0);
  round_robin_next_.assign(replicas, 0);
  replica_outstanding_.assign(replicas, 0);
  frontend_free_.assign(replicas, SimTime::Zero());
  replica_of_request_.assign(n, 0);
  for (Instance& inst : instances_) inst.batches.resize(inst.ranks.size());

  for (size_t i = 0; i < n; ++i) {
    const ClientRequest& c = input_.requests[i];
    engine::Request& r = requests_[i];
    r.id = static_cast<RequestId>(i);
    r.prompt_tokens = c.prompt_tokens;
    r.max_output_tokens = c.max_completion();
    r.eos_output_tokens = c.output_tokens;
    if (topology_.output_cap) {
      // The stream ends at the shortened cap, as at max_tokens.
      const int64_t cap = topology_.output_cap(c);
      if (cap < r.max_output_tokens) {
        r.max_output_tokens = cap;
        r.eos_output_tokens = std::min(r.eos_output_tokens, cap);
      }
    }
    r.prefix_node_keys = c.prefix_node_keys;
    r.prefix_node_tokens = c.prefix_node_tokens;
    result_.records[i].prompt_tokens = c.client_prompt();
    events_.Push(MakeEvent(EventType::kArrival, c.arrival, static_cast<int64_t>(i)));
  }
  outstanding_ = static_cast<int64_t>(n);

  while (!events_.empty()) {
    const Event e = events_.Pop();
    switch (e.type) {
      case EventType::kArrival: {
        const auto id = static_cast<RequestId>(e.target);
        if (input_.max_concurrency && in_flight_ >= *input_.max_concurrency) {
          client_backlog_.push_back(id);
        } else {
          Send(id, e.time);
        }
        break;
      }
      case EventType::kEngineArrival:
        ReachEngine(static_cast<RequestId>(e.target), e.time);
        break;
      case EventType::kScheduleStep: {
        Instance& inst = instances_[e.target];
        inst.step_pending = false;
        if (!inst.busy) {
          absl::Status s = StartStep(static_cast<int>(e.target), e.time);
          if (!s.ok()) return s;
        }
        break;
      }
      case EventType::kStepEnd: {
        FinishStep(static_cast<int>(e.target), e.time);
        absl::Status s = StartStep(static_cast<int>(e.target), e.time);
        if (!s.ok()) return s;
        break;
      }
    }
  }
  if (outstanding_ != 0) {
    return absl::InternalError(absl::StrCat(outstanding_, " requests never finished"));
  }
  // vllm bench serve starts its clock before the first request's delay, so
  // at a finite rate the duration includes the gap before the first send.
  result_.duration = last_request_end_;
  for (const engine::Request& r : requests_) result_.preempted_or_retracted += r.preemptions;
  return std::move(result_);
}

void Simulation::Send(RequestId id, SimTime now) {
  ++in_flight_;
  metrics::RequestRecord& rec = result_.records[id];
  rec.start = now;
  const ClientRequest& c = input_.requests[id];
  if (topology_.reject_reason) {
    std::string reason = topology_.reject_reason(c);
    if (!reason.empty()) {
      // The server answers with an error straight away.
      rec.success = false;
      rec.error = reason;
      ++result_.rejected;
      if (result_.first_reject_reason.empty()) result_.first_reject_reason = std::move(reason);
      --outstanding_;
      last_request_end_ = std::max(last_request_end_, now);
      // Its slot is free again; ReleaseClientSlot refills it from the
      // backlog in a loop (a call back from here recursed once per rejected
      // request queued behind it, and overflowed the stack).
      --in_flight_;
      return;
    }
  }
  if (requests_[id].max_output_tokens < c.max_completion()) ++result_.output_capped;
  const int replica = PickReplica();
  replica_of_request_[id] = replica;
  ++replica_outstanding_[replica];
  if (topology_.frontend_per_request.ns() > 0) {
    SimTime& free = frontend_free_[replica];
    free = std::max(free, now) + topology_.frontend_per_request;
    events_.Push(MakeEvent(EventType::kEngineArrival, free, id));
    return;
  }
  ReachEngine(id, now);
}

void Simulation::ReachEngine(RequestId id, SimTime now) {
  const int rank = PickRank(replica_of_request_[id]);
  if (topology_.schedules_one_step_ahead && instances_[instance_of_rank_[rank]].busy) {
    unseen_[rank].push_back(id);  // the next batch is already formed
    return;
  }
  schedulers_[rank]->Enqueue(id, requests_);
  WakeInstance(instance_of_rank_[rank], now);
}

int Simulation::PickReplica() {
  const int replicas = static_cast<int>(replica_outstanding_.size());
  if (replicas == 1) return 0;
  if (topology_.replica_balancer == ReplicaBalancer::kRoundRobin) {
    return static_cast<int>(replica_round_robin_next_++ % replicas);
  }
  // nginx's least_conn tries the servers tied on fewest connections in turn
  // (round robin among them), so the scan starts after the last replica picked.
  int best = -1;
  for (int k = 1; k <= replicas; ++k) {
    const int n = static_cast<int>((replica_last_pick_ + k) % replicas);
    if (best < 0 || replica_outstanding_[n] < replica_outstanding_[best]) best = n;
  }
  replica_last_pick_ = best;
  return best;
}

int Simulation::PickRank(int replica) {
  const int d = topology_.num_ranks;
  const int first = replica * d;
  if (d == 1) return first;
  if (topology_.router == RouterPolicy::kRoundRobin) {
    return first + static_cast<int>(round_robin_next_[replica]++ % d);
  }
  std::vector<RankLoad> loads;
  for (int r = first; r < first + d; ++r) {
    // The router counts what it sent, seen by the engine or not.
    loads.push_back({schedulers_[r]->num_waiting() + static_cast<int64_t>(unseen_[r].size()),
                     schedulers_[r]->num_running()});
  }
  return first + LeastLoadedRank(loads);
}

void Simulation::WakeInstance(int instance, SimTime now) {
  Instance& inst = instances_[instance];
  if (inst.busy || inst.step_pending) return;
  inst.step_pending = true;
  events_.Push(MakeEvent(EventType::kScheduleStep, now, instance));
}

// Forms every rank's batch of the instance's next step; true if any is not
// empty. `any_work`: some rank had queued or running requests.
bool Simulation::FormBatches(Instance& inst, bool* any_work) {
  const bool agree = topology_.ranks_agree_on_phase;
  bool any_prefill = false, any_batch = false;
  for (size_t i = 0; i < inst.ranks.size(); ++i) {
    engine::ReplicaScheduler& s = *schedulers_[inst.ranks[i]];
    *any_work |= s.HasWork();
    if (agree) {
      any_prefill |= s.SchedulePrefillOnly(requests_, &inst.batches[i]);
    } else {
      s.Schedule(requests_, &inst.batches[i]);
    }
  }
  // Ranks that agree on the phase decode only when none of them prefills.
  if (agree && !any_prefill) {
    for (size_t i = 0; i < inst.ranks.size(); ++i) {
      schedulers_[inst.ranks[i]]->ScheduleDecodeOnly(requests_, &inst.batches[i]);
    }
  }
  for (const engine::StepBatch& b : inst.batches) any_batch |= !b.empty();
  return any_batch;
}

// Hands the engine the requests that reached the instance's ranks while it
// stepped; true if there were any.
bool Simulation::RevealUnseen(const Instance& inst) {
  bool any = false;
  for (int rank : inst.ranks) {
    for (RequestId id : unseen_[rank]) schedulers_[rank]->Enqueue(id, requests_);
    any |= !unseen_[rank].empty();
    unseen_[rank].clear();
  }
  return any;
}

absl::Status Simulation::StartStep(int instance, SimTime now) {
  Instance& inst = instances_[instance];
  bool any_work = false;
  // One step ahead, this batch was formed when the step just ended began:
  // it still decodes what that step finished, and what reached the engine
  // since then waits for the next one. An engine with nothing to run waits
  // for the step's results and reads its queue afresh.
  bool any_batch = FormBatches(inst, &any_work);
  for (size_t i = 0; i < inst.ranks.size(); ++i) {
    std::vector<engine::ScheduledSeq>& rerun = finished_rerun_[inst.ranks[i]];
    auto& seqs = inst.batches[i].seqs;
    if (topology_.prefill_steps_hold_no_decodes && !rerun.empty() &&
        std::any_of(seqs.begin(), seqs.end(),
                    [](const engine::ScheduledSeq& q) { return !q.is_decode; })) {
      rerun.clear();
    }
    seqs.insert(seqs.end(), rerun.begin(), rerun.end());
    rerun_rows_[inst.ranks[i]] = rerun.size();
    any_batch |= !rerun.empty();
    rerun.clear();
  }
  if (RevealUnseen(inst) && !any_batch) any_batch = FormBatches(inst, &any_work);
  if (!any_batch) {
    inst.busy = false;
    if (any_work) {
      return absl::InternalError(
          "an engine has queued requests but can schedule none: its KV pool or its per-step "
          "token budget (chunk size, page size) is too small for the next request, and the "
          "engine would wait forever");
    }
    for (int rank : inst.ranks) schedulers_[rank]->OnEngineIdle();
    return absl::OkStatus();
  }
  inst.busy = true;
  const SimTime dt = predictor_.PredictStep(inst.batches);
  if (dt.ns() <= 0) {
    return absl::InvalidArgumentError(
        "a step's predicted time is not a positive number of at most a day: the profile or the "
        "parameters give kernel times no GPU has");
  }
  ++result_.steps;
  if (input_.record_steps) RecordStep(instance, now, dt);
  events_.Push(MakeEvent(EventType::kStepEnd, now + dt, instance));
  return absl::OkStatus();
}

void Simulation::FinishStep(int instance, SimTime now) {
  Instance& inst = instances_[instance];
  for (size_t i = 0; i < inst.ranks.size(); ++i) {
    const int rank = inst.ranks[i];
    engine::ReplicaScheduler& s = *schedulers_[rank];
    // Rows of requests that had already finished: their tokens are dropped.
    engine::StepBatch& batch = inst.batches[i];
    batch.seqs.resize(batch.seqs.size() - rerun_rows_[rank]);
    rerun_rows_[rank] = 0;
    outcome_.clear();
    s.Complete(batch, requests_, &outcome_);
    for (const engine::TokenEmission& t : outcome_.emitted) {
      metrics::RequestRecord& record = result_.records[t.id];
      if (record.chunk_times.empty() && chat_stream_.role_message_first) {
        record.chunk_times.push_back(now);
      }
      record.chunk_times.push_back(now);
      record.output_tokens += t.tokens;
    }
    if (topology_.schedules_one_step_ahead) QueueFinishedRerun(rank, batch);
    for (RequestId id : outcome_.finished) {
      if (chat_stream_.finish_message_last) result_.records[id].chunk_times.push_back(now);
      result_.records[id].success = true;
      --replica_outstanding_[replica_of_request_[id]];
      --outstanding_;
      last_request_end_ = std::max(last_request_end_, now);
      ReleaseClientSlot(now);
    }
  }
  inst.busy = false;
}

// The decode rows that the batch formed ahead of `batch`'s results gives the
// requests `batch` finished (outcome_.finished): one token past what each
// has computed.
void Simulation::QueueFinishedRerun(int rank, const engine::StepBatch& batch) {
  for (RequestId id : outcome_.finished) {
    const engine::Request& r = requests_[id];
    const bool length_stop = r.final_output_tokens() >= r.max_output_tokens;
    if (topology_.sees_length_stops_ahead && length_stop) continue;
    for (const engine::ScheduledSeq& q : batch.seqs) {
      if (q.id != id) continue;
      finished_rerun_[rank].push_back({id, 1, q.context_before + q.query_tokens, true});
      break;
    }
  }
}

void Simulation::RecordStep(int instance, SimTime now, SimTime dt) {
  const Instance& inst = instances_[instance];
  StepRecord rec{instance, now, dt, {}};
  for (size_t i = 0; i < inst.ranks.size(); ++i) {
    StepRecord::Rank r;
    for (const engine::ScheduledSeq& q : inst.batches[i].seqs) {
      if (q.is_decode) {
        ++r.decode_seqs;
      } else {
        ++r.prefill_seqs;
        r.prefill_tokens += q.query_tokens;
      }
    }
    r.running = schedulers_[inst.ranks[i]]->num_running();
    r.waiting = schedulers_[inst.ranks[i]]->num_waiting();
    rec.ranks.push_back(r);
  }
  result_.step_records.push_back(std::move(rec));
}

void Simulation::ReleaseClientSlot(SimTime now) {
  --in_flight_;
  // A request the server rejects frees its slot at once, so one release can
  // send several queued requests. (The backlog fills only under a limit.)
  while (!client_backlog_.empty() && in_flight_ < input_.max_concurrency.value_or(0)) {
    const RequestId next = client_backlog_.front();
    client_backlog_.pop_front();
    Send(next, now);
  }
}

}  // namespace

int LeastLoadedRank(const std::vector<RankLoad>& loads) {
  int best = 0;
  for (int r = 1; r < static_cast<int>(loads.size()); ++r) {
    const auto score = [&](int i) { return loads[i].waiting * 4 + loads[i].running; };
    if (score(r) < score(best)) best = r;
  }
  return best;
}

absl::StatusOr<SimulationResult> RunServingSimulation(const EngineTopology& topology,
                                                      cost::ExecutionTimePredictor& predictor,
                                                      const SimulationInput& input) {
  Simulation sim(topology, predictor, input);
  return sim.Run();
}

}  // namespace servesim::serving
