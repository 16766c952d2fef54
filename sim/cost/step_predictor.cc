#include "sim/cost/step_predictor.h"

#include <algorithm>
#include <array>

namespace servesim::cost {
namespace {

constexpr int kNumPhases = static_cast<int>(models::OpPhase::kOther) + 1;

int PhaseIndex(models::OpPhase p) { return static_cast<int>(p); }

}  // namespace

int64_t WeightReadingRows(const models::ModelSpec& spec) {
  const int64_t k = std::max(spec.moe().experts_per_token(), 1);
  return (2 * static_cast<int64_t>(spec.moe().num_routed_experts()) + k - 1) / k;
}

StepPredictor::StepPredictor(StepPredictorConfig config, std::unique_ptr<OpCost> op_cost)
    : config_(std::move(config)),
      op_cost_(std::move(op_cost)),
      graph_(config_.graph),
      idle_graph_(config_.graph) {
  // An idle rank's dummy token only keeps the MoE collectives in step: it is
  // no decode pass, so it does not quantize the KV pool for one.
  idle_graph_.decode_quantizes_kv_pool_tokens = 0;
}

StepPredictor::GpuStep StepPredictor::GpuStepParts(std::span<const models::RankBatch> ranks) {
  GpuStep full = MeasuredGpuStep(ranks);
  step_moe_tokens_ = last_moe_tokens_;
  if (config_.prefill_time_scale == 1.0 && config_.prefill_kind_time_scale.empty()) return full;
  // What the step would take without its prefill chunks, to tell what they
  // add: its decodes, topped up with one-token rows to WeightReadingRows()
  // (or the rank's token count, if fewer) that run only the token-linear ops
  // and read the experts the whole step routes to. Reading the weights is
  // not work the chunks add: a step reads them once, however many tokens it
  // carries.
  baseline_scratch_.resize(ranks.size());
  bool any_prefill = false;
  const int64_t weight_rows = WeightReadingRows(config_.spec);
  for (size_t r = 0; r < ranks.size(); ++r) {
    baseline_scratch_[r].seqs.clear();
    int64_t tokens = 0;
    for (const models::SequenceWork& s : ranks[r].seqs) {
      tokens += s.query_tokens;
      if (models::RunsAsDecode(s, config_.graph)) {
        baseline_scratch_[r].seqs.push_back(s);
      } else {
        any_prefill = true;
      }
    }
    const int64_t rows = std::min(tokens, weight_rows);
    while (static_cast<int64_t>(baseline_scratch_[r].seqs.size()) < rows) {
      baseline_scratch_[r].seqs.push_back({1, 0, models::RowKind::kWeightReading});
    }
  }
  if (!any_prefill) return full;
  // Empty only for a model with no routed experts and no decodes: then the
  // chunks add the whole token-linear work.
  bool any_baseline = false;
  for (const auto& b : baseline_scratch_) any_baseline |= !b.seqs.empty();
  // Only the token-linear work (GEMMs, MoE, norms, collectives) is scaled
  // (Op::token_linear): attention and the indexer are charged at
  // production-kernel speed already, and the head runs once per sequence.
  linear_only_ = true;
  evaluation_ = 1;
  const double linear_full = MeasuredGpuStep(ranks).device_us;
  // The baseline reads the experts the whole step's tokens route to: its 64
  // rows reach only ~86 % of them, and the rest would count as chunk work.
  baseline_routing_tokens_ = last_moe_tokens_;
  evaluation_ = 2;
  const double linear_baseline =
      any_baseline ? MeasuredGpuStep(baseline_scratch_).device_us : 0.0;
  const double s = config_.prefill_time_scale;
  double added = (s - 1.0) * std::max(linear_full - linear_baseline, 0.0);
  for (const auto& [kind, scale] : config_.prefill_kind_time_scale) {
    only_kind_ = &kind;
    evaluation_ = 1;
    const double kind_full = MeasuredGpuStep(ranks).device_us;
    evaluation_ = 2;
    const double kind_baseline =
        any_baseline ? MeasuredGpuStep(baseline_scratch_).device_us : 0.0;
    added += s * (scale - 1.0) * std::max(kind_full - kind_baseline, 0.0);
  }
  only_kind_ = nullptr;
  evaluation_ = 0;
  linear_only_ = false;
  baseline_routing_tokens_ = 0;
  // The stretch is GPU work: it hides under a launch-bound step's floor.
  full.device_us += added;
  return full;
}

int64_t StepPredictor::MoeGroupTokens(int ranks, int64_t largest_rank_tokens,
                                      int64_t total_tokens) const {
  return ranks > 1 && config_.pad_moe_tokens_to_max_rank ? largest_rank_tokens * ranks
                                                         : total_tokens;
}

bool StepPredictor::Graphed(const models::RankBatch& batch, bool all_decode,
                            int64_t tokens) const {
  if (config_.cuda_graph_sizes.empty()) return false;
  if (!(all_decode || config_.graphs_cover_mixed_batches)) return false;
  const int64_t size = GraphSize(batch, all_decode, tokens);
  if (size > config_.cuda_graph_sizes.back()) return false;
  return !config_.graphs_exact_sizes_only ||
         std::binary_search(config_.cuda_graph_sizes.begin(), config_.cuda_graph_sizes.end(),
                            static_cast<int>(size));
}

int64_t StepPredictor::GraphSize(const models::RankBatch& batch, bool all_decode,
                                 int64_t tokens) const {
  return all_decode && !config_.graph_sizes_count_tokens
             ? static_cast<int64_t>(batch.seqs.size())
             : tokens;
}

bool StepPredictor::PadForCudaGraph(const models::RankBatch& batch,
                                    models::RankBatch& padded) const {
  if (batch.seqs.empty()) return false;
  bool all_decode = batch.padding_tokens == 0;
  int64_t tokens = batch.padding_tokens;
  for (const auto& s : batch.seqs) {
    all_decode &= models::RunsAsDecode(s, config_.graph);
    tokens += s.query_tokens;
  }
  return Graphed(batch, all_decode, tokens) && PadGraphed(batch, all_decode, tokens, 0, padded);
}

bool StepPredictor::PadGraphed(const models::RankBatch& batch, bool all_decode, int64_t tokens,
                               int64_t at_least_size, models::RankBatch& padded) const {
  // A decode batch pads its sequences to the captured size (a full graph:
  // the filler rows run attention too); a mixed batch under vLLM's piecewise
  // graphs pads its tokens, which only the graphed token-linear ops see.
  const int64_t size = GraphSize(batch, all_decode, tokens);
  auto it = std::lower_bound(config_.cuda_graph_sizes.begin(), config_.cuda_graph_sizes.end(),
                             std::max(size, at_least_size));
  if (it == config_.cuda_graph_sizes.end() || *it <= size) return false;
  padded = batch;
  if (all_decode) {
    const int64_t row_tokens = batch.seqs.front().query_tokens;
    const models::SequenceWork filler{row_tokens, 0, models::RowKind::kGraphFiller};
    // Sizes in tokens: the captured size holds size / row tokens rows (vLLM
    // rounds its sizes under MTP to multiples of 1 + k, scenarios/vllm_serve.cc).
    const int64_t rows = config_.graph_sizes_count_tokens ? (*it + row_tokens - 1) / row_tokens
                                                          : *it;
    const int64_t seqs = static_cast<int64_t>(batch.seqs.size());
    if (rows <= seqs) return false;
    padded.seqs.insert(padded.seqs.end(), static_cast<size_t>(rows - seqs), filler);
  } else {
    padded.padding_tokens = *it - size;
  }
  return true;
}

StepPredictor::GpuStep StepPredictor::MeasuredGpuStep(std::span<const models::RankBatch> ranks) {
  // What each rank actually runs: an idle rank of a lockstep group runs a
  // dummy token through the MoE; a graphed decode batch is padded up to its
  // captured size.
  struct RankRun {
    // The batch as given, or `own` when it had to be changed (idle dummy,
    // graph padding): copying every rank's batch each step is measurable.
    const models::RankBatch* batch = nullptr;
    models::RankBatch own;
    bool idle = false;
    bool all_decode = true;
    bool graphed = false;
    int64_t tokens = 0;
    int64_t decode_rows = 0;  // sequences generating (one more draft token each)
  };
  std::vector<RankRun> runs(ranks.size());
  int64_t sum = 0, largest = 0, decode_sum = 0, largest_decode = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    RankRun& run = runs[r];
    run.batch = &ranks[r];
    run.idle = ranks[r].seqs.empty();
    if (run.idle) {
      // Priced as one real row, sampled too (neither vLLM's dummy run nor
      // SGLang's idle batch samples): each phase takes the slowest rank, and
      // a busy rank has at least this row's work in every phase.
      run.own.seqs.push_back({1, 0});
      run.batch = &run.own;
    }
    int64_t tokens = run.batch->padding_tokens;
    for (const auto& s : run.batch->seqs) {
      const bool decode = models::RunsAsDecode(s, config_.graph);
      run.all_decode &= decode;
      run.decode_rows += decode && !run.idle && s.kind != models::RowKind::kWeightReading ? 1 : 0;
      tokens += s.query_tokens;
    }
    run.graphed = Graphed(*run.batch, run.all_decode, tokens);
    run.tokens = tokens;
  }
  int64_t pad_to_size = 0;
  if (config_.graph_choice_shared_by_ranks && runs.size() > 1) {
    bool all = true;
    for (const RankRun& run : runs) {
      const int64_t size = GraphSize(*run.batch, run.all_decode, run.tokens);
      all = all && run.graphed &&
            (!config_.graphs_exact_sizes_only ||
             size == GraphSize(*runs[0].batch, runs[0].all_decode, runs[0].tokens));
      if (config_.graphs_pad_to_largest_rank) pad_to_size = std::max(pad_to_size, size);
    }
    for (RankRun& run : runs) run.graphed = all;
  }
  for (RankRun& run : runs) {
    int64_t tokens = run.tokens;
    // Only the step as run is padded to a graph's size. A baseline is no
    // batch the engine runs, and what the prefill factor stretches is what
    // the real tokens add: filler rows up to a captured size are kernel
    // work, not prefill (padded, a longer prompt had come out faster).
    if (run.graphed && evaluation_ == 0) {
      bool padded = false;
      if (run.batch == &run.own) {
        padded = PadGraphed(run.own, run.all_decode, tokens, pad_to_size, scratch_padded_);
        if (padded) std::swap(run.own, scratch_padded_);
      } else {
        padded = PadGraphed(*run.batch, run.all_decode, tokens, pad_to_size, run.own);
        if (padded) run.batch = &run.own;
      }
      if (padded) tokens = run.batch->Tokens();
    }
    run.tokens = tokens;
    sum += tokens;
    largest = std::max(largest, tokens);
    decode_sum += run.decode_rows;
    largest_decode = std::max(largest_decode, run.decode_rows);
  }
  const int num_ranks = static_cast<int>(ranks.size());
  const int64_t moe_tokens = MoeGroupTokens(num_ranks, largest, sum);
  last_moe_tokens_ = moe_tokens;
  // The same for a draft pass of one token per decoding sequence.
  const int64_t decode_moe_tokens = MoeGroupTokens(num_ranks, largest_decode, decode_sum);

