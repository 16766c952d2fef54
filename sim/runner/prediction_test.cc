#include "sim/runner/prediction.h"

#include <algorithm>
#include <string>

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
// no profile (roofline) it is not charged, and the header says so.
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
  context.profile = nullptr;
  run = Prepared(context, kVllm);
  EXPECT_EQ(run.setup.predictor.overheads.eager_launch_us, 0);
  EXPECT_TRUE(HasNoteStartingWith(run, "eager launch: not charged"));
}

}  // namespace
}  // namespace servesim::runner
