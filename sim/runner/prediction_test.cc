#include "sim/runner/prediction.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/text_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "sim/runner/repo_context_for_test.h"

namespace servesim::runner {
namespace {

constexpr char kVllm[] = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
constexpr char kTrtllm[] = "trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8";
constexpr char kSglang[] = "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8";

PreparedRun Prepared(const PredictionContext& context, const std::string& serve) {
  absl::StatusOr<PreparedRun> run = PrepareRun(context, serve, {}, scenarios::ServeContext{});
  EXPECT_TRUE(run.ok()) << run.status();
  return run.ok() ? *std::move(run) : PreparedRun();
}

double MeasuredLaunchUs(const PredictionContext& context, int compiled) {
  if (context.profile == nullptr) return -1;
  return context.profile->LookupUs("host_launch", {{"compiled", compiled}}, 1).value_or(-1);
}

bool HasNoteStartingWith(const PreparedRun& run, const std::string& prefix) {
  return std::any_of(run.setup.notes.begin(), run.setup.notes.end(),
                     [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

// The engines' default context is the loaded model spec's, not a constant.
TEST(PrepareRunTest, DefaultContextIsTheModelSpecs) {
  PredictionContext shorter = RepoPredictionContext();
  shorter.spec.set_max_position_embeddings(32768);
  EXPECT_EQ(Prepared(shorter, kVllm).engine.max_model_len(), 32768);
  EXPECT_EQ(Prepared(shorter, kSglang).engine.max_model_len(), 32768);
  EXPECT_EQ(Prepared(shorter, kTrtllm).engine.max_model_len(), 32768);
}

// The committed parameters do not set the launch cost (the fit does not
// fit it), so every engine takes the committed profile's measurement.
TEST(PrepareRunTest, CommittedParametersLeaveTheLaunchCostToTheProfile) {
  const PredictionContext& repo = RepoPredictionContext();
  ASSERT_NE(repo.profile, nullptr);
  EXPECT_EQ(Prepared(repo, kVllm).setup.predictor.overheads.eager_launch_us,
            MeasuredLaunchUs(repo, 1));
  EXPECT_EQ(Prepared(repo, kSglang).setup.predictor.overheads.eager_launch_us,
            MeasuredLaunchUs(repo, 0));
  EXPECT_EQ(Prepared(repo, kTrtllm).setup.predictor.overheads.eager_launch_us,
            MeasuredLaunchUs(repo, 0));
}

// The host time per kernel outside CUDA graphs is the profile's measurement:
// vLLM runs torch.compile'd code (eager PyTorch with --enforce-eager),
// SGLang eager PyTorch. The committed profile measured both.
TEST(PrepareRunTest, EagerLaunchIsTheProfilesMeasurementForTheEnginesMode) {
  const PredictionContext& repo = RepoPredictionContext();
  PredictionContext context = repo;
  context.params.clear_engines();  // only a params file that sets it overrides
  context.paths.params = "none";
  const double compiled = MeasuredLaunchUs(context, 1);
  const double eager = MeasuredLaunchUs(context, 0);
  ASSERT_GT(compiled, 0);
  ASSERT_GT(eager, 0);
  EXPECT_EQ(Prepared(context, kVllm).setup.predictor.overheads.eager_launch_us, compiled);
  EXPECT_EQ(Prepared(context, std::string(kVllm) + " --enforce-eager")
                .setup.predictor.overheads.eager_launch_us,
            eager);
  PreparedRun sglang = Prepared(context, kSglang);
  EXPECT_EQ(sglang.setup.predictor.overheads.eager_launch_us, eager);
  EXPECT_TRUE(std::any_of(sglang.setup.notes.begin(), sglang.setup.notes.end(),
                          [](const std::string& n) {
                            return n.find("(eager PyTorch, measured: profile table "
                                          "host_launch{compiled=0})") != std::string::npos;
                          }));
}

// A parameters file that sets the launch cost wins over the profile; with
// no profile (roofline) it is not charged, and the header says so. A named
// file without the engine's block is refused: its zero host costs would be
// another engine's prediction.
TEST(PrepareRunTest, AParamsFileWithoutTheEngineIsRefused) {
  PredictionContext context = RepoPredictionContext();
  context.params.clear_engines();
  absl::StatusOr<PreparedRun> run = PrepareRun(context, kSglang, {}, scenarios::ServeContext{});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find(" has no parameters for sglang (fit them with servesim "
                                        "fit, or run with --params none for no fitted costs)"),
            std::string::npos)
      << run.status();
}

TEST(PrepareRunTest, ParamsFileOverridesAndNoProfileChargesNothing) {
  PredictionContext context = RepoPredictionContext();
  context.params.clear_engines();
  scenarios::EngineParams* vllm = context.params.add_engines();
  vllm->set_engine(scenarios::VLLM);
  vllm->set_eager_launch_us(7.5);
  PreparedRun run = Prepared(context, kVllm);
  EXPECT_EQ(run.setup.predictor.overheads.eager_launch_us, 7.5);
  EXPECT_TRUE(HasNoteStartingWith(run, "eager launch: 7.5 us of host time per kernel outside "
                                       "CUDA graphs (parameters file)"));

  context.params.clear_engines();
  context.paths.params = "none";
  context.profile = nullptr;
  run = Prepared(context, kVllm);
  EXPECT_EQ(run.setup.predictor.overheads.eager_launch_us, 0);
  EXPECT_TRUE(HasNoteStartingWith(run, "eager launch: not charged"));
}

// plan's one line on what its predictions are costed with: the committed
// files, repository-relative; "none" for the roofline and for no parameters.
TEST(ContextSummaryTest, NamesTheProfileParametersAndModelSpec) {
  PredictionContext context = RepoPredictionContext();
  const std::string committed = ContextSummary(context);
  EXPECT_EQ(committed.rfind("costs: profile calibration/profiles/h200.textproto (NVIDIA H200, "
                            "measured ",
                            0),
            0u)
      << committed;
  EXPECT_NE(committed.find("; fitted parameters scenarios/fitted_params.textproto; every "
                           "command's model simulated as deepseek-ai/DeepSeek-V3.2 "
                           "(models/deepseek_v32.textproto)"),
            std::string::npos)
      << committed;
  context.profile = nullptr;
  context.params.clear_engines();
  EXPECT_NE(ContextSummary(context).find("costs: profile none (roofline of H200 datasheet "
                                         "rates); fitted parameters none (--params none: "
                                         "fitted host costs taken as 0);"),
            std::string::npos)
      << ContextSummary(context);
  // A default file that is missing is named, as run's header names it.
  context.missing_default_profile = "calibration/profiles/h200.textproto";
  context.missing_default_params = "scenarios/fitted_params.textproto";
  EXPECT_NE(ContextSummary(context).find(
                "costs: profile calibration/profiles/h200.textproto not found; roofline of H200 "
                "datasheet rates; fitted parameters none (no parameters file at "
                "scenarios/fitted_params.textproto: fitted host costs taken as 0);"),
            std::string::npos)
      << ContextSummary(context);
}

// Tables a later run measured (calibration/swap_tables.py marks their
// notes) are named with that run beside the profile's own date.
TEST(ContextSummaryTest, NamesTheRunsOfSwappedInTables) {
  PredictionContext context = RepoPredictionContext();
  calibration::ProfileProto proto = context.profile->proto();
  int marked = 0;
  for (auto& table : *proto.mutable_tables()) {
    const size_t at = table.note().find("; swapped in from the run of ");
    if (at != std::string::npos) table.set_note(table.note().substr(0, at));
    if (table.kind() == "gemm_fp8" && marked < 2) {
      table.set_note(table.note() + "; swapped in from the run of 2027-01-02T03:04:05Z (x)");
      ++marked;
    }
  }
  absl::StatusOr<calibration::Profile> profile = calibration::Profile::FromProto(proto, "p");
  ASSERT_TRUE(profile.ok()) << profile.status();
  context.profile = std::make_shared<const calibration::Profile>(*std::move(profile));
  const std::string summary = ContextSummary(context);
  EXPECT_NE(summary.find(", measured " + proto.device().measured_at() +
                         "; 2 gemm_fp8 tables from the run of 2027-01-02T03:04:05Z)"),
            std::string::npos)
      << summary;
}

absl::Status ValidateText(const std::string& text) {
  scenarios::FittedParams params;
  if (absl::Status s = ParseTextProto(text, &params); !s.ok()) return s;
  return ValidateFittedParams(params, "p.textproto");
}

// Each bad parameters file is refused in one line naming the file, the
// field and the value: non-finite values once aborted the simulation's
// clock ("dt.ns() > 0"), others silently became defaults.
struct BadParams {
  const char* name;
  const char* text;
  const char* expected;
};

class FittedParamsRefusedTest : public ::testing::TestWithParam<BadParams> {};

TEST_P(FittedParamsRefusedTest, NamesTheFieldAndValue) {
  const absl::Status s = ValidateText(GetParam().text);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message().rfind("p.textproto: ", 0), 0u) << s;
  EXPECT_NE(s.message().find(GetParam().expected), std::string::npos) << s;
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s;
}

#define VLLM_BLOCK(fields) "schema_version: 1 engines { engine: VLLM " fields " }"
#define FACTOR(scale)                                                            \
  VLLM_BLOCK(                                                                    \
      "backend_factors { backend: \"moe_comm_latency=allgather_reducescatter\" " \
      "time_scale: " scale " }")

INSTANTIATE_TEST_SUITE_P(
    Cases, FittedParamsRefusedTest,
    ::testing::Values(
        BadParams{"StepNan", VLLM_BLOCK("step_cpu_us: nan"),
                  "VLLM: step_cpu_us: must be in [0, 1e7] us (10 s), got nan"},
        BadParams{"StepInf", VLLM_BLOCK("step_cpu_us: inf"), "step_cpu_us: must be in [0, 1e7]"},
        BadParams{"StepHuge", VLLM_BLOCK("step_cpu_us: 1e300"), "got 1e+300"},
        BadParams{"StepNegative", VLLM_BLOCK("step_cpu_us: -1"),
                  "step_cpu_us: must be in [0, 1e7]"},
        BadParams{"PerSeqNan", VLLM_BLOCK("per_seq_cpu_us: nan"), "per_seq_cpu_us: must be"},
        BadParams{"PerSeqHuge", VLLM_BLOCK("per_seq_cpu_us: 1e300"), "per_seq_cpu_us: must be"},
        BadParams{"PerSeqNegative", VLLM_BLOCK("per_seq_cpu_us: -3"), "per_seq_cpu_us: must be"},
        BadParams{"FrontendNan", VLLM_BLOCK("frontend_request_us: nan"),
                  "frontend_request_us: must be in [0, 1e7] us (10 s), got nan"},
        BadParams{"FrontendInf", VLLM_BLOCK("frontend_request_us: inf"), "frontend_request_us"},
        BadParams{"FrontendNegative", VLLM_BLOCK("frontend_request_us: -5"), "got -5"},
        BadParams{"EagerNan", VLLM_BLOCK("eager_launch_us: nan"), "eager_launch_us: must be"},
        BadParams{"EagerNegative", VLLM_BLOCK("eager_launch_us: -100"), "got -100"},
        BadParams{"PrefillNan", VLLM_BLOCK("prefill_time_scale: nan"),
                  "VLLM: prefill_time_scale: must be in (0, 1000], got nan"},
        BadParams{"PrefillZero", VLLM_BLOCK("prefill_time_scale: 0"),
                  "prefill_time_scale: must be in (0, 1000], got 0"},
        BadParams{"PrefillNegative", VLLM_BLOCK("prefill_time_scale: -2"), "got -2"},
        BadParams{"PrefillInf", VLLM_BLOCK("prefill_time_scale: inf"), "got inf"},
        BadParams{"PrefillHuge", VLLM_BLOCK("prefill_time_scale: 1e300"), "got 1e+300"},
        BadParams{"FactorInf", FACTOR("inf"),
                  "backend_factors \"moe_comm_latency=allgather_reducescatter\": time_scale: must "
                  "be in "
                  "(0, 1000], got inf"},
        BadParams{"FactorHuge", FACTOR("1e300"), "time_scale: must be in (0, 1000], got 1e+300"},
        BadParams{"FactorNan", FACTOR("nan"), "time_scale: must be in (0, 1000], got nan"},
        BadParams{"FactorNegative", FACTOR("-5"), "time_scale: must be in (0, 1000], got -5"},
        BadParams{"FactorZero", FACTOR("0"), "time_scale: must be in (0, 1000], got 0"},
        BadParams{
            "FactorUnknown",
            VLLM_BLOCK("backend_factors { backend: \"nsa_decode=flashmla_kv\" time_scale: 2 }"),
            "VLLM: backend_factors: unknown backend \"nsa_decode=flashmla_kv\" (known: "
            "moe_comm_latency=allgather_reducescatter)"},
        // vLLM's DP factor was a time factor until 2026-12-07: a file of then
        // is refused, not read as a per-call latency.
        BadParams{"FactorOfTheTimeForm",
                  VLLM_BLOCK("backend_factors { backend: \"moe_comm=allgather_reducescatter\" "
                             "time_scale: 3.3 }"),
                  "VLLM: backend_factors: unknown backend \"moe_comm=allgather_reducescatter\" "
                  "(known: moe_comm_latency=allgather_reducescatter)"},
        BadParams{"FactorTwice",
                  VLLM_BLOCK("backend_factors { backend: "
                             "\"moe_comm_latency=allgather_reducescatter\" time_scale: 2 } "
                             "backend_factors { backend: "
                             "\"moe_comm_latency=allgather_reducescatter\" time_scale: 3 }"),
                  "backend_factors: \"moe_comm_latency=allgather_reducescatter\" given twice"},
        BadParams{"NotFittedUnknown", VLLM_BLOCK("not_fitted: \"nsa_prefill=typo\""),
                  "not_fitted: unknown backend \"nsa_prefill=typo\""},
        BadParams{"RmsNan", VLLM_BLOCK("rms_log_error: nan"), "rms_log_error: must be >= 0"},
        BadParams{"CoverageOld", VLLM_BLOCK("coverage { max_prompt_tokens: 1016 }"),
                  "coverage: incomplete (no model or max_peak_concurrency: written by an older "
                  "servesim?); refit with scripts/fit_default_params.sh"},
        BadParams{"CoverageNegative",
                  VLLM_BLOCK("coverage { model: \"m\" max_prompt_tokens: -1 "
                             "min_peak_concurrency: 5 max_peak_concurrency: 5 layouts: \"x\" }"),
                  "coverage.max_prompt_tokens: must be >= 1 where coverage is given, got -1"},
        BadParams{"CoverageWithoutLayouts",
                  VLLM_BLOCK("coverage { model: \"m\" max_prompt_tokens: 10 "
                             "min_peak_concurrency: 5 max_peak_concurrency: 5 }"),
                  "coverage: needs at least one layout"},
        BadParams{"CoveragePeaksCrossed",
                  VLLM_BLOCK("coverage { model: \"m\" max_prompt_tokens: 10 "
                             "min_peak_concurrency: 5 max_peak_concurrency: 4 layouts: \"x\" }"),
                  "coverage: max_peak_concurrency 4 is below min_peak_concurrency 5"},
        BadParams{"SchemaVersion", "schema_version: 2",
                  "p.textproto: schema_version 2, this reader wants 1"},
        BadParams{"EngineTwice",
                  "schema_version: 1 engines { engine: SGLANG step_cpu_us: 1 } "
                  "engines { engine: SGLANG step_cpu_us: 1 }",
                  "engines[1]: a second block for SGLANG"},
        BadParams{"EmptyBlock", "schema_version: 1 engines { engine: VLLM fitted_on: \"r\" }",
                  "p.textproto: VLLM: an empty block: it sets no host cost, prefill factor or "
                  "backend factor (fit the engine, or run with --params none)"},
        BadParams{"EngineUnknown", "schema_version: 1 engines { engine: 99 }",
                  "engines[0]: engine: 99 is not VLLM, SGLANG or TRTLLM"},
        BadParams{"EngineMissing", "schema_version: 1 engines { step_cpu_us: 5 }",
                  "engines[0]: engine: ENGINE_UNSPECIFIED is not VLLM, SGLANG or TRTLLM"}),
    [](const ::testing::TestParamInfo<BadParams>& info) { return std::string(info.param.name); });

#undef FACTOR
#undef VLLM_BLOCK

// Every value the fit can write (sim/fit/engine_fit.cc: its bounds, a
// factor per backend the runs select) loads, and so do a file without the
// optional prefill factor and one with no engines.
TEST(FittedParamsTest, WhatTheFitCanWriteIsAccepted) {
  for (const char* bound : {"step_cpu_us: 10 per_seq_cpu_us: 0.01 frontend_request_us: 10 "
                            "prefill_time_scale: 0.5",
                            "step_cpu_us: 2e5 per_seq_cpu_us: 2000 frontend_request_us: 5000 "
                            "prefill_time_scale: 10"}) {
    const std::string text = absl::StrCat(
        "schema_version: 1 engines { engine: SGLANG ", bound,
        " backend_factors { backend: \"nsa_decode=flashmla_kv\" time_scale: 1 }"
        " backend_factors { backend: \"moe_comm=allgather_reducescatter\" time_scale: 0.75 }"
        " not_fitted: \"nsa_prefill=fa3\" rms_log_error: 0.3 }"
        " engines { engine: TRTLLM backend_factors { backend: \"moe=tensor_parallel\""
        " time_scale: 10 } }"
        " engines { engine: VLLM backend_factors {"
        " backend: \"moe_comm_latency=allgather_reducescatter\" time_scale: 100 } }");
    EXPECT_TRUE(ValidateText(text).ok()) << ValidateText(text);
  }
  EXPECT_TRUE(
      ValidateText("schema_version: 1 engines { engine: VLLM step_cpu_us: 0 per_seq_cpu_us: 1 }")
          .ok());
  // A fit that predicted some figure as 0 records an infinite RMS.
  EXPECT_TRUE(
      ValidateText("schema_version: 1 engines { engine: VLLM step_cpu_us: 1 rms_log_error: inf }")
          .ok());
  EXPECT_TRUE(ValidateText("schema_version: 1").ok());
  absl::StatusOr<scenarios::FittedParams> committed = LoadFittedParams(
      std::string(SERVESIM_SOURCE_DIR) + "/scenarios/fitted_params.textproto");
  EXPECT_TRUE(committed.ok()) << committed.status();
}

// An empty file or a directory is not "no parameters": that is --params none.
TEST(FittedParamsTest, EmptyFileAndDirectoryAreRefused) {
  const std::string empty = testing::TempDir() + "/empty_params.textproto";
  std::ofstream(empty).close();
  absl::StatusOr<scenarios::FittedParams> params = LoadFittedParams(empty);
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.status().message(),
            absl::StrCat("--params: ", empty,
                         ": no parameters (an empty file; --params none runs without any)"));
  params = LoadFittedParams(testing::TempDir());
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.status().message().find("not a readable file (a directory)"),
            std::string::npos)
      << params.status();
  std::remove(empty.c_str());
}

// Through LoadPredictionContext, as --params reaches it.
TEST(FittedParamsTest, ContextRefusesABadParamsFile) {
  const std::string path = testing::TempDir() + "/nan_params.textproto";
  std::ofstream(path) << "schema_version: 1\nengines { engine: VLLM step_cpu_us: nan }\n";
  ContextPaths paths;
  paths.repo_dir = SERVESIM_SOURCE_DIR;
  paths.params = path;
  absl::StatusOr<PredictionContext> context = LoadPredictionContext(paths);
  ASSERT_FALSE(context.ok());
  EXPECT_EQ(context.status().message(),
            absl::StrCat("--params: ", path,
                         ": VLLM: step_cpu_us: must be in [0, 1e7] us (10 s), got nan"));
  std::remove(path.c_str());
}

// A --model-spec file that keeps the repository spec's name but changes its
// content is another model to the fit coverage; a copy of the spec is not.
TEST(ModelIdentityTest, AChangedSpecUnderTheSameNameIsMarked) {
  const std::string repo_spec = std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v32.textproto";
  absl::StatusOr<models::ModelSpec> spec = models::LoadModelSpec(repo_spec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string copy = testing::TempDir() + "/model_identity_copy.textproto";
  const std::string dense = testing::TempDir() + "/model_identity_dense.textproto";
  auto write = [](const std::string& path, const models::ModelSpec& m) {
    std::string text;
    ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(m, &text));
    std::ofstream(path) << text;
  };
  write(copy, *spec);
  spec->clear_indexer();
  write(dense, *spec);
  auto identity = [](const std::string& model_spec) {
    ContextPaths paths;
    paths.repo_dir = SERVESIM_SOURCE_DIR;
    paths.model_spec = model_spec;
    absl::StatusOr<PredictionContext> c = LoadPredictionContext(paths);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->model_identity : std::string();
  };
  EXPECT_EQ(identity(""), "deepseek-ai/DeepSeek-V3.2");
  EXPECT_EQ(identity(copy), "deepseek-ai/DeepSeek-V3.2");
  EXPECT_EQ(identity(dense), "deepseek-ai/DeepSeek-V3.2 as changed by " + dense);
  EXPECT_EQ(identity(std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v3.textproto"),
            "deepseek-ai/DeepSeek-V3");
  std::remove(copy.c_str());
  std::remove(dense.c_str());
}

}  // namespace
}  // namespace servesim::runner
