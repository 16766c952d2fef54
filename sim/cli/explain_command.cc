// `servesim explain`: the layout, memory and op-by-op time of a reference
// iteration that a serve command implies.
#include <cstdio>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/op_graph.h"
#include "sim/cli/commands.h"
#include "sim/cost/op_cost.h"
#include "sim/metrics/report.h"

namespace servesim::cli {
namespace {

// No engine step holds more: a bound on what a typo can ask for.
constexpr int64_t kMaxDecodeSeqsPerRank = 65536;
constexpr int64_t kMaxPrefillTokens = int64_t{1} << 24;

// Under MTP a decoding row verifies its k drafts: 1 + k query tokens.
std::vector<models::RankBatch> DecodeBatches(int ranks, int64_t seqs, int64_t context,
                                             int64_t query_tokens) {
  models::RankBatch b;
  for (int64_t i = 0; i < seqs; ++i) b.seqs.push_back({query_tokens, context});
  return std::vector<models::RankBatch>(ranks, b);
}

// `--collectives-as-copies`: each collective costs what a local
// device-to-device copy of its bytes (the copy_d2d table) costs: the stand-in
// the one-GPU iteration check (calibration/cuda/iteration_bench.cu) runs in
// place of NCCL, so prediction and measurement compare like with like.
class CollectivesAsCopies : public cost::OpCost {
 public:
  explicit CollectivesAsCopies(std::unique_ptr<cost::OpCost> inner) : inner_(std::move(inner)) {}
  double OpUs(const models::Op& op) override { return inner_->OpUs(AsCopy(op)); }
  double OpUsAt(const models::Op& op, size_t slot) override {
    return inner_->OpUsAt(AsCopy(op), slot);
  }

 private:
  static models::Op AsCopy(const models::Op& op) {
    if (op.comm_group_gpus <= 1) return op;
    models::Op copy = op;
    copy.kind = "copy_d2d";
    copy.key.clear();
    copy.x = op.comm_bytes;
    copy.flops = 0;
    copy.hbm_bytes = 2.0 * op.comm_bytes;
    copy.comm_bytes = 0;
    copy.comm_group_gpus = 0;
    return copy;
  }
  std::unique_ptr<cost::OpCost> inner_;
};

absl::StatusOr<int64_t> PositiveFlag(const CliArgs& args, const std::string& flag,
                                     int64_t fallback, int64_t most, const std::string& why) {
  if (!args.Has(flag)) return fallback;
  int64_t v = 0;
  if (!absl::SimpleAtoi(args.Get(flag), &v) || v < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected an integer >= 1, got \"", args.Get(flag), "\""));
  }
  if (v > most) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", v, " is more than ", why));
  }
  return v;
}

// The reference iterations (overridable with --decode-seqs, --context,
// --prefill-tokens and --prefill-seqs): every DP rank decoding 64 sequences
// at a 4096-token context, and one rank prefilling a full token budget of
// fresh prompt.
struct ReferenceSizes {
  int64_t decode_seqs = 0;     // per DP rank
  int64_t context_tokens = 0;  // of each decoding sequence
  int64_t prefill_tokens = 0;  // on one rank
  int64_t prefill_seqs = 0;    // the prompts that share prefill_tokens equally
};

