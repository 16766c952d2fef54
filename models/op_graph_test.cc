#include "models/op_graph.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::models {
namespace {

ModelSpec Load(const char* file) {
  absl::StatusOr<ModelSpec> spec =
      LoadModelSpec(std::string(SERVESIM_SOURCE_DIR) + "/models/" + file);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

ParallelLayout Must(absl::StatusOr<ParallelLayout> l) {
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? *l : ParallelLayout();
}

RankBatch Decodes(int n, int64_t context) {
  RankBatch b;
  for (int i = 0; i < n; ++i) b.seqs.push_back({1, context});
  return b;
}

const Op* Find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}
// The pointer points into `ops`: a temporary list would be gone before it is
// read (ASan found two tests doing so).
const Op* Find(std::vector<Op>&& ops, const std::string& name) = delete;

bool Has(const std::vector<Op>& ops, const std::string& name) {
  return Find(ops, name) != nullptr;
}

struct Coll {
  std::string name, kind;
  int gpus;
  double bytes;
  int repeat;
  bool operator==(const Coll&) const = default;
};

std::vector<Coll> Collectives(const std::vector<Op>& ops) {
  std::vector<Coll> out;
  for (const Op& op : ops) {
    if (op.phase == OpPhase::kCommunication) {
      out.push_back(
          {op.name, op.kind, op.comm_group_gpus, op.comm_bytes, op.repeat});
    }
  }
  return out;
}

void PrintTo(const Coll& c, std::ostream* os) {
  *os << c.name << "/" << c.kind << "/" << c.gpus << "/" << c.bytes << "/x"
      << c.repeat;
}

constexpr double kHiddenBytes = 7168 * 2;  // one token's BF16 hidden state

// vLLM TP8, 10 decodes: 2 all-reduces of T x 14336 B per layer (after o_proj,
// after the MLP/MoE), the embedding all-reduce, the logits all-gather of
// 10 x 16160 BF16 (129280 / 8 vocab rows per rank).
TEST(OpGraphTest, VllmTp8HasTwoAllReducesPerLayer) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 8, 1, false, 8)), Decodes(10, 1000), 10, {});
  const std::vector<Coll> want = {
      {"embedding_all_reduce", "all_reduce", 8, 10 * kHiddenBytes, 1},
      {"attn_all_reduce", "all_reduce", 8, 10 * kHiddenBytes, 61},
      {"dense_all_reduce", "all_reduce", 8, 10 * kHiddenBytes, 3},
      {"moe_all_reduce", "all_reduce", 8, 10 * kHiddenBytes, 58},
      {"logits_all_gather", "all_gather", 8, 10 * 16160 * 2, 1},
  };
  EXPECT_EQ(Collectives(ops), want);
  // MoE TP8: all 256 experts at width 2048 / 8, every token's 8 pairs local.
  const Op* up = Find(ops, "experts_gate_up");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->key,
            (std::vector<OpKeyDim>{{"experts", 256}, {"k", 7168}, {"n", 512}}));
  EXPECT_EQ(up->x, 80);
  // The fused q_a + kv_a projection stays whole (replicated); q_b is split.
  EXPECT_EQ(Find(ops, "fused_qkv_a_proj")->key,
            (std::vector<OpKeyDim>{{"k", 7168}, {"n", 2112}}));
  EXPECT_EQ(Find(ops, "q_b_proj")->key,
            (std::vector<OpKeyDim>{{"k", 1536}, {"n", 16 * 192}}));
  EXPECT_EQ(Find(ops, "o_proj")->key,
            (std::vector<OpKeyDim>{{"k", 16 * 128}, {"n", 7168}}));
}

// vLLM DP8 + EP8: no attention or dense communication; per MoE layer an
// all-gather of this rank's share of the 80 global tokens before and a
// reduce-scatter after; 32 local experts see 80 x 8 / 8 pairs.
TEST(OpGraphTest, VllmDp8Ep8GathersAroundTheMoe) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 1, 8, true, 8)), Decodes(10, 1000), 80, {});
  const std::vector<Coll> want = {
      {"moe_all_gather", "all_gather", 8, 10 * kHiddenBytes, 58},
      {"moe_reduce_scatter", "reduce_scatter", 8, 10 * kHiddenBytes, 58},
  };
  EXPECT_EQ(Collectives(ops), want);
  const Op* up = Find(ops, "experts_gate_up");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->key,
            (std::vector<OpKeyDim>{{"experts", 32}, {"k", 7168}, {"n", 4096}}));
  EXPECT_EQ(up->x, 80);
  // Shared expert replicated, on the rank's own 10 tokens.
  EXPECT_EQ(Find(ops, "shared_gate_up_proj")->x, 10);
  EXPECT_EQ(Find(ops, "shared_gate_up_proj")->key,
            (std::vector<OpKeyDim>{{"k", 7168}, {"n", 4096}}));
}