  // Each layer's phases synchronise across ranks at the MoE collectives, so
  // the step takes, phase by phase, the slowest rank's time.
  std::array<double, kNumPhases> slowest{};
  double eager_floor_us = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const RankRun& run = runs[r];
    const size_t slot_base = (r * kEvaluations + evaluation_) * kSlotStride;
    const bool cached = r < kCachedRanks;
    std::array<double, kNumPhases> phase{};
    int64_t launches = 0;
    size_t position = 0;  // of the op in the rank's whole list, for the cache
    auto add_ops = [&](const std::vector<models::Op>& list) {
      for (const models::Op& op : list) {
        const size_t i = position++;
        const double us = cached && i < kSlotStride ? op_cost_->OpUsAt(op, slot_base + i)
                                                    : op_cost_->OpUs(op);
        phase[PhaseIndex(op.phase)] += op.repeat * ChargedUs(op, us);
        launches += op.repeat;
      }
    };
    models::OpGraphOptions& graph = run.idle ? idle_graph_ : graph_;
    graph.moe_routing_tokens =
        std::max(config_.graph.moe_routing_tokens,
                 evaluation_ == 2 ? baseline_routing_tokens_ : int64_t{0});
    models::BuildRankIterationOps(config_.spec, config_.layout, *run.batch, moe_tokens, graph,
                                  ops_);
    add_ops(ops_);
    const int k = config_.graph.num_speculative_tokens;
    if (k > 0 && !run.idle) {
      // The MTP module first runs over every token the target ran this step:
      // vLLM's EagleProposer takes all of the step's target tokens, prefill
      // chunks included (they fill the draft's KV cache), as SGLang's draft
      // extend does. Then k - 1 more passes of one token per decoding sequence.
      // (The first pass runs over the step's tokens, so a baseline's reads the
      // whole step's experts; the later ones over its decodes alone, in the
      // step and its baseline the same.)
      models::BuildMtpDraftOps(config_.spec, config_.layout, *run.batch, moe_tokens, graph,
                               ops_);
      add_ops(ops_);
      if (k > 1) {
        models::RankBatch next;
        for (const models::SequenceWork& s : run.batch->seqs) {
          if (!models::RunsAsDecode(s, config_.graph) ||
              s.kind == models::RowKind::kWeightReading) {
            continue;
          }
          next.seqs.push_back({1, s.context_before_tokens + s.query_tokens, s.kind});
        }
        if (!next.seqs.empty()) {
          models::BuildMtpDraftOps(
              config_.spec, config_.layout, next,
              std::max(decode_moe_tokens, static_cast<int64_t>(next.seqs.size())),
              config_.graph, ops_);
          for (int i = 1; i < k; ++i) add_ops(ops_);
        }
      }
    }
    for (int p = 0; p < kNumPhases; ++p) slowest[p] = std::max(slowest[p], phase[p]);
    // The launch floor is host time: it belongs to the whole step, not to
    // the token-linear part that the prefill factors stretch.
    if (!run.graphed && only_kind_ == nullptr && !linear_only_) {
      eager_floor_us = std::max(eager_floor_us,
                                static_cast<double>(launches) * config_.overheads.eager_launch_us);
    }
  }
  GpuStep step;
  for (double t : slowest) step.device_us += t;
  step.launch_us = eager_floor_us;
  return step;
}