// Bounds: what one engine step can hold, so that a typo is an error
// rather than an hour of op-graph building or an overflow.
absl::StatusOr<ReferenceSizes> ReferenceSizesFromArgs(const CliArgs& args,
                                                      const scenarios::EngineConfig& engine) {
  const int64_t max_len = engine.max_model_len();
  absl::StatusOr<int64_t> decode_seqs = PositiveFlag(
      args, "--decode-seqs", 64, kMaxDecodeSeqsPerRank,
      absl::StrCat(kMaxDecodeSeqsPerRank, " sequences per DP rank"));
  absl::StatusOr<int64_t> context_tokens = PositiveFlag(
      args, "--context", std::min<int64_t>(4096, max_len - 1), max_len - 1,
      absl::StrCat("the engine's max_model_len (", max_len, ") allows before a decode token"));
  absl::StatusOr<int64_t> prefill_tokens =
      PositiveFlag(args, "--prefill-tokens", engine.max_num_batched_tokens(),
                   kMaxPrefillTokens, absl::StrCat(kMaxPrefillTokens, " tokens in one step"));
  // --prefill-seqs N: the prefill tokens as N fresh prompts of equal length,
  // to a token (a chunk of short chat prompts), not one long one. By default the fewest
  // prompts the context allows: one, or more where the budget exceeds
  // max_model_len (a short --max-model-len had failed with a flag never given).
  const int64_t fewest_prompts =
      prefill_tokens.ok() ? std::max<int64_t>(1, (*prefill_tokens + max_len - 1) / max_len) : 1;
  absl::StatusOr<int64_t> prefill_seqs = PositiveFlag(
      args, "--prefill-seqs", fewest_prompts, prefill_tokens.ok() ? *prefill_tokens : 1,
      "the step's prefill tokens (--prefill-tokens): every prompt has one or more");
  for (const auto* v : {&decode_seqs, &context_tokens, &prefill_tokens, &prefill_seqs}) {
    if (!v->ok()) return v->status();
  }
  // The longest prompt: the first tokens % seqs prompts take one more.
  if ((*prefill_tokens + *prefill_seqs - 1) / *prefill_seqs > max_len) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--prefill-tokens: ", *prefill_tokens, " tokens as ", *prefill_seqs,
        " prompt(s) are longer than the engine's max_model_len (", max_len,
        "); give more --prefill-seqs"));
  }
  return ReferenceSizes{*decode_seqs, *context_tokens, *prefill_tokens, *prefill_seqs};
}

// --no-production-factors: servesim's own kernels' measured times, without
// the production-kernel factors (production_kernels.h), the fitted
// per-kind backend factors and the host's launch floor; for comparing with
// a composition of those same kernels replayed from a CUDA graph
// (calibration/run_iteration_check.sh).
bool OwnKernelsOnly(const CliArgs& args) { return args.Has("--no-production-factors"); }

// Each op's time: measured (the profile) or modelled (the roofline);
// `*profile_cost` as runner::MakeOpCost sets it.
std::unique_ptr<cost::OpCost> ExplainOpCost(const CliArgs& args,
                                            const runner::PredictionContext& context,
                                            const cost::ProfileOpCost** profile_cost) {
  std::unique_ptr<cost::OpCost> op_cost =
      runner::MakeOpCost(context, !OwnKernelsOnly(args), profile_cost);
  if (args.Has("--collectives-as-copies")) {
    op_cost = std::make_unique<CollectivesAsCopies>(std::move(op_cost));
  }
  return op_cost;
}

// The engine's predictor configuration, less what the flags take out.
cost::StepPredictorConfig ExplainPredictorConfig(const CliArgs& args,
                                                 cost::StepPredictorConfig config) {
  const bool own_kernels = OwnKernelsOnly(args);
  if (own_kernels) {
    config.kind_time_scale.clear();
    config.kind_call_latency_scale.clear();
    config.prefill_kind_time_scale.clear();
    config.prefill_time_scale = 1.0;
    // servesim's own sparse MLA kernels stop at each row's real key count and
    // the iteration check composes decode and prefill kernels separately;
    // walking the whole top-k in one call is FlashMLA's behaviour.
    config.graph.sparse_prefill_full_topk = false;
    config.graph.sparse_decode_full_topk = false;
    config.graph.sparse_kernel_routing = models::SparseKernelRouting::kByPhase;
  }
  // The GPU time of each batch as replayed from one CUDA graph: no eager
  // launch floor.
  if (args.Has("--gpu-only-json") || own_kernels) config.overheads.eager_launch_us = 0;
  return config;
}

// The reference iterations as batches, and their GPU times.
struct ReferenceSteps {
  std::vector<models::RankBatch> decode;  // one per DP rank
  models::RankBatch prefill;              // one rank's; the others have none
  cost::StepPredictor::GpuStep decode_parts;
  double decode_us = 0;
  double prefill_us = 0;
  double mixed_us = 0;  // the decode batch and the prefill in one step
};