// vLLM -tp 4 -dp 2 + EP8: a DP rank's 4 TP ranks hold the same 10 tokens, so
// each GPU gathers only its DP peer's (a group of 2, not 8: that priced 7
// shards on the wire for one), and the DP rank's TP group all-reduces the
// experts' partial sums after the reduce-scatter (vLLM's dp_group
// all_gatherv / reduce_scatterv, then the tensor-parallel all-reduce).
TEST(OpGraphTest, VllmTp4Dp2GathersFromItsDpPeerOnly) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 4, 2, true, 8)), Decodes(10, 1000), 20, {});
  std::vector<Coll> moe;
  for (const Coll& c : Collectives(ops)) {
    if (c.name.rfind("moe_", 0) == 0) moe.push_back(c);
  }
  const std::vector<Coll> want = {
      {"moe_all_gather", "all_gather", 2, 10 * kHiddenBytes, 58},
      {"moe_reduce_scatter", "reduce_scatter", 2, 10 * kHiddenBytes, 58},
      {"moe_tp_all_reduce", "all_reduce", 4, 10 * kHiddenBytes, 58},
  };
  EXPECT_EQ(moe, want);
  EXPECT_EQ(Find(ops, "experts_gate_up")->x, 20);  // both DP ranks' tokens
}

// vLLM -tp 2 -dp 8 --data-parallel-size-local 4: 8 GPUs on each of two
// nodes. The DP peers at one TP position sit on both nodes, so their gather
// crosses InfiniBand though the group has only 8 members; the TP pair's
// all-reduce stays inside a node. -dp 8 -dpl 4 (4 GPUs a node) likewise.
TEST(OpGraphTest, CollectivesKnowWhenTheirGpusSpanNodes) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  ParallelLayout l = Must(VllmLayout(spec, 2, 8, true, 16));
  l.node_gpus = 8;
  auto ops = BuildRankIterationOps(spec, l, Decodes(10, 1000), 80, {});
  EXPECT_EQ(Find(ops, "moe_all_gather")->comm_group_gpus, 8);
  EXPECT_TRUE(Find(ops, "moe_all_gather")->comm_spans_nodes);
  EXPECT_TRUE(Find(ops, "moe_reduce_scatter")->comm_spans_nodes);
  EXPECT_FALSE(Find(ops, "moe_tp_all_reduce")->comm_spans_nodes);
  EXPECT_FALSE(Find(ops, "attn_all_reduce")->comm_spans_nodes);
  ParallelLayout four_a_node = Must(VllmLayout(spec, 1, 8, true, 8));
  four_a_node.node_gpus = 4;
  ops = BuildRankIterationOps(spec, four_a_node, Decodes(10, 1000), 80, {});
  EXPECT_TRUE(Find(ops, "moe_all_gather")->comm_spans_nodes);
  four_a_node.node_gpus = 8;  // one node
  ops = BuildRankIterationOps(spec, four_a_node, Decodes(10, 1000), 80, {});
  EXPECT_FALSE(Find(ops, "moe_all_gather")->comm_spans_nodes);
}

// SGLang TP8 + DP-attention 8: gather / scatter around the dense FFN (TP8 by
// default) and the MoE (TP8); the LM head is vocab-split over all 8 GPUs.
TEST(OpGraphTest, SglangDpAttentionGathersAroundDenseAndMoe) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops =
      BuildRankIterationOps(spec, Must(SglangLayout(spec, 8, 8, true, 1, 0, 8)),
                            Decodes(10, 1000), 80, {});
  const std::vector<Coll> want = {
      {"dense_all_gather", "all_gather", 8, 10 * kHiddenBytes, 3},
      {"dense_reduce_scatter", "reduce_scatter", 8, 10 * kHiddenBytes, 3},
      {"moe_all_gather", "all_gather", 8, 10 * kHiddenBytes, 58},
      {"moe_reduce_scatter", "reduce_scatter", 8, 10 * kHiddenBytes, 58},
      {"lm_head_hidden_all_gather", "all_gather", 8, 10 * kHiddenBytes, 1},
      {"logits_all_gather", "all_gather", 8, 80 * 16160 * 2, 1},
  };
  EXPECT_EQ(Collectives(ops), want);
  EXPECT_EQ(Find(ops, "dense_gate_up_proj")->x, 80);
  EXPECT_EQ(Find(ops, "shared_gate_up_proj")->x, 80);
  EXPECT_EQ(Find(ops, "experts_gate_up")->x, 640);
  EXPECT_EQ(Find(ops, "q_b_proj")->key,
            (std::vector<OpKeyDim>{{"k", 1536}, {"n", 128 * 192}}));
}