double KindTimeScale(const StepPredictorConfig& config, const std::string& kind) {
  for (const auto& [k, scale] : config.kind_time_scale) {
    if (k == kind) return scale;
  }
  return 1.0;
}

double AddedCallLatencyUs(const StepPredictorConfig& config, const std::string& kind) {
  for (const auto& [k, scale] : config.kind_call_latency_scale) {
    if (k == kind) return (scale - 1.0) * GpuRates{}.collective_latency_us;
  }
  return 0.0;
}

double StepPredictor::ChargedUs(const models::Op& op, double us) {
  // A collective across nodes keeps InfiniBand's roofline: the fitted
  // factors (a path's speed, the production prefill) stand for one node's
  // NVLink runs, and no multi-node run measured them. But crossing nodes is
  // never faster than the same collective within a node at its fitted
  // factors: a decode step's small, latency-bound messages had come out
  // cheaper across two nodes than on one, and a prefill step ~3 % cheaper
  // when the prefill factor stretched only the one-node collectives. So the
  // stretch and the kind factors see a cross-node collective's NVLink
  // equivalent, and its own charge is floored at that equivalent's.
  const bool internode = SpansNodes(op);
  if (only_kind_ != nullptr) {
    if (op.kind != *only_kind_) return 0.0;
    return internode ? op_cost_->NvlinkCollectiveUs(op) : us;
  }
  const double scale = KindTimeScale(config_, op.kind);
  // Each call's latency, which the prefill stretch leaves alone: a step
  // and its baseline make the same calls.
  const double latency_us = AddedCallLatencyUs(config_, op.kind);
  if (linear_only_) {
    if (!op.token_linear) return 0.0;
    return ((internode ? op_cost_->NvlinkCollectiveUs(op) : us) + latency_us) * scale;
  }
  if (!internode) return (us + latency_us) * scale;
  return std::max(us, (op_cost_->NvlinkCollectiveUs(op) + latency_us) * scale);
}