ReferenceSteps PriceReferenceSteps(const ReferenceSizes& sizes, int ranks,
                                   cost::StepPredictor& predictor) {
  ReferenceSteps steps;
  const int draft_tokens = predictor.config().graph.num_speculative_tokens;
  steps.decode =
      DecodeBatches(ranks, sizes.decode_seqs, sizes.context_tokens, 1 + draft_tokens);
  steps.decode_parts = predictor.GpuStepParts(steps.decode);
  steps.decode_us = steps.decode_parts.Us();
  // Prompts as equal as whole tokens allow, summing to the step's tokens.
  for (int64_t i = 0; i < sizes.prefill_seqs; ++i) {
    const int64_t longer = i < sizes.prefill_tokens % sizes.prefill_seqs ? 1 : 0;
    steps.prefill.seqs.push_back({sizes.prefill_tokens / sizes.prefill_seqs + longer, 0,
                                  models::RowKind::kSequence, /*prefill_chunk=*/true});
  }
  std::vector<models::RankBatch> prefill_ranks(ranks);
  prefill_ranks[0] = steps.prefill;
  steps.prefill_us = predictor.GpuStepUs(prefill_ranks);
  // Mixed chunked batch: every rank decodes, rank 0 also prefills the chunk.
  std::vector<models::RankBatch> mixed = steps.decode;
  mixed[0].seqs.insert(mixed[0].seqs.end(), steps.prefill.seqs.begin(),
                       steps.prefill.seqs.end());
  steps.mixed_us = predictor.GpuStepUs(mixed);
  return steps;
}

int64_t KvBytesPerToken(const models::ModelSpec& spec, const scenarios::EngineConfig& engine) {
  return models::KvBytesPerToken(spec, runner::ToModelKvDtype(engine.kv_cache_dtype()),
                                 engine.num_speculative_tokens() > 0);
}

// Where a reference batch is more than the engine could run. A what-if is
// priced all the same; these say so, in the text and in --json alike.
std::vector<std::string> EngineLimitNotes(const ReferenceSizes& sizes, int draft_tokens,
                                          const runner::PreparedRun& run) {
  std::vector<std::string> notes;
  // A what-if may ask for more KV than the pool holds.
  const int64_t pool = run.setup.kv.kv_capacity_tokens;
  if (const int64_t held = sizes.decode_seqs * (sizes.context_tokens + 1 + draft_tokens);
      held > pool) {
    notes.push_back(absl::StrFormat("this batch holds %d tokens of KV per DP rank, more than "
                                    "the pool's %d: the engine could not run it",
                                    held, pool));
  }
  // So may a batch past the engine's per-step limits (an audit found these
  // priced without a word): the engine would run fewer sequences, or split
  // the prompt tokens over several steps.
  if (const int64_t max_seqs = run.setup.max_running_per_rank;
      max_seqs > 0 && sizes.decode_seqs > max_seqs) {
    notes.push_back(absl::StrFormat("%d decode sequences per DP rank, more than the engine runs "
                                    "at once (%d): the engine could not run this batch",
                                    sizes.decode_seqs, max_seqs));
  }
  if (const int64_t budget = run.engine.max_num_batched_tokens();
      budget > 0 && sizes.prefill_tokens > budget) {
    notes.push_back(absl::StrFormat("%d prompt tokens in one step, more than the engine's "
                                    "per-step budget (%d): the engine would chunk them over "
                                    "several steps, or refuse a longer prompt",
                                    sizes.prefill_tokens, budget));
  }
  return notes;
}

// --gpu-only-json: the reference steps' GPU times alone, as the iteration
// check (calibration/run_iteration_check.sh) compares them with a
// measurement; with the profile's GPU and the ops it lacked (priced by the
// H200 roofline), which a check on another card must not sum unawares.
std::string GpuOnlyJson(const CliArgs& args, const runner::PredictionContext& context,
                        const cost::ProfileOpCost* profile_cost,
                        const models::ParallelLayout& layout, const ReferenceSizes& sizes,
                        const ReferenceSteps& steps) {
  using metrics::JsonNumber;
  const std::set<std::string> none;
  const std::set<std::string>& fallbacks =
      profile_cost != nullptr ? profile_cost->fallbacks() : none;
  return absl::StrCat(
      "{\"profile_gpu\": ",
      metrics::JsonString(context.profile ? context.profile->proto().device().name()
                                          : "none (H200 roofline)"),
      ", \"roofline_fallbacks\": [",
      absl::StrJoin(fallbacks, ", ",
                    [](std::string* out, const std::string& f) {
                      absl::StrAppend(out, metrics::JsonString(f));
                    }),
      "]", ", \"layout\": ", metrics::JsonString(layout.Describe()),
      ", \"decode_seqs\": ", sizes.decode_seqs, ", \"context\": ", sizes.context_tokens,
      ", \"prefill_tokens\": ", sizes.prefill_tokens, ", \"prefill_seqs\": ", sizes.prefill_seqs,
      ", \"production_factors\": ", OwnKernelsOnly(args) ? "false" : "true",
      ", \"collectives_as_copies\": ", args.Has("--collectives-as-copies") ? "true" : "false",
      ", \"decode_us\": ", JsonNumber(steps.decode_us),
      ", \"prefill_us\": ", JsonNumber(steps.prefill_us),
      ", \"mixed_us\": ", JsonNumber(steps.mixed_us), "}\n");
}