// With attention TP 4 in 2 DP ranks, each GPU still ends every gather with
// all ranks' tokens (2 x 10 here), so it sends an eighth of them, not its
// rank's whole 10 (an audit found the gathers 4x too large at --dp 2).
TEST(OpGraphTest, SglangDpAttentionGathersAnEighthPerGpuWithAttentionTp) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildRankIterationOps(spec, Must(SglangLayout(spec, 8, 2, true, 1, 0, 8)),
                                         Decodes(10, 1000), 20, {});
  const double shard = std::ceil(20.0 / 8) * kHiddenBytes;  // 3 of the 20 tokens
  for (const char* gather : {"moe_all_gather", "moe_reduce_scatter", "dense_all_gather",
                             "dense_reduce_scatter", "lm_head_hidden_all_gather"}) {
    EXPECT_EQ(Find(ops, gather)->comm_bytes, shard) << gather;
  }
  EXPECT_EQ(Find(ops, "experts_gate_up")->x, 20 * 8);
}

// FlashMLA sparse decode supports 64 or 128 heads: TP8's 16 heads pad to 64.
TEST(OpGraphTest, SparseDecodePadsHeads) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  OpGraphOptions o;
  o.kv_dtype = KvCacheDtype::kFp8DsMla;
  const auto tp8 = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 8, 1, false, 8)), Decodes(1, 100), 1, o);
  ASSERT_NE(Find(tp8, "sparse_mla_decode"), nullptr);
  EXPECT_EQ(Find(tp8, "sparse_mla_decode")->key,
            (std::vector<OpKeyDim>{{"heads", 64}, {"kv_fp8", 1}}));
  const auto dp8 = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 1, 8, true, 8)), Decodes(1, 100), 8, o);
  EXPECT_EQ(Find(dp8, "sparse_mla_decode")->key,
            (std::vector<OpKeyDim>{{"heads", 128}, {"kv_fp8", 1}}));
  o.min_sparse_decode_heads = 1;
  const auto unpadded = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 8, 1, false, 8)), Decodes(1, 100), 1, o);
  EXPECT_EQ(Find(unpadded, "sparse_mla_decode")->key[0],
            (OpKeyDim{"heads", 16}));
}

// The prefill factors stretch only token-linear work (Op::token_linear):
// attention, the indexer and the head are marked per row, every GEMM outside
// the head, norm, MoE op and layer collective is not. A storage that held a
// per-row op before must not carry the mark to the op written over it.
TEST(OpGraphTest, TokenLinearMarksOnlyGrowWithTokens) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout tp8 = Must(VllmLayout(spec, 8, 1, false, 8));
  OpGraphOptions o;
  o.kv_dtype = KvCacheDtype::kFp8DsMla;
  o.decode_logits_width = 163840;  // vLLM's decode logits, cleaned past each row's keys
  RankBatch mixed = Decodes(4, 3000);
  mixed.seqs.push_back({3000, 0});  // a prompt longer than the top-k: indexer, selection
  std::vector<Op> ops;
  BuildRankIterationOps(spec, tp8, mixed, 3004, o, ops);
  const std::vector<std::string> per_row = {
      "indexer_decode",    "indexer_logits_clean", "indexer_prefill", "index_topk",
      "sparse_mla_decode", "sparse_mla_prefill",   "lm_head",         "logits_all_gather",
      "sampling"};
  for (const std::string& name : per_row) {
    ASSERT_TRUE(Has(ops, name)) << name;
    EXPECT_FALSE(Find(ops, name)->token_linear) << name;
  }
  for (const char* name :
       {"fused_qkv_a_proj", "attn_w_uk", "o_proj", "attn_all_reduce", "experts_gate_up",
        "experts_down", "moe_all_reduce", "final_norm", "input_layernorm"}) {
    ASSERT_TRUE(Has(ops, name)) << name;
    EXPECT_TRUE(Find(ops, name)->token_linear) << name;
  }
  // Reuse the storage for a graph whose ops land where per-row ones were.
  BuildRankIterationOps(spec, tp8, Decodes(1, 10), 1, o, ops);
  for (const Op& op : ops) {
    const bool listed = std::find(per_row.begin(), per_row.end(), op.name) != per_row.end();
    EXPECT_EQ(op.token_linear, !listed) << op.name;
  }
}

// StepPredictor's weight-reading rows run the token-linear ops and nothing
// else: no attention, no absorbed BMMs, no sampled row, no pool quantize pass
// (which a decode pass would run), while their tokens reach the GEMMs.
TEST(OpGraphTest, WeightReadingRowsRunOnlyTokenLinearOps) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout layout = Must(VllmLayout(spec, 8, 1, false, 8));
  OpGraphOptions o;
  o.decode_quantizes_kv_pool_tokens = 1000;
  RankBatch rows;
  for (int i = 0; i < 64; ++i) rows.seqs.push_back({1, 0, RowKind::kWeightReading});
  const auto ops = BuildRankIterationOps(spec, layout, rows, 64, o);
  for (const char* absent : {"kv_cache_quantize", "sparse_mla_decode", "indexer_decode", "attn_w_uk",
                             "attn_w_uv", "lm_head", "sampling"}) {
    EXPECT_FALSE(Has(ops, absent)) << absent;
  }
  const Op* q_b = Find(ops, "q_b_proj");
  ASSERT_NE(q_b, nullptr);
  EXPECT_EQ(q_b->x, 64);
}

