#include "sim/fit/fold_spread.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/scratch_path_for_test.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "sim/runner/repo_context_for_test.h"

namespace servesim::fit {
namespace {

// Writes `text` to a file of the running test's own; returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ScratchPathForTest(name);
  std::ofstream(path) << text;
  return path;
}

// Two vLLM fits, one without "run-b", as `fit --folds-out` writes them.
constexpr char kTwoFolds[] = R"(schema_version: 1
folds { params { engine: VLLM step_cpu_us: 1000 fitted_on: "run-a" fitted_on: "run-b" } }
folds { held_out: "run-b" params { engine: VLLM step_cpu_us: 2000 fitted_on: "run-a" } }
)";

TEST(LoadFoldFitsTest, ReadsWhatFitWrites) {
  absl::StatusOr<scenarios::FoldFits> folds =
      LoadFoldFits(WriteTemp("two.textproto", kTwoFolds), "--folds");
  ASSERT_TRUE(folds.ok()) << folds.status();
  ASSERT_EQ(folds->folds_size(), 2);
  EXPECT_EQ(folds->folds(1).held_out(), "run-b");
}

// Each bad file is refused with the flag, the path and what is wrong.
TEST(LoadFoldFitsTest, RefusesBadFilesNamingTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {"not a proto {", "not a FoldFits text proto"},
      {"schema_version: 2\n", "schema_version 2, this reader wants 1"},
      {"schema_version: 1\n", "no folds"},
      {"schema_version: 1\nfolds { params { engine: VLLM step_cpu_us: -1 } }\n", "step_cpu_us"},
      {"schema_version: 1\nfolds { params { engine: VLLM } }\n", "VLLM: an empty block"},
      {"schema_version: 1\nfolds { held_out: \"a\" params { engine: VLLM step_cpu_us: 1 "
       "fitted_on: \"a\" } }\n",
       "held_out a is among the runs it was fitted on"},
      {"schema_version: 1\nfolds { held_out: \"a\" params { engine: SGLANG step_cpu_us: 1 } }\n"
       "folds { held_out: \"a\" params { engine: SGLANG step_cpu_us: 1 } }\n",
       "folds[1]: a second fit of SGLANG (without a)"},
      {"schema_version: 1\nfolds { params { engine: VLLM step_cpu_us: 1 } }\n"
       "folds { held_out: \"a\" params { engine: SGLANG step_cpu_us: 1 } }\n",
       "no fit on every run of SGLANG"},
      {"schema_version: 1\nfolds { params { engine: VLLM step_cpu_us: 1 } held_out_result { "
       "layout: \"x\" } }\n",
       "folds[0]: a held_out_result on the fit on every run, which holds none out"},
      {"schema_version: 1\nfolds { params { engine: VLLM step_cpu_us: 1 } }\n"
       "folds { held_out: \"a\" params { engine: VLLM step_cpu_us: 1 } held_out_result { "
       "figures { key: \"mean_ttft_ms\" measured: 0 predicted: 5 } } }\n",
       "folds[1]: held_out_result mean_ttft_ms: measured 0, predicted 5"},
  };
  int i = 0;
  for (const auto& [text, expected] : cases) {
    const std::string path = WriteTemp(absl::StrCat("bad", i++, ".textproto"), text);
    absl::StatusOr<scenarios::FoldFits> folds = LoadFoldFits(path, "--folds");
    ASSERT_FALSE(folds.ok()) << text;
    EXPECT_EQ(folds.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(folds.status().message());
    EXPECT_EQ(message.rfind(absl::StrCat("--folds: ", path), 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  EXPECT_FALSE(LoadFoldFits(::testing::TempDir() + "/absent.textproto", "--folds").ok());
}

runner::RunRequest LoneVllmRequest() {
  runner::RunRequest request;
  request.serve_command = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
  request.bench_command =
      "vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --dataset-name random "
      "--random-input-len 64 --random-output-len 8 --num-prompts 1";
  return request;
}

// vLLM v0.13 schedules synchronously (async scheduling off): a step's host
// work adds to its GPU time. A lone request runs one decode per step, so a
// fit with 50 ms more host work per step gives a TPOT 50 ms longer, and the
// spread runs from the one fit to the other. The other engine's fit in the
// file is not used.
TEST(PredictSpreadTest, HostWorkPerStepSpreadsALoneRequestsTpot) {
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  const scenarios::EngineParams* base = runner::FindEngineParams(context.params, scenarios::VLLM);
  ASSERT_NE(base, nullptr);
  scenarios::FoldFits folds;
  scenarios::FoldFit* all = folds.add_folds();
  *all->mutable_params() = *base;
  scenarios::FoldFit* slow = folds.add_folds();
  slow->set_held_out("slow");
  *slow->mutable_params() = *base;
  slow->mutable_params()->set_step_cpu_us(base->step_cpu_us() + 50000);
  scenarios::FoldFit* other = folds.add_folds();
  other->mutable_params()->set_engine(scenarios::SGLANG);
  other->mutable_params()->set_step_cpu_us(1e6);

  absl::StatusOr<PredictionSpread> spread =
      PredictSpread(context, LoneVllmRequest(), scenarios::VLLM, folds, /*threads=*/2);
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->fits, 2);
  ASSERT_EQ(spread->figures.size(), SpreadFigures().size());
  const FigureRange& tpot = spread->figures[3];
  ASSERT_EQ(tpot.key, "mean_tpot_ms");
  EXPECT_NEAR(tpot.high - tpot.low, 50.0, 1e-3);
  EXPECT_EQ(tpot.low_held_out, "");
  EXPECT_EQ(tpot.high_held_out, "slow");
  const FigureRange& throughput = spread->figures[0];
  EXPECT_EQ(throughput.low_held_out, "slow");
  EXPECT_LT(throughput.low, throughput.high);

  // The fit on every run is the context's own: its end of the range is the
  // plain prediction's figure.
  absl::StatusOr<runner::Prediction> plain = runner::Predict(context, LoneVllmRequest());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_DOUBLE_EQ(tpot.low, plain->metrics.tpot.mean_ms);
  EXPECT_DOUBLE_EQ(throughput.high, plain->metrics.total_token_throughput);

  const std::vector<std::string> lines = FormatSpread(*spread, "folds.textproto");
  ASSERT_EQ(lines.size(), 1 + SpreadFigures().size());
  EXPECT_NE(lines[0].find("spread over 2 vllm fit(s) of the leave-one-out (folds.textproto"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[4].find("mean TPOT ms"), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("(low: the fit on every run; high: without slow)"), std::string::npos)
      << lines[4];
}

// The JSON member names each figure by its --save-result key, with both
// ends and the fits behind them.
TEST(SpreadJsonTest, EachFigureWithItsEndsAndFits) {
  PredictionSpread spread;
  spread.fits = 3;
  spread.figures.push_back({"mean_tpot_ms", 45.5, 53.25, "", "sglang-dp8-ctx32k"});
  EXPECT_EQ(SpreadJson(spread, "f.textproto"),
            "{\"fits\": 3, \"source\": \"f.textproto\", \"mean_tpot_ms\": {\"low\": 45.5, "
            "\"high\": 53.25, \"low_held_out\": \"\", \"high_held_out\": \"sglang-dp8-ctx32k\"}}");
}

TEST(PredictSpreadTest, AnEngineWithoutFitsIsAnError) {
  scenarios::FoldFits folds;
  folds.add_folds()->mutable_params()->set_engine(scenarios::SGLANG);
  absl::StatusOr<PredictionSpread> spread = PredictSpread(
      runner::RepoPredictionContext(), LoneVllmRequest(), scenarios::VLLM, folds, 1);
  ASSERT_FALSE(spread.ok());
  EXPECT_NE(spread.status().message().find("no fits of VLLM"), std::string::npos);
}

// The committed fold file and parameters file come from the same fit
// (scripts/fit_leave_one_out.sh and scripts/fit_default_params.sh run the same
// search): each engine's fit on every run is the committed block, value for
// value, and each of its runs has one fold, fitted on all the others.
TEST(CommittedFoldsTest, HoldTheCommittedFitAndOneFoldPerRun) {
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  absl::StatusOr<scenarios::FoldFits> folds = LoadFoldFits(
      std::string(SERVESIM_SOURCE_DIR) + "/scenarios/fitted_params_folds.textproto", "--folds");
  ASSERT_TRUE(folds.ok()) << folds.status();
  ASSERT_FALSE(context.params.engines().empty());
  for (const scenarios::EngineParams& committed : context.params.engines()) {
    const std::string engine = scenarios::EngineKind_Name(committed.engine());
    int fits = 0;
    for (const scenarios::FoldFit& f : folds->folds()) {
      if (f.params().engine() != committed.engine()) continue;
      ++fits;
      if (f.held_out().empty()) {
        EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(f.params(), committed))
            << engine << ": the fold file's fit on every run differs from the parameters file";
        continue;
      }
      std::vector<std::string> others;
      for (const std::string& run : committed.fitted_on()) {
        if (run != f.held_out()) others.push_back(run);
      }
      EXPECT_EQ(others.size() + 1, static_cast<size_t>(committed.fitted_on_size()))
          << engine << ": " << f.held_out() << " is not one of its fitted runs";
      EXPECT_EQ(std::vector<std::string>(f.params().fitted_on().begin(),
                                         f.params().fitted_on().end()),
                others)
          << engine << " without " << f.held_out();
    }
    EXPECT_EQ(fits, committed.fitted_on_size() + 1) << engine;
  }
}

// Each fold records how it predicted its held-out run: on a layout its
// engine was fitted on, with the throughput the leave-one-out table prints
// for that run (one command writes both; the table rounds to 0.1).
TEST(CommittedFoldsTest, RecordTheHeldOutRowsOfTheLeaveOneOutTable) {
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  absl::StatusOr<scenarios::FoldFits> folds = LoadFoldFits(
      std::string(SERVESIM_SOURCE_DIR) + "/scenarios/fitted_params_folds.textproto", "--folds");
  ASSERT_TRUE(folds.ok()) << folds.status();
  std::map<std::string, std::pair<double, double>> table;  // case -> measured, predicted tok/s
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/docs/validation_leave_one_out.txt");
  for (std::string line; std::getline(in, line);) {
    std::istringstream row(line);
    std::string name, ok, bar;
    double measured = 0, predicted = 0;
    if (row >> name >> ok >> bar >> measured >> predicted && ok == "yes" && bar == "|") {
      table[name] = {measured, predicted};
    }
  }
  int held_out = 0;
  for (const scenarios::FoldFit& f : folds->folds()) {
    if (f.held_out().empty()) continue;
    ++held_out;
    const scenarios::EngineParams* committed =
        runner::FindEngineParams(context.params, f.params().engine());
    ASSERT_NE(committed, nullptr) << f.held_out();
    const auto& layouts = committed->coverage().layouts();
    EXPECT_TRUE(std::find(layouts.begin(), layouts.end(), f.held_out_result().layout()) !=
                layouts.end())
        << f.held_out() << ": " << f.held_out_result().layout();
    ASSERT_TRUE(table.contains(f.held_out())) << f.held_out();
    bool found = false;
    for (const scenarios::HeldOutFigure& figure : f.held_out_result().figures()) {
      if (figure.key() != "total_token_throughput") continue;
      found = true;
      EXPECT_NEAR(figure.measured(), table[f.held_out()].first, 0.051) << f.held_out();
      EXPECT_NEAR(figure.predicted(), table[f.held_out()].second, 0.051) << f.held_out();
    }
    EXPECT_TRUE(found) << f.held_out();
  }
  EXPECT_EQ(held_out, static_cast<int>(table.size()));
}

}  // namespace
}  // namespace servesim::fit