// --json: the layout, parameters, memory, the reference steps' times and
// the limit notes.
std::string ExplainJson(const models::ModelSpec& spec, const runner::PreparedRun& run,
                        const ReferenceSizes& sizes, const ReferenceSteps& steps,
                        const cost::StepPredictor& predictor) {
  using metrics::JsonNumber;
  const runner::EngineSetup& s = run.setup;
  const models::ParameterCounts counts = models::CountParameters(spec);
  return absl::StrCat(
      "{\"engine\": ", metrics::JsonString(run.engine.engine_version()),
      ", \"model\": ", metrics::JsonString(run.engine.model()),
      ", \"model_spec\": ", metrics::JsonString(spec.name()),
      ", \"layout\": ", metrics::JsonString(s.layout.Describe()),
      ", \"total_params\": ", counts.main_model,
      ", \"checkpoint_params\": ", counts.checkpoint_total,
      ", \"active_params_per_token\": ", counts.active_per_token, ", \"gpus\": ", s.layout.gpus,
      ", \"dp_ranks\": ", s.layout.attn_dp, ", \"weights_bytes_per_gpu\": ", s.kv.weight_bytes,
      ", \"kv_bytes_per_token\": ", KvBytesPerToken(spec, run.engine),
      ", \"kv_pool_bytes_per_gpu\": ", s.kv.kv_pool_bytes,
      ", \"kv_capacity_tokens\": ", s.kv.kv_capacity_tokens,
      ", \"max_model_len\": ", run.engine.max_model_len(),
      ", \"ref_decode_step_us\": ", JsonNumber(steps.decode_us),
      ", \"ref_decode_step_with_host_us\": ",
      JsonNumber(predictor.StepUs(steps.decode_parts, sizes.decode_seqs)),
      ", \"ref_prefill_step_us\": ", JsonNumber(steps.prefill_us), ", \"notes\": [",
      absl::StrJoin(EngineLimitNotes(sizes, predictor.config().graph.num_speculative_tokens, run),
                    ", ",
                    [](std::string* out, const std::string& note) {
                      absl::StrAppend(out, metrics::JsonString(note));
                    }),
      "]}\n");
}

// The engine, its layout and kernels, the model's parameters, and what each
// GPU's memory holds, down to the KV pool.
void AppendEngineAndMemory(const models::ModelSpec& spec, const runner::PreparedRun& run,
                           std::string& out) {
  const runner::EngineSetup& s = run.setup;
  const models::ParameterCounts counts = models::CountParameters(spec);
  absl::StrAppend(&out, "engine: ", run.engine.engine_version(), " serving ",
                  runner::ServedModel(run.engine, spec), "\n");
  for (const std::string& n : s.notes) absl::StrAppend(&out, n, "\n");
  absl::StrAppendFormat(&out,
                        "parameters: %.1fB main model, %.1fB with MTP, %.1fB active per token\n",
                        counts.main_model / 1e9, counts.checkpoint_total / 1e9,
                        counts.active_per_token / 1e9);
  absl::StrAppend(&out, "memory per GPU (bytes):\n");
  for (const auto& [name, bytes] : s.kv.terms) {
    absl::StrAppendFormat(&out, "  %-48s %16d\n", name, bytes);
  }
  absl::StrAppendFormat(&out, "KV: %d B per token, %d tokens per DP rank, max_model_len %d\n",
                        KvBytesPerToken(spec, run.engine), s.kv.kv_capacity_tokens,
                        run.engine.max_model_len());
}