// SGLang's flashmla_kv decode on a BF16 cache: per layer, one pass reading
// the whole pool in BF16 (1152 B/token) and writing FlashMLA's FP8 layout
// (656 B/token), x = half the traffic (a copy's size); then the FP8 kernel.
// No pass on an FP8 cache, nor in a step without decodes.
TEST(OpGraphTest, Bf16CacheQuantizedWholeBeforeFlashMlaKvDecode) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout layout = Must(VllmLayout(spec, 1, 1, false, 8));
  OpGraphOptions o;
  o.decode_quantizes_kv_pool_tokens = 1000;
  const auto ops = BuildRankIterationOps(spec, layout, Decodes(3, 100), 3, o);
  const Op* quantize = Find(ops, "kv_cache_quantize");
  ASSERT_NE(quantize, nullptr);
  EXPECT_EQ(quantize->x, 1000 * (1152 + 656) / 2);
  EXPECT_EQ(quantize->hbm_bytes, 1000 * (1152 + 656));
  EXPECT_EQ(quantize->repeat, 61);
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->key[1], (OpKeyDim{"kv_fp8", 1}));

  RankBatch prefill;
  prefill.seqs = {{4096, 0}};
  EXPECT_FALSE(Has(BuildRankIterationOps(spec, layout, prefill, 4096, o), "kv_cache_quantize"));
  o.kv_dtype = KvCacheDtype::kFp8DsMla;
  EXPECT_FALSE(Has(BuildRankIterationOps(spec, layout, Decodes(3, 100), 3, o), "kv_cache_quantize"));
}

// vLLM's decode indexer logits are [rows, width] FP32, cleaned to -inf past
// each row's keys: 3 decodes of context 100 score 101 keys each, so a width
// of 1000 writes 3 x 1000 - 303 = 2697 floats (10788 B; x = half, a copy's
// size) per layer. An MTP verification row of 2 tokens scores 101 + 102.
// Each sequence is cleaned on its own. Nothing without the width, nor for
// prefill rows.
TEST(OpGraphTest, DecodeIndexerLogitsCleanedPastEachRowsContext) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout layout = Must(VllmLayout(spec, 8, 1, false, 8));
  OpGraphOptions o;
  o.decode_logits_width = 1000;
  std::vector<Op> ops = BuildRankIterationOps(spec, layout, Decodes(3, 100), 3, o);
  const Op* clean = Find(ops, "indexer_logits_clean");
  ASSERT_NE(clean, nullptr);
  EXPECT_EQ(clean->hbm_bytes, 2697 * 4);
  EXPECT_EQ(clean->x, 2697 * 4 / 2);
  EXPECT_EQ(clean->repeat, 61);

  o.num_speculative_tokens = 1;
  RankBatch verify;
  verify.seqs = {{2, 100}};
  ops = BuildRankIterationOps(spec, layout, verify, 2, o);
  clean = Find(ops, "indexer_logits_clean");
  ASSERT_NE(clean, nullptr);
  EXPECT_EQ(clean->hbm_bytes, (2 * 1000 - 101 - 102) * 4);

  // A sequence longer than the width cleans nothing and takes nothing from the
  // others: 1000 - 101 floats.
  o.num_speculative_tokens = 0;
  RankBatch mixed_lengths;
  mixed_lengths.seqs = {{1, 100}, {1, 5000}};
  ops = BuildRankIterationOps(spec, layout, mixed_lengths, 2, o);
  clean = Find(ops, "indexer_logits_clean");
  ASSERT_NE(clean, nullptr);
  EXPECT_EQ(clean->hbm_bytes, (1000 - 101) * 4);

  RankBatch prefill;
  prefill.seqs = {{4096, 0}};
  EXPECT_FALSE(Has(BuildRankIterationOps(spec, layout, prefill, 4096, o), "indexer_logits_clean"));
  o.decode_logits_width = 0;
  EXPECT_FALSE(Has(BuildRankIterationOps(spec, layout, Decodes(3, 100), 3, o), "indexer_logits_clean"));
}

// Decode x: keys scored by the indexer = context + 1; keys attended = min(that,
// 2048).
TEST(OpGraphTest, SparseDecodeAttendsAtMostTopK) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  RankBatch b;
  b.seqs = {{1, 100}, {1, 5000}};
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 1, 1, false, 8)), b, 2, {});
  EXPECT_EQ(Find(ops, "indexer_decode")->x, 101 + 5001);
  // Only the 5001-key row needs a selection; the 101-key row keeps all keys.
  EXPECT_EQ(Find(ops, "index_topk")->x, 5001);
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->x, 101 + 2048);
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->repeat, 61);
}

