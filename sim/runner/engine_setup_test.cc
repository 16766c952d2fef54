#include "sim/runner/engine_setup.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/model_spec.h"
#include "scenarios/serve_command_for_test.h"
#include "sim/runner/repo_context_for_test.h"

namespace servesim::runner {
namespace {

scenarios::EngineConfig ConfigOf(const std::string& serve) {
  absl::StatusOr<scenarios::EngineConfig> config =
      scenarios::ParseV32ServeCommand(serve, {}, scenarios::ServeContext{});
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : scenarios::EngineConfig();
}

EngineSetup SetupOf(const std::string& serve) {
  absl::StatusOr<EngineSetup> setup =
      PrepareEngine(ConfigOf(serve), RepoPredictionContext().spec, scenarios::EngineParams{});
  EXPECT_TRUE(setup.ok()) << setup.status();
  return setup.ok() ? *setup : EngineSetup();
}

models::OpGraphOptions GraphOf(const std::string& serve) { return SetupOf(serve).predictor.graph; }

// Each server's chat stream: a role message first on all three (vLLM's
// chat_completion_stream_generator, SGLang's _generate_chat_stream,
// TensorRT-LLM's chat_stream_post_processor); a finish_reason message of its
// own after the last token only on SGLang (the others put it on the last
// token's message).
TEST(EngineSetupTest, ChatStreamsAddTheEnginesTokenlessMessages) {
  const serving::ChatStreamFraming vllm =
      SetupOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8").topology.chat_stream;
  const serving::ChatStreamFraming sglang =
      SetupOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8")
          .topology.chat_stream;
  const serving::ChatStreamFraming trtllm =
      SetupOf("trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8").topology.chat_stream;
  EXPECT_TRUE(vllm.role_message_first && sglang.role_message_first && trtllm.role_message_first);
  EXPECT_FALSE(vllm.finish_message_last);
  EXPECT_TRUE(sglang.finish_message_last);
  EXPECT_FALSE(trtllm.finish_message_last);
}

// The engines' DSA backends exist for the indexer's top-k; a model without
// the indexer (DeepSeek-V3) runs none of them, and the header must not claim
// it does.
TEST(EngineSetupTest, AttentionNoteNamesDsaOnlyForAModelWithTheIndexer) {
  absl::StatusOr<models::ModelSpec> v3 =
      models::LoadModelSpec(std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v3.textproto");
  ASSERT_TRUE(v3.ok()) << v3.status();
  for (const std::string serve :
       {"vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8",
        "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8",
        "trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8"}) {
    auto attention_note = [](const EngineSetup& setup) {
      for (const std::string& note : setup.notes) {
        if (note.rfind("attention: ", 0) == 0) return note;
      }
      return std::string();
    };
    const std::string dsa = attention_note(SetupOf(serve));
    absl::StatusOr<EngineSetup> dense = PrepareEngine(ConfigOf(serve), *v3, {});
    ASSERT_TRUE(dense.ok()) << dense.status();
    EXPECT_EQ(dsa.find("dense MLA"), std::string::npos) << serve << ": " << dsa;
    EXPECT_NE(attention_note(*dense).find("dense MLA (the model spec has no DSA indexer"),
              std::string::npos)
        << serve << ": " << attention_note(*dense);
    EXPECT_EQ(attention_note(*dense).find("nsa"), std::string::npos) << attention_note(*dense);
    EXPECT_EQ(attention_note(*dense).find("SPARSE"), std::string::npos) << attention_note(*dense);
  }
}

// vLLM v0.13's FlashMLA sparse backend: one kernel for every row, chosen by
// the cache dtype, heads padded to 64, the whole top-k per row, no dense MHA.
TEST(EngineSetupTest, VllmSendsEveryRowThroughOneFlashMlaKernel) {
  models::OpGraphOptions g = GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8");
  EXPECT_EQ(g.sparse_kernel_routing, models::SparseKernelRouting::kAllOnPrefillKernel);
  EXPECT_TRUE(g.sparse_prefill_full_topk);
  EXPECT_TRUE(g.sparse_decode_full_topk);
  EXPECT_EQ(g.dense_mha_prefill_max_tokens, 0);
  EXPECT_EQ(g.min_sparse_prefill_heads, 64);
  g = GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --kv-cache-dtype fp8");
  EXPECT_EQ(g.sparse_kernel_routing, models::SparseKernelRouting::kAllOnDecodeKernel);
}

// The layout line says when an instance spans nodes (its collectives then
// cross InfiniBand), and says nothing of nodes on one.
TEST(EngineSetupTest, TheLayoutLineNamesTheNodes) {
  const EngineSetup two = SetupOf(
      "vllm serve deepseek-ai/DeepSeek-V3.2 -dp 8 --data-parallel-size-local 4 "
      "--enable-expert-parallel --max-model-len 81920");
  ASSERT_FALSE(two.notes.empty());
  EXPECT_NE(two.notes[0].find(", over 2 nodes (collectives between them over InfiniBand)"),
            std::string::npos)
      << two.notes[0];
  const EngineSetup one = SetupOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8");
  ASSERT_FALSE(one.notes.empty());
  EXPECT_EQ(one.notes[0].find("nodes"), std::string::npos) << one.notes[0];
}

// Past max_seq_len - prompt, TensorRT-LLM shortens max_tokens
// (_deduce_max_tokens) where vLLM and SGLang refuse the request; a prompt
// that leaves no room fails on all three.
TEST(EngineSetupTest, OnlyTrtllmShortensMaxTokensPastTheContext) {
  const serving::ClientRequest fits{1000, 1000, 0, sim::SimTime::Zero()};
  const serving::ClientRequest over{1001, 1000, 0, sim::SimTime::Zero()};
  const serving::ClientRequest full{2000, 1, 0, sim::SimTime::Zero()};
  const EngineSetup trt = SetupOf(
      "trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8 "
      "--max_seq_len 2000");
  ASSERT_TRUE(trt.topology.output_cap);
  EXPECT_NE(trt.topology.output_cap_rule.find("TensorRT-LLM's _deduce_max_tokens"),
            std::string::npos);
  EXPECT_EQ(trt.topology.output_cap(fits), 1000);
  EXPECT_EQ(trt.topology.output_cap(over), 999);
  EXPECT_EQ(trt.topology.reject_reason(over), "");
  EXPECT_NE(trt.topology.reject_reason(full).find(
                "prompt length (2000) leaves no room under max_seq_len (2000)"),
            std::string::npos)
      << trt.topology.reject_reason(full);
  const EngineSetup vllm = SetupOf(
      "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 "
      "--max-model-len 2000");
  EXPECT_FALSE(vllm.topology.output_cap);
  EXPECT_EQ(vllm.topology.reject_reason(fits), "");
  EXPECT_NE(vllm.topology.reject_reason(over), "");
  const EngineSetup sglang = SetupOf(
      "python3 -m sglang.launch_server --model-path "
      "deepseek-ai/DeepSeek-V3.2 --tp-size 8 --context-length 2000");
  EXPECT_FALSE(sglang.topology.output_cap);
  EXPECT_NE(sglang.topology.reject_reason(over), "");
}

// vLLM's decode indexer logits span max_model_len (cleaned to -inf);
// SGLang and TensorRT-LLM clean nothing past a row's context.
TEST(EngineSetupTest, OnlyVllmCleansDecodeLogitsToMaxModelLen) {
  EXPECT_EQ(GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8").decode_logits_width, 163840);
  EXPECT_EQ(GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --max-model-len 32768")
                .decode_logits_width,
            32768);
  EXPECT_EQ(GraphOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 "
                    "--tp-size 8")
                .decode_logits_width,
            0);
  EXPECT_EQ(GraphOf("trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8").decode_logits_width, 0);
}

// vLLM computes logits outside its CUDA graphs, on the real rows only;
// SGLang's and TensorRT-LLM's decode graphs run the LM head on the padded
// batch. Only SGLang chooses dense MHA for the prefill batch as a whole.
TEST(EngineSetupTest, WhereTheLmHeadRunsAndWhoChoosesDenseMhaPerBatch) {
  const models::OpGraphOptions vllm = GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8");
  const models::OpGraphOptions sglang =
      GraphOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8");
  const models::OpGraphOptions trtllm =
      GraphOf("trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8");
  EXPECT_FALSE(vllm.lm_head_in_graph);
  EXPECT_TRUE(sglang.lm_head_in_graph);
  EXPECT_TRUE(trtllm.lm_head_in_graph);
  EXPECT_TRUE(sglang.dense_mha_prefill_whole_batch);
  EXPECT_FALSE(trtllm.dense_mha_prefill_whole_batch);
}

// vLLM's DP ranks pad to the largest rank's tokens only for CUDA graphs;
// under --enforce-eager each gathers its own (get_dp_padding's early exit).
TEST(EngineSetupTest, VllmPadsDpRanksToTheLargestOnlyWithCudaGraphs) {
  const std::string dp8 =
      "vllm serve deepseek-ai/DeepSeek-V3.2 -dp 8 --enable-expert-parallel --max-model-len 32768";
  EXPECT_TRUE(SetupOf(dp8).predictor.pad_moe_tokens_to_max_rank);
  EXPECT_FALSE(SetupOf(dp8 + " --enforce-eager").predictor.pad_moe_tokens_to_max_rank);
}

// SGLang's DP-attention ranks agree on a step's phase only under
// speculative decoding, and only with more than one rank.
TEST(EngineSetupTest, SglangRanksAgreeOnThePhaseOnlyWithSpeculationAndDpAttention) {
  const std::string tp8 =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8";
  const std::string eagle =
      " --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
      "--speculative-num-draft-tokens 2";
  const std::string dp8 = tp8 + " --dp-size 8 --enable-dp-attention";
  EXPECT_TRUE(SetupOf(dp8 + eagle).topology.ranks_agree_on_phase);
  EXPECT_FALSE(SetupOf(dp8).topology.ranks_agree_on_phase);
  EXPECT_FALSE(SetupOf(tp8 + eagle).topology.ranks_agree_on_phase);
}

// Overlap schedulers form the next batch one step ahead: SGLang without
// speculative decoding (_handle_speculative_decoding turns it off), and
// TensorRT-LLM by default; vLLM v0.13 only with --async-scheduling.
TEST(EngineSetupTest, OverlapSchedulersScheduleOneStepAhead) {
  const std::string sglang =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8";
  EXPECT_TRUE(SetupOf(sglang).topology.schedules_one_step_ahead);
  EXPECT_FALSE(SetupOf(sglang + " --disable-overlap-schedule").topology.schedules_one_step_ahead);
  EXPECT_FALSE(SetupOf(sglang + " --speculative-algorithm EAGLE --speculative-num-steps 1 "
                                "--speculative-eagle-topk 1 --speculative-num-draft-tokens 2")
                   .topology.schedules_one_step_ahead);
  EXPECT_TRUE(SetupOf("trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8")
                  .topology.schedules_one_step_ahead);
  const std::string vllm = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
  EXPECT_FALSE(SetupOf(vllm).topology.schedules_one_step_ahead);
  EXPECT_TRUE(SetupOf(vllm + " --async-scheduling").topology.schedules_one_step_ahead);
}

// DeepSeek-V3.2's generation_config sets top_p 0.95: vLLM's sampler sorts
// the vocabulary under the defaults, not with vLLM's own sampling defaults
// or FlashInfer's sampler; SGLang samples without a sort.
TEST(EngineSetupTest, VllmSortsForTopPFromTheGenerationConfig) {
  EXPECT_TRUE(GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8").sampler_sorts_vocab);
  EXPECT_FALSE(GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --generation-config vllm")
                   .sampler_sorts_vocab);
  absl::StatusOr<scenarios::EngineConfig> flashinfer = scenarios::ParseV32ServeCommand(
      "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8", {{"VLLM_USE_FLASHINFER_SAMPLER", "1"}},
      scenarios::ServeContext{});
  ASSERT_TRUE(flashinfer.ok()) << flashinfer.status();
  absl::StatusOr<EngineSetup> setup =
      PrepareEngine(*flashinfer, RepoPredictionContext().spec, scenarios::EngineParams{});
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_FALSE(setup->predictor.graph.sampler_sorts_vocab);
  EXPECT_FALSE(GraphOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 "
                       "--tp-size 8")
                   .sampler_sorts_vocab);
}

// What the requests send overrides the generation config: their own top_p
// (1 = none, < 1 sorts even under --generation-config vllm), and greedy
// requests (temperature 0) take the argmax with no top-p.
TEST(EngineSetupTest, RequestSamplingParametersDecideTheSort) {
  auto graph = [](const std::string& serve, std::optional<double> top_p, bool greedy) {
    scenarios::ServeContext context;
    context.request_top_p = top_p;
    if (greedy) context.request_temperature = 0.0;
    absl::StatusOr<scenarios::EngineConfig> config =
        scenarios::ParseV32ServeCommand(serve, {}, context);
    EXPECT_TRUE(config.ok()) << config.status();
    absl::StatusOr<EngineSetup> setup =
        PrepareEngine(*config, RepoPredictionContext().spec, scenarios::EngineParams{});
    EXPECT_TRUE(setup.ok()) << setup.status();
    return setup->predictor.graph;
  };
  const std::string tp8 = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
  EXPECT_FALSE(graph(tp8, 1.0, false).sampler_sorts_vocab);
  EXPECT_TRUE(graph(tp8 + " --generation-config vllm", 0.9, false).sampler_sorts_vocab);
  EXPECT_FALSE(graph(tp8, std::nullopt, true).sampler_sorts_vocab);
  EXPECT_FALSE(graph(tp8, 0.9, true).sampler_sorts_vocab);
}

// SGLang: short prefills take dense MHA; FlashMLA backends walk the whole
// top-k, fa3 (the default decode backend on a BF16 cache) the real length.
TEST(EngineSetupTest, SglangChargesTheWholeTopkOnlyOnFlashMlaBackends) {
  models::OpGraphOptions g =
      GraphOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8");
  EXPECT_EQ(g.sparse_kernel_routing, models::SparseKernelRouting::kByPhase);
  EXPECT_EQ(g.dense_mha_prefill_max_tokens, 2048);
  EXPECT_TRUE(g.sparse_prefill_full_topk);   // flashmla_sparse
  EXPECT_FALSE(g.sparse_decode_full_topk);   // fa3
  EXPECT_EQ(g.min_sparse_decode_heads, 1);
  g = GraphOf(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
      "--kv-cache-dtype fp8_e4m3");
  EXPECT_TRUE(g.sparse_decode_full_topk);  // flashmla_kv
  EXPECT_EQ(g.min_sparse_decode_heads, 64);
  g = GraphOf(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
      "--nsa-prefill-backend fa3 --nsa-decode-backend fa3");
  EXPECT_FALSE(g.sparse_prefill_full_topk);
  EXPECT_FALSE(g.sparse_decode_full_topk);
}

// flashmla_kv decodes from FlashMLA's FP8 layout: on a BF16 cache each decode
// pass quantizes the rank's whole pool first, and its fitted factor names that
// pass (lower bound 1: priced at the measured copy ceiling); on an FP8 cache
// there is no such pass and no decode factor.
TEST(EngineSetupTest, SglangFlashmlaKvQuantizesOnlyABf16Cache) {
  const std::string base =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
      "--nsa-decode-backend flashmla_kv";
  const EngineSetup setup = SetupOf(base);
  EXPECT_EQ(setup.predictor.graph.decode_quantizes_kv_pool_tokens,
            setup.kv_blocks_per_rank * 64);
  EXPECT_GT(setup.predictor.graph.decode_quantizes_kv_pool_tokens, 0);
  std::vector<BackendChoice> backends = NonDefaultBackends(ConfigOf(base), SetupOf(base).layout);
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0].name, "nsa_decode=flashmla_kv");
  EXPECT_EQ(backends[0].op_kinds, std::vector<std::string>{"kv_cache_quantize"});
  EXPECT_EQ(backends[0].min_time_scale, 1.0);