// One row per op of a rank's iteration: its measured-or-modelled time over
// all layers, as the predictor charges it (backend factors included; the
// prefill-path factor applies to a step's prefill chunks as a whole and is
// in the step's total only).
// Returns the table's sum in microseconds.
double AppendOpTable(const std::vector<models::Op>& ops, cost::StepPredictor& predictor,
                     std::string& out) {
  absl::StrAppendFormat(&out, "  %-28s %-20s %12s %6s %12s\n", "op", "kind", "x", "layers",
                        "us total");
  double sum_us = 0;
  for (const models::Op& op : ops) {
    const double us = op.repeat * predictor.ChargedUs(op, predictor.op_cost().OpUs(op));
    sum_us += us;
    absl::StrAppendFormat(&out, "  %-28s %-20s %12.0f %6d %12.1f\n", op.name, op.kind, op.x,
                          op.repeat, us);
  }
  return sum_us;
}

// The reference decode step: its GPU time, the time `run` charges for it
// with the engine's host work, the limit notes, and its ops.
void AppendReferenceDecodeStep(const models::ModelSpec& spec, const runner::PreparedRun& run,
                               const ReferenceSizes& sizes, const ReferenceSteps& steps,
                               cost::StepPredictor& predictor, std::string& out) {
  const models::ParallelLayout& layout = run.setup.layout;
  const int ranks = layout.attn_dp;
  absl::StrAppendFormat(&out,
                        "\nreference decode step (%d seqs x context %d on each of %d DP "
                        "rank(s)): %.3f ms GPU\n",
                        sizes.decode_seqs, sizes.context_tokens, ranks, steps.decode_us / 1e3);
  // What `run` charges for the same step: the engine's host work beside it.
  const cost::EngineOverheads& host = predictor.config().overheads;
  absl::StrAppendFormat(
      &out, "  (with the engine's host work, %.0f us/step + %.1f us/sequence %s%s: %.3f ms)\n",
      host.step_cpu_us, host.per_seq_cpu_us, host.overlap_cpu ? "overlapped" : "added",
      steps.decode_parts.launch_us > 0 && host.overlap_cpu
          ? (host.scheduler_launches_kernels ? ", with an eager step's kernel launches"
                                             : ", beside an eager step's kernel launches")
          : "",
      predictor.StepUs(steps.decode_parts, sizes.decode_seqs) / 1e3);
  const int draft_tokens = predictor.config().graph.num_speculative_tokens;
  if (draft_tokens > 0) {
    absl::StrAppendFormat(&out,
                          "  (each row verifies its %d draft token(s): %d query tokens; the MTP "
                          "draft passes are in the step's time, not in the table)\n",
                          draft_tokens, 1 + draft_tokens);
  }
  for (const std::string& note : EngineLimitNotes(sizes, draft_tokens, run)) {
    absl::StrAppend(&out, "note: ", note, "\n");
  }
  // The table lists the ops of the batch the CUDA graph runs, padding and all.
  const models::RankBatch& decode = steps.decode[0];
  models::RankBatch decode_run = decode;
  if (models::RankBatch padded; predictor.PadForCudaGraph(decode, padded)) {
    absl::StrAppendFormat(&out, "  (run as the %d-sequence CUDA graph: %d padding rows)\n",
                          padded.seqs.size(), padded.seqs.size() - decode.seqs.size());
    decode_run = std::move(padded);
  }
  // The tables take the predictor's own graph options: --no-production-factors
  // changes how sparse attention is routed, not only its factors.
  AppendOpTable(models::BuildRankIterationOps(spec, layout, decode_run,
                                              decode_run.Tokens() * ranks,
                                              predictor.config().graph),
                predictor, out);
}