TEST(OpGraphTest, NoTopKWhenEveryRowFitsInTopK) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  RankBatch b;
  b.seqs = {{1, 100}, {1, 2047}};  // 101 and 2048 keys: both <= 2048
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 1, 1, false, 8)), b, 2, {});
  EXPECT_EQ(Find(ops, "index_topk"), nullptr);
  EXPECT_NE(Find(ops, "indexer_decode"), nullptr);
}

// One block selects each row: the op carries its longest selected row (a
// decode row scores its context + 1 keys, a prompt's last row context +
// chunk), rows within the top-k left out.
TEST(OpGraphTest, TopKCarriesItsLongestRow) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout l = Must(VllmLayout(spec, 1, 1, false, 8));
  RankBatch b;
  b.seqs = {{1, 100}, {1, 99999}, {1, 3000}};
  std::vector<Op> ops = BuildRankIterationOps(spec, l, b, 3, {});
  EXPECT_EQ(Find(ops, "index_topk")->longest_row, 100000);
  b.seqs = {{1, 100}, {4096, 8192}};  // a chunk after 8192 tokens of its prompt
  ops = BuildRankIterationOps(spec, l, b, 4097, {});
  EXPECT_EQ(Find(ops, "index_topk")->longest_row, 12288);
}

// A 1000-token prompt: dense MHA under a 2048 threshold (SGLang), sparse MLA
// with indexer scoring over 1000 x 1001 / 2 causal pairs without one.
TEST(OpGraphTest, ShortPrefillTakesDenseMhaBelowThreshold) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout l = Must(VllmLayout(spec, 1, 1, false, 8));
  RankBatch b;
  b.seqs = {{1000, 0}};
  OpGraphOptions o;
  o.dense_mha_prefill_max_tokens = 2048;
  auto ops = BuildRankIterationOps(spec, l, b, 1000, o);
  EXPECT_EQ(Find(ops, "dense_mha_prefill")->x, 500500);
  EXPECT_EQ(Find(ops, "kv_b_proj")->x, 1000);
  EXPECT_EQ(Find(ops, "indexer_prefill"), nullptr);
  EXPECT_EQ(Find(ops, "lm_head")->x, 1);
  o.dense_mha_prefill_max_tokens = 0;
  ops = BuildRankIterationOps(spec, l, b, 1000, o);
  EXPECT_EQ(Find(ops, "dense_mha_prefill"), nullptr);
  EXPECT_EQ(Find(ops, "indexer_prefill")->x, 500500);
  EXPECT_EQ(Find(ops, "sparse_mla_prefill")->x, 500500);
}

// SGLang decides for the batch: one sequence over 2048 tokens (here a 3000-
// token prompt, or a decode at context 5000 in a mixed batch) sends the
// 1000-token prompt beside it down the sparse path as well; alone, or with
// the per-sequence rule, it stays dense.
TEST(OpGraphTest, AWholeBatchChoiceSendsEveryPrefillSparseForOneLongSequence) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout l = Must(VllmLayout(spec, 1, 1, false, 8));
  OpGraphOptions o;
  o.dense_mha_prefill_max_tokens = 2048;
  RankBatch b;
  b.seqs = {{1000, 0}, {3000, 0}};
  auto ops = BuildRankIterationOps(spec, l, b, 4000, o);
  EXPECT_EQ(Find(ops, "dense_mha_prefill")->x, 500500);  // per sequence
  EXPECT_EQ(Find(ops, "indexer_prefill")->x, 3000 * 3001 / 2);
  o.dense_mha_prefill_whole_batch = true;
  ops = BuildRankIterationOps(spec, l, b, 4000, o);
  EXPECT_EQ(Find(ops, "dense_mha_prefill"), nullptr);
  EXPECT_EQ(Find(ops, "indexer_prefill")->x, 500500 + 3000 * 3001 / 2);
  b.seqs = {{1000, 0}, {1, 5000}};
  ops = BuildRankIterationOps(spec, l, b, 1001, o);
  EXPECT_EQ(Find(ops, "dense_mha_prefill"), nullptr);
  EXPECT_EQ(Find(ops, "indexer_prefill")->x, 500500);
  b.seqs = {{1000, 0}, {1048, 1000}};  // both within 2048: dense
  ops = BuildRankIterationOps(spec, l, b, 2048, o);
  EXPECT_EQ(Find(ops, "dense_mha_prefill")->x, 500500 + (1000 * 1048 + 1048 * 1049 / 2));
  EXPECT_EQ(Find(ops, "indexer_prefill"), nullptr);
}