  const std::string fp8 = base + " --kv-cache-dtype fp8_e4m3";
  EXPECT_EQ(GraphOf(fp8).decode_quantizes_kv_pool_tokens, 0);
  for (const BackendChoice& b : NonDefaultBackends(ConfigOf(fp8), SetupOf(fp8).layout)) {
    EXPECT_NE(b.name, "nsa_decode=flashmla_kv");
  }
}

// Attention data parallelism gathers the ranks' tokens for the MoE and
// scatters them back: vLLM -dp N, SGLang --dp-size N --enable-dp-attention,
// TensorRT-LLM enable_attention_dp select that collective path; plain TP
// (one all-reduce per block) and SGLang --enable-dp-attention without
// --dp-size (dp 1 turns it off) do not.
TEST(EngineSetupTest, DataParallelAttentionSelectsTheGatherScatterPath) {
  auto selects = [](const std::string& serve) {
    for (const BackendChoice& b : NonDefaultBackends(ConfigOf(serve), SetupOf(serve).layout)) {
      if (b.name != "moe_comm=allgather_reducescatter" &&
          b.name != "moe_comm_latency=allgather_reducescatter") {
        continue;
      }
      EXPECT_EQ(b.op_kinds, (std::vector<std::string>{"all_gather", "reduce_scatter"}));
      EXPECT_FALSE(b.prefill_only);
      EXPECT_EQ(b.unfitted_pricing,
                "the roofline (NCCL at 370 GB/s of bus bandwidth, 10 us a call)");
      if (ConfigOf(serve).engine() == scenarios::VLLM) {
        // vLLM's grouped per-rank calls: a per-call latency, 10 us to 1 ms.
        EXPECT_EQ(b.name, "moe_comm_latency=allgather_reducescatter");
        EXPECT_TRUE(b.scales_call_latency);
        EXPECT_EQ(b.min_time_scale, 1.0);
        EXPECT_EQ(b.max_time_scale, 100.0);
      } else {
        EXPECT_FALSE(b.scales_call_latency);
        // The roofline against NVLink 4 each way.
        EXPECT_DOUBLE_EQ(b.min_time_scale, 370.0 / 450.0);
        EXPECT_EQ(b.max_time_scale, 10.0);
      }
      return true;
    }
    return false;
  };
  EXPECT_TRUE(selects(
      "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 1 -dp 8 --enable-expert-parallel --max-model-len 81920"));
  EXPECT_FALSE(selects("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8"));
  const std::string sglang =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8";
  EXPECT_TRUE(selects(sglang + " --dp-size 8 --enable-dp-attention"));
  EXPECT_FALSE(selects(sglang + " --enable-dp-attention"));
  EXPECT_FALSE(selects(sglang));
}

// A backend without a fitted factor runs as the measured kernel, and the
// header says why: listed under not_fitted, or never selected by a live run.
TEST(EngineSetupTest, HeaderNamesBackendsWithoutAFittedFactor) {
  scenarios::EngineParams params;
  params.add_not_fitted("nsa_prefill=fa3");
  absl::StatusOr<EngineSetup> setup = PrepareEngine(
      ConfigOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 "
               "--tp-size 8 --nsa-prefill-backend fa3 --nsa-decode-backend flashmla_sparse"),
      RepoPredictionContext().spec, params);
  ASSERT_TRUE(setup.ok()) << setup.status();
  auto has_note = [&](const std::string& text) {
    return std::find(setup->notes.begin(), setup->notes.end(), text) != setup->notes.end();
  };
  EXPECT_TRUE(has_note(
      "no fitted factor for nsa_prefill=fa3 (the live runs that select it never reach its "
      "kernel): priced as servesim's measured kernel"));
  EXPECT_TRUE(has_note(
      "no fitted factor for nsa_decode=flashmla_sparse (no live run selects it): priced as "
      "servesim's measured kernel"));
  EXPECT_TRUE(setup->predictor.kind_time_scale.empty());
}