// The reference prefill step: its GPU time alone and beside the decode
// batch, its ops, and what the fitted prefill path adds to them.
void AppendReferencePrefillStep(const models::ModelSpec& spec, const runner::PreparedRun& run,
                                const ReferenceSizes& sizes, const ReferenceSteps& steps,
                                cost::StepPredictor& predictor, std::string& out) {
  const models::ParallelLayout& layout = run.setup.layout;
  const int ranks = layout.attn_dp;
  absl::StrAppendFormat(&out,
                        "reference prefill step (%d fresh tokens in %d prompt(s) on one rank): "
                        "%.3f ms GPU; with the decode batch on every rank: %.3f ms\n",
                        sizes.prefill_tokens, sizes.prefill_seqs, steps.prefill_us / 1e3,
                        steps.mixed_us / 1e3);
  const models::RankBatch& prefill = steps.prefill;
  models::RankBatch prefill_run = prefill;
  if (models::RankBatch padded; predictor.PadForCudaGraph(prefill, padded)) {
    absl::StrAppendFormat(&out, "  (run as the %d-token CUDA graph: %d padding tokens)\n",
                          padded.Tokens(), padded.Tokens() - prefill.Tokens());
    prefill_run = std::move(padded);
  }
  // The MoE sees what the step's does: this rank's tokens and the other
  // ranks' dummy tokens, or every rank padded to this one's.
  const int64_t prefill_moe_tokens =
      predictor.MoeGroupTokens(ranks, prefill_run.Tokens(), prefill_run.Tokens() + (ranks - 1));
  const double table_us = AppendOpTable(
      models::BuildRankIterationOps(spec, layout, prefill_run, prefill_moe_tokens,
                                    predictor.config().graph),
      predictor, out);
  // The table prices each op as its kernel runs; the step's time also
  // carries the fitted prefill path on the work the prompts add.
  if (const double scale = predictor.config().prefill_time_scale; scale != 1.0) {
    absl::StrAppendFormat(&out,
                          "  (the ops sum to %.3f ms; the step's %.3f ms also stretches the "
                          "token-linear work its prompts add by the fitted prefill path x%.2f, "
                          "docs/fitting.md)\n",
                          table_us / 1e3, steps.prefill_us / 1e3, scale);
  }
}

}  // namespace

int ExplainCommand(const CliArgs& args) {
  if (!args.Has("--serve")) {
    return ReportError(absl::InvalidArgumentError("explain: --serve CMD is required"));
  }
  if (args.Has("--json") && args.Has("--gpu-only-json")) {
    return ReportError(absl::InvalidArgumentError(
        "explain: --json and --gpu-only-json are two outputs; give one"));
  }
  // Another GPU's tables beside the H200's memory, defaults and
  // production-kernel factors would make a mixture: only its own kernels'
  // GPU times are that card's.
  if (args.Has("--any-gpu-profile")) {
    if (!args.Has("--gpu-only-json") || !OwnKernelsOnly(args)) {
      return ReportError(absl::InvalidArgumentError(
          "explain: --any-gpu-profile prices servesim's own kernels' GPU times alone; give it "
          "with --gpu-only-json and --no-production-factors"));
    }
    if (args.Get("--profile") == "roofline") {
      return ReportError(absl::InvalidArgumentError(
          "explain: --any-gpu-profile needs a measured --profile, not the roofline"));
    }
  }
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<scenarios::EnvVars> env = EnvFromArgs(args);
  if (!env.ok()) return ReportError(env.status());
  absl::StatusOr<runner::PreparedRun> run =
      runner::PrepareRun(*context, args.Get("--serve"), *env, scenarios::ServeContext{});
  if (!run.ok()) return ReportError(run.status());
  absl::StatusOr<ReferenceSizes> sizes = ReferenceSizesFromArgs(args, run->engine);
  if (!sizes.ok()) return ReportError(sizes.status());

  const cost::ProfileOpCost* profile_cost = nullptr;
  cost::StepPredictor predictor(ExplainPredictorConfig(args, run->setup.predictor),
                                ExplainOpCost(args, *context, &profile_cost));
  const ReferenceSteps steps = PriceReferenceSteps(*sizes, run->setup.layout.attn_dp, predictor);
  std::string out;
  if (args.Has("--gpu-only-json")) {
    out = GpuOnlyJson(args, *context, profile_cost, run->setup.layout, *sizes, steps);
  } else if (args.Has("--json")) {
    out = ExplainJson(context->spec, *run, *sizes, steps, predictor);
  } else {
    AppendEngineAndMemory(context->spec, *run, out);
    AppendReferenceDecodeStep(context->spec, *run, *sizes, steps, predictor, out);
    AppendReferencePrefillStep(context->spec, *run, *sizes, steps, predictor, out);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace servesim::cli