// Rows a CUDA graph pads a decode batch with are never sampled; their logits
// are computed only where the graph captures the LM head (SGLang,
// TensorRT-LLM), not where the head runs on the real rows outside it (vLLM).
TEST(OpGraphTest, GraphFillerRowsAreNotSampled) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout l = Must(VllmLayout(spec, 8, 1, false, 8));
  RankBatch b = Decodes(9, 100);
  for (int i = 0; i < 7; ++i) b.seqs.push_back({1, 0, RowKind::kGraphFiller});
  OpGraphOptions o;
  auto ops = BuildRankIterationOps(spec, l, b, 16, o);
  EXPECT_EQ(Find(ops, "lm_head")->x, 9);
  EXPECT_EQ(Find(ops, "sampling")->x, 9);
  EXPECT_EQ(Find(ops, "q_b_proj")->x, 16);  // the rest of the forward runs all 16
  o.lm_head_in_graph = true;
  ops = BuildRankIterationOps(spec, l, b, 16, o);
  EXPECT_EQ(Find(ops, "lm_head")->x, 16);
  EXPECT_EQ(Find(ops, "sampling")->x, 9);
}

// FlashMLA walks all 2048 top-k slots of a row: the 1000-token prompt then
// costs 1000 x 2048 pairs, and a decode at context 500 costs 2048, where a
// kernel given the real lengths (SGLang's fa3) pays 500500 and 501.
TEST(OpGraphTest, FullTopkKernelsChargeEveryRowTheWholeTopk) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout l = Must(VllmLayout(spec, 1, 1, false, 8));
  RankBatch b;
  b.seqs = {{1000, 0}, {1, 500}};
  OpGraphOptions o;
  auto ops = BuildRankIterationOps(spec, l, b, 1001, o);
  EXPECT_EQ(Find(ops, "sparse_mla_prefill")->x, 500500);
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->x, 501);
  o.sparse_prefill_full_topk = true;
  o.sparse_decode_full_topk = true;
  ops = BuildRankIterationOps(spec, l, b, 1001, o);
  EXPECT_EQ(Find(ops, "sparse_mla_prefill")->x, 1000 * 2048);
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->x, 2048);
  // The indexer still scores only the real causal pairs.
  EXPECT_EQ(Find(ops, "indexer_prefill")->x, 500500);
  // Its HBM traffic is the keys read, not the padding slots: the prompt's
  // 1000 keys once (its rows share them) and the decode row's 501, latent
  // entries of 576 BF16 values.
  EXPECT_EQ(Find(ops, "sparse_mla_prefill")->hbm_bytes, 1000.0 * 1152);
  // The decode row: its 501 keys, and its 128 heads' q and output (576 + 512
  // BF16 values each).
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->hbm_bytes, 501.0 * 1152 + 128.0 * 1088 * 2);
  // One kernel for all rows: its op carries both rows' pairs, the other none.
  o.sparse_kernel_routing = SparseKernelRouting::kAllOnPrefillKernel;
  ops = BuildRankIterationOps(spec, l, b, 1001, o);
  EXPECT_EQ(Find(ops, "sparse_mla_prefill")->x, 1001 * 2048);
  EXPECT_EQ(Find(ops, "sparse_mla_prefill")->hbm_bytes, (1000.0 + 501) * 1152);
  EXPECT_EQ(Find(ops, "sparse_mla_decode"), nullptr);
  o.sparse_kernel_routing = SparseKernelRouting::kAllOnDecodeKernel;
  ops = BuildRankIterationOps(spec, l, b, 1001, o);
  EXPECT_EQ(Find(ops, "sparse_mla_decode")->x, 1001 * 2048);
  EXPECT_EQ(Find(ops, "sparse_mla_prefill"), nullptr);
}

// Random routing: each of `experts` is missed with probability
// (1 - 1/experts)^pairs ~ e^(-pairs/experts); by hand, 80 pairs on 256
// experts touch 68.7.
TEST(OpGraphTest, ExpectedExpertsTouchedByHand) {
  EXPECT_NEAR(ExpectedExpertsTouched(80, 256), 256 * (1 - std::exp(-80.0 / 256)), 1e-9);
  EXPECT_NEAR(ExpectedExpertsTouched(80, 256), 68.7, 0.05);
  EXPECT_NEAR(ExpectedExpertsTouched(1, 32), 0.9846, 1e-4);
  EXPECT_NEAR(ExpectedExpertsTouched(1e6, 256), 256, 1e-9);
  EXPECT_EQ(ExpectedExpertsTouched(0, 256), 0);
  EXPECT_LT(ExpectedExpertsTouched(256, 256), 256 * 0.64);  // 1 - 1/e of them
}

// One decode token on one GPU multiplies every active parameter once:
// GEMM FLOPs = 2 x 37.48 B (model-and-kernels.md §1.1: ~75 GFLOP).
TEST(OpGraphTest, DecodeTokenGemmFlopsAreTwiceActiveParameters) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 1, 1, false, 8)), Decodes(1, 10), 1, {});
  double gemm_flops = 0;
  for (const Op& op : ops) {
    if (op.kind == "gemm_fp8" || op.kind == "gemm_bf16" ||
        op.kind == "grouped_gemm_fp8" || op.kind == "batched_gemm_bf16") {
      gemm_flops += op.flops * op.repeat;
    }
  }
  const double active =
      static_cast<double>(CountParameters(spec).active_per_token);
  EXPECT_NEAR(gemm_flops / (2 * active), 1.0, 0.01);
}