sim::SimTime StepPredictor::PredictStep(std::span<const engine::StepBatch> rank_batches) {
  scratch_.resize(rank_batches.size());
  size_t most_seqs = 0;
  for (size_t r = 0; r < rank_batches.size(); ++r) {
    scratch_[r].seqs.clear();
    for (const engine::ScheduledSeq& s : rank_batches[r].seqs) {
      scratch_[r].seqs.push_back(
          {s.query_tokens, s.context_before, models::RowKind::kSequence, !s.is_decode});
    }
    most_seqs = std::max(most_seqs, rank_batches[r].seqs.size());
  }
  const double step_us = StepUs(GpuStepParts(scratch_), static_cast<int64_t>(most_seqs));
  // A step past a day (a profile or parameters of absurd times) is returned
  // as no time, which the simulation reports as an error, before its
  // nanoseconds leave int64.
  if (!(step_us <= kMaxStepUs)) return sim::Nanoseconds(0);
  return sim::Microseconds(std::max(step_us, 1.0));
}

double StepPredictor::StepUs(const GpuStep& gpu, int64_t most_seqs) const {
  // Each DP rank has its own scheduler process; the busiest one gates the step.
  const EngineOverheads& o = config_.overheads;
  const double cpu_us = o.step_cpu_us + o.per_seq_cpu_us * static_cast<double>(most_seqs);
  // Overlapped, the scheduling work runs while the GPU works; where the
  // scheduler's thread also launches the forward (SGLang's and TensorRT-
  // LLM's do; a worker thread would share the interpreter lock), an eager
  // step's launches add to it, while a graph replay leaves the host free.
  const double host_us = o.scheduler_launches_kernels ? gpu.launch_us + cpu_us
                                                      : std::max(gpu.launch_us, cpu_us);
  return (o.overlap_cpu ? std::max(gpu.device_us, host_us) : gpu.Us() + cpu_us) *
         config_.step_time_scale;
}

}  // namespace servesim::cost