// A parameters file may name only the backends NonDefaultBackends gives
// (the loader refuses others): over every SGLang NSA pair and the layouts
// that select the other paths, each name given is listed for its engine,
// and every vLLM and SGLang name listed is given by some layout.
TEST(EngineSetupTest, FittableBackendNamesListWhatNonDefaultBackendsGives) {
  const std::string sglang =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8";
  std::vector<std::string> serves = {
      "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8",
      "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 1 -dp 8 --enable-expert-parallel "
      "--max-model-len 81920",
      "trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8",
      sglang + " --dp-size 8 --enable-dp-attention"};
  for (const std::string& prefill : scenarios::SglangNsaBackends()) {
    for (const std::string& decode : scenarios::SglangNsaBackends()) {
      serves.push_back(sglang + " --nsa-prefill-backend " + prefill + " --nsa-decode-backend " +
                       decode);
    }
  }
  std::map<scenarios::EngineKind, std::set<std::string>> given;
  for (const std::string& serve : serves) {
    const scenarios::EngineConfig config = ConfigOf(serve);
    const std::vector<std::string> known = FittableBackendNames(config.engine());
    for (const BackendChoice& b : NonDefaultBackends(config, SetupOf(serve).layout)) {
      EXPECT_NE(std::find(known.begin(), known.end(), b.name), known.end()) << serve << ": " << b.name;
      given[config.engine()].insert(b.name);
    }
  }
  for (scenarios::EngineKind engine : {scenarios::VLLM, scenarios::SGLANG}) {
    const std::vector<std::string> known = FittableBackendNames(engine);
    EXPECT_EQ(given[engine], std::set<std::string>(known.begin(), known.end())) << engine;
  }
  EXPECT_TRUE(given[scenarios::TRTLLM].count("moe=tensor_parallel"));
}

}  // namespace
}  // namespace servesim::runner