// V3 has no indexer: no indexer/top-k ops, dense MLA decode over the whole
// context.
TEST(OpGraphTest, V3BuildsDenseGraphWithoutIndexer) {
  const ModelSpec spec = Load("deepseek_v3.textproto");
  RankBatch b = Decodes(2, 5000);
  b.seqs.push_back({3000, 0});
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 8, 1, false, 8)), b, 3002, {});
  for (const Op& op : ops) {
    EXPECT_EQ(op.name.find("indexer"), std::string::npos) << op.name;
    EXPECT_NE(op.kind, "topk");
    EXPECT_NE(op.kind, "sparse_mla_decode");
  }
  ASSERT_NE(Find(ops, "dense_mla_decode"), nullptr);
  EXPECT_EQ(Find(ops, "dense_mla_decode")->x, 2 * 5001);
  EXPECT_EQ(Find(ops, "dense_mha_prefill")->x, 3000.0 * 3001 / 2);
}

TEST(OpGraphTest, MtpDraftRunsOneMoeLayer) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildMtpDraftOps(
      spec, Must(VllmLayout(spec, 8, 1, false, 8)), Decodes(4, 100), 4, {});
  EXPECT_EQ(Find(ops, "mtp_eh_proj")->key,
            (std::vector<OpKeyDim>{{"k", 14336}, {"n", 7168}}));
  EXPECT_EQ(Find(ops, "mtp_eh_proj")->kind, "gemm_bf16");
  EXPECT_EQ(Find(ops, "o_proj")->repeat, 1);
  EXPECT_EQ(Find(ops, "experts_gate_up")->repeat, 1);
  EXPECT_EQ(Find(ops, "dense_gate_up_proj"), nullptr);
}

// The draft pass runs the MTP layer over every verified row (4 decodes x
// 1 + k = 2 rows), but takes logits at one row per request.
TEST(OpGraphTest, MtpDraftTakesLogitsAtOneRowPerRequest) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  OpGraphOptions options;
  options.num_speculative_tokens = 1;
  RankBatch b;
  for (int i = 0; i < 4; ++i) b.seqs.push_back({2, 100});
  const ParallelLayout tp8 = Must(VllmLayout(spec, 8, 1, false, 8));
  const auto draft = BuildMtpDraftOps(spec, tp8, b, 8, options);
  EXPECT_EQ(Find(draft, "o_proj")->x, 8);
  EXPECT_EQ(Find(draft, "lm_head")->x, 4);
  EXPECT_EQ(Find(draft, "sampling")->x, 4);
  const auto target = BuildRankIterationOps(spec, tp8, b, 8, options);
  EXPECT_EQ(Find(target, "lm_head")->x, 8);
  // CUDA-graph filler rows are never sampled; they reach the LM head only
  // where the graph captures it.
  for (int i = 0; i < 3; ++i) b.seqs.push_back({1, 0, RowKind::kGraphFiller});
  const auto padded = BuildMtpDraftOps(spec, tp8, b, 11, options);
  EXPECT_EQ(Find(padded, "lm_head")->x, 4);
  EXPECT_EQ(Find(padded, "sampling")->x, 4);
  options.lm_head_in_graph = true;
  const auto captured = BuildMtpDraftOps(spec, tp8, b, 11, options);
  EXPECT_EQ(Find(captured, "lm_head")->x, 7);
  EXPECT_EQ(Find(captured, "sampling")->x, 4);
}

// Every FP8 GEMM's input is quantized in a pass of its own: read BF16, write
// FP8 plus one fp32 scale per 128 values, priced as a copy of half that
// traffic. fused_qkv_a on 10 tokens: 10 x 7168 x 2 B read, 10 x 7168 B +
// 10 x 56 x 4 B written.
TEST(OpGraphTest, Fp8GemmsQuantizeTheirInputsBf16GemmsDoNot) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout tp8 = Must(VllmLayout(spec, 8, 1, false, 8));
  const auto ops = BuildRankIterationOps(spec, tp8, Decodes(10, 100), 10, {});
  const Op* q = Find(ops, "fused_qkv_a_proj_act_quant");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->kind, "act_quant_fp8");
  EXPECT_DOUBLE_EQ(q->x, (143360.0 + 71680.0 + 2240.0) / 2);
  EXPECT_EQ(q->repeat, 61);
  EXPECT_EQ(Find(ops, "lm_head_act_quant"), nullptr);     // BF16 LM head
  EXPECT_EQ(Find(ops, "router_gate_act_quant"), nullptr);  // BF16 router
  OpGraphOptions bf16;
  bf16.fp8_gemms = false;
  for (const Op& op : BuildRankIterationOps(spec, tp8, Decodes(10, 100), 10, bf16)) {
    EXPECT_NE(op.kind, "act_quant_fp8") << op.name;
  }
}

// The top-k expert outputs of each token are summed back into one row: TP8,
// 10 decodes: 80 rows of 7168 BF16 read, 10 written. DeepEP's combine sums
// them itself.
TEST(OpGraphTest, TopKExpertOutputsAreReducedUnlessDeepEpCombines) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  ParallelLayout l = Must(VllmLayout(spec, 8, 1, false, 8));
  const std::vector<Op> tp_ops = BuildRankIterationOps(spec, l, Decodes(10, 100), 10, {});
  const Op* r = Find(tp_ops, "experts_topk_reduce");
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->x, (80.0 * kHiddenBytes + 10.0 * kHiddenBytes) / 2);
  EXPECT_EQ(r->repeat, 58);
  l.moe_comm = ParallelLayout::MoeComm::kAllToAll;
  EXPECT_FALSE(Has(BuildRankIterationOps(spec, l, Decodes(10, 100), 10, {}), "experts_topk_reduce"));
}

// A sorting sampler is priced by its own table, once per sampled row; the
// MTP draft takes the argmax of its logits and never sorts.
TEST(OpGraphTest, TopPSamplerSortsSampledRowsButDraftsDoNot) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout tp8 = Must(VllmLayout(spec, 8, 1, false, 8));
  OpGraphOptions o;
  const auto argmax = BuildRankIterationOps(spec, tp8, Decodes(5, 100), 5, o);
  EXPECT_EQ(Find(argmax, "sampling")->kind, "sampling");
  o.sampler_sorts_vocab = true;
  const auto ops = BuildRankIterationOps(spec, tp8, Decodes(5, 100), 5, o);
  EXPECT_EQ(Find(ops, "sampling")->kind, "sampling_top_p");
  EXPECT_EQ(Find(ops, "sampling")->x, 5);
  const auto draft = BuildMtpDraftOps(spec, tp8, Decodes(5, 100), 5, o);
  EXPECT_EQ(Find(draft, "sampling")->kind, "sampling");
}

TEST(OpGraphTest, EmptyBatchHasNoOps) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  EXPECT_TRUE(BuildRankIterationOps(
                  spec, Must(VllmLayout(spec, 8, 1, false, 8)), {}, 0, {})
                  .empty());
}

// Storage reused from a different graph (a DP8 prefill with its
// collectives, then an MTP draft) holds nothing of it after a rebuild: the
// same ops, field for field, as a fresh build, and no more of them.
TEST(OpGraphTest, RebuildIntoUsedStorageMatchesAFreshBuild) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const ParallelLayout tp8 = Must(VllmLayout(spec, 8, 1, false, 8));
  const ParallelLayout dp8 = Must(VllmLayout(spec, 1, 8, true, 8));
  RankBatch prefill = Decodes(3, 500);
  prefill.seqs.push_back({4000, 0});
  const OpGraphOptions bf16{.fp8_gemms = false};
  std::vector<Op> reused;
  BuildRankIterationOps(spec, dp8, prefill, 8 * 4003, {}, reused);
  BuildMtpDraftOps(spec, tp8, Decodes(2, 10), 2, {}, reused);
  BuildRankIterationOps(spec, tp8, Decodes(10, 100), 10, bf16, reused);
  const std::vector<Op> fresh = BuildRankIterationOps(spec, tp8, Decodes(10, 100), 10, bf16);
  ASSERT_EQ(reused.size(), fresh.size());
  for (size_t i = 0; i < fresh.size(); ++i) {
    const Op& a = reused[i];
    const Op& b = fresh[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind) << b.name;
    EXPECT_EQ(a.key, b.key) << b.name;
    EXPECT_EQ(a.x, b.x) << b.name;
    EXPECT_EQ(a.flops, b.flops) << b.name;
    EXPECT_EQ(a.hbm_bytes, b.hbm_bytes) << b.name;
    EXPECT_EQ(a.comm_bytes, b.comm_bytes) << b.name;
    EXPECT_EQ(a.comm_group_gpus, b.comm_group_gpus) << b.name;
    EXPECT_EQ(a.fp8_math, b.fp8_math) << b.name;
    EXPECT_EQ(a.repeat, b.repeat) << b.name;
    EXPECT_EQ(a.phase, b.phase) << b.name;
  }
  BuildRankIterationOps(spec, tp8, {}, 0, {}, reused);
  EXPECT_TRUE(reused.empty());
}

TEST(OpGraphTest, TextListsEveryOp) {
  const ModelSpec spec = Load("deepseek_v32.textproto");
  const auto ops = BuildRankIterationOps(
      spec, Must(VllmLayout(spec, 8, 1, false, 8)), Decodes(2, 100), 2, {});
  const std::string text = OpGraphToText(ops);
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')),
            ops.size() + 1);
  EXPECT_NE(text.find("sparse_mla_decode"), std::string::npos);
}

}  // namespace
}  // namespace servesim::models
