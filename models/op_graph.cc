#include "models/op_graph.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "models/attention_keys.h"
#include "models/sizes.h"

namespace servesim::models {
namespace {

// The batch's attention work, summed over its sequences.
struct AttentionWork {
  int64_t tokens = 0;            // all query tokens
  int64_t head_rows = 0;         // LM-head rows (1 per prefill, q per decode; graph filler
                                 // only where the graph captures the head)
  int64_t sampled_rows = 0;      // the rows the sampler sees: graph filler excluded
  int64_t decode_rows = 0;       // query rows of decodes
  int64_t decode_keys = 0;       // Σ keys over decode rows
  int64_t decode_keys_topk = 0;  // what the decode kernel walks (its whole top-k or the capped keys)
  int64_t decode_keys_valid = 0;  // keys it reads: each row's keys capped at top-k
  double decode_logits_cleaned = 0;  // FP32 logits past each decode row's keys, to the width
  int64_t selected_keys = 0;     // keys of rows longer than top-k: what top-k sorts
  int64_t longest_selected_row = 0;  // keys of the longest of those rows
  int64_t sparse_prefill_tokens = 0;
  int64_t sparse_prefill_pairs = 0;       // causal pairs scored by the indexer
  int64_t sparse_prefill_pairs_topk = 0;  // pairs the kernel walks after top-k
  int64_t sparse_prefill_kv_tokens = 0;    // keys a sparse prefill reads from HBM: its
                                           // prompt's context + chunk once (rows of one
                                           // prompt share keys, which stay in L2)
  int64_t dense_prefill_tokens = 0;
  int64_t dense_prefill_pairs = 0;
  int64_t dense_prefill_kv_tokens = 0;  // context + chunk, expanded by kv_b
};

// Adds a sequence's `rows` rows of logits: a CUDA-graph filler's are never
// sampled, and reach the LM head only where the graph captures it.
void AddLogitRows(RowKind kind, int64_t rows, const OpGraphOptions& o, AttentionWork& w) {
  const bool filler = kind == RowKind::kGraphFiller;
  if (!filler) w.sampled_rows += rows;
  if (!filler || o.lm_head_in_graph) w.head_rows += rows;
}

AttentionWork SummarizeBatch(const ModelSpec& spec, const RankBatch& batch,
                             const OpGraphOptions& o) {
  const bool sparse = spec.has_indexer();
  const int64_t topk = sparse ? spec.indexer().index_topk() : 0;
  AttentionWork w;
  // Under a whole-batch choice, one sequence past the limit (a decode riding
  // in a mixed batch too) sends every prefill of the batch down the sparse path.
  bool dense_batch = true;
  if (o.dense_mha_prefill_whole_batch) {
    for (const SequenceWork& s : batch.seqs) {
      if (s.kind == RowKind::kWeightReading) continue;
      dense_batch &= s.context_before_tokens + s.query_tokens <= o.dense_mha_prefill_max_tokens;
    }
  }
  // Rows longer than the top-k run the selection; one block takes each row.
  auto select = [&w, topk](int64_t q, int64_t c) {
    w.selected_keys += KeysOfRowsLongerThan(q, c, topk);
    if (c + q > topk) w.longest_selected_row = std::max(w.longest_selected_row, c + q);
  };
  for (const SequenceWork& s : batch.seqs) {
    SERVESIM_CHECK(s.query_tokens > 0 && s.context_before_tokens >= 0,
                   "sequence work needs query_tokens > 0 and context >= 0");
    const int64_t q = s.query_tokens;
    const int64_t c = s.context_before_tokens;
    w.tokens += q;
    // Token-linear work only, as padding tokens: no attention, no sampled row.
    if (s.kind == RowKind::kWeightReading) continue;
    if (RunsAsDecode(s, o)) {
      AddLogitRows(s.kind, q, o, w);
      w.decode_rows += q;
      // Row i of the sequence scores c + i + 1 keys.
      const int64_t keys = CausalPairs(q, c);
      w.decode_keys += keys;
      const int64_t read = sparse ? CappedPairs(q, c, topk) : keys;
      w.decode_keys_valid += read;
      w.decode_keys_topk += sparse && o.sparse_decode_full_topk ? q * topk : read;
      if (sparse) select(q, c);
      if (o.decode_logits_width > 0) {
        // The rest of each row's logits is cleaned (a CUDA-graph filler row,
        // context 0, almost all of it).
        w.decode_logits_cleaned +=
            std::max(0.0, static_cast<double>(q) * static_cast<double>(o.decode_logits_width) -
                              static_cast<double>(keys));
      }
      continue;
    }
    AddLogitRows(s.kind, 1, o, w);
    if (!sparse || (dense_batch && c + q <= o.dense_mha_prefill_max_tokens)) {
      w.dense_prefill_tokens += q;
      w.dense_prefill_pairs += CausalPairs(q, c);
      w.dense_prefill_kv_tokens += c + q;
    } else {
      w.sparse_prefill_tokens += q;
      w.sparse_prefill_pairs += CausalPairs(q, c);
      w.sparse_prefill_kv_tokens += c + q;
      w.sparse_prefill_pairs_topk +=
          o.sparse_prefill_full_topk ? q * topk : CappedPairs(q, c, topk);
      select(q, c);
    }
  }
  // Padding tokens of a piecewise CUDA graph: token-linear work only.
  w.tokens += batch.padding_tokens;
  return w;
}

bool IsUnquantized(const ModelSpec& spec, TensorClass cls) {
  const auto& list = spec.weights().unquantized();
  return std::find(list.begin(), list.end(), cls) != list.end();
}

// Appends ops; shared state for one graph.
class Builder {
 public:
  Builder(const ModelSpec& spec, const ParallelLayout& layout,
          const OpGraphOptions& o, std::vector<Op>& ops)
      : spec_(spec), l_(layout), o_(o), ops_(ops) {}

  // Writes the next op into `ops_`, reusing the storage of whatever op was
  // there before: a simulation builds a graph every step, and allocating
  // each op's strings anew was most of the simulator's time.
  Op& Add(std::string_view name, std::string_view kind,
          std::initializer_list<OpKeyDim> key, double x, double flops,
          double hbm_bytes, OpPhase phase, int repeat) {
    if (used_ == ops_.size()) ops_.emplace_back();
    Op& op = ops_[used_++];
    op.name.assign(name);
    op.kind.assign(kind);
    op.key.assign(key);
    if (!std::is_sorted(op.key.begin(), op.key.end())) std::sort(op.key.begin(), op.key.end());
    op.x = x;
    op.flops = flops;
    op.hbm_bytes = hbm_bytes;
    op.comm_bytes = 0;
    op.comm_group_gpus = 1;
    op.fp8_math = false;
    op.comm_spans_nodes = false;
    op.longest_row = 0;
    op.repeat = repeat;
    op.phase = phase;
    op.token_linear = true;
    return op;
  }

  // Marks an op (if one was added) as work per row or per sampled sequence,
  // not per token (Op::token_linear).
  static void PerRow(Op* op) {
    if (op != nullptr) op->token_linear = false;
  }

  // Drops ops left over from the graph this storage held before.
  void Finish() { ops_.resize(used_); }

  // A memory-bound pass that reads and writes these bytes, priced as a device
  // copy of the same traffic: x = (read + written) / 2, the copy_d2d
  // convention (docs/profile-tables.md, "Stand-ins").
  // Returns the op, or null when there is nothing to move.
  Op* StreamingPass(std::string_view name, std::string_view kind,
                    double read, double written, OpPhase phase, int repeat) {
    if (read + written <= 0 || repeat <= 0) return nullptr;
    return &Add(name, kind, {}, (read + written) / 2, 0, read + written, phase, repeat);
  }

  // An FP8 GEMM takes FP8 activations with one scale per 128 values
  // (DeepSeek's 1x128 block scaling): the engine quantizes the BF16 input
  // of every FP8 GEMM in a pass of its own (vLLM per_token_group_quant_fp8,
  // SGLang's and TensorRT-LLM's equivalents) [U: where an engine fuses it
  // into the norm or the SiLU before, it is charged anyway].
  void ActivationQuant(std::string_view gemm, int64_t m, int64_t k,
                       OpPhase phase, int repeat) {
    const double values = static_cast<double>(m) * k;
    const double scales = static_cast<double>(m) *
                          CeilDiv(k, kActivationQuantGroup) * kFp32Bytes;
    name_scratch_.assign(gemm);
    name_scratch_.append("_act_quant");
    StreamingPass(name_scratch_, "act_quant_fp8", values * kBf16Bytes,
                  values + scales, phase, repeat);
  }

  // C[m,n] = A[m,k] B[n,k]^T with weights stored quantised (FP8 path) or not.
  // Returns the GEMM's op, or null for an empty one.
  Op* Gemm(std::string_view name, int64_t n, int64_t k, int64_t m,
           bool quantized_weight, OpPhase phase, int repeat) {
    if (m <= 0 || n <= 0 || k <= 0 || repeat <= 0) return nullptr;
    const bool fp8 = quantized_weight && o_.fp8_gemms;
    if (fp8) ActivationQuant(name, m, k, phase, repeat);
    const int64_t in_bytes = fp8 ? 1 : kBf16Bytes;
    const double hbm = static_cast<double>(n) * k * in_bytes +
                       static_cast<double>(m) * k * in_bytes +
                       static_cast<double>(m) * n * kBf16Bytes;
    Op& op = Add(name, fp8 ? "gemm_fp8" : "gemm_bf16", {{"k", k}, {"n", n}},
                 static_cast<double>(m), 2.0 * m * n * k, hbm, phase, repeat);
    op.fp8_math = fp8;
    return &op;
  }

  // Per-head batched BF16 GEMMs (torch.bmm in vLLM's MLA absorption):
  // `batch` independent [m, k] x [k, n]. No profile table: roofline [U].
  void Bmm(std::string_view name, int64_t batch, int64_t k, int64_t n,
           int64_t m, int repeat) {
    if (m <= 0 || repeat <= 0) return;
    const double hbm =
        static_cast<double>(batch) *
        (static_cast<double>(k) * n + static_cast<double>(m) * (k + n)) *
        kBf16Bytes;
    Add(name, "batched_gemm_bf16", {{"batch", batch}, {"k", k}, {"n", n}},
        static_cast<double>(m), 2.0 * batch * m * k * n, hbm,
        OpPhase::kAttention, repeat);
  }

  void Norm(std::string_view name, int64_t hidden, int64_t tokens,
            OpPhase phase, int repeat) {
    if (tokens <= 0 || repeat <= 0) return;
    Add(name, "rmsnorm", {{"hidden", hidden}}, static_cast<double>(tokens),
        4.0 * tokens * hidden, 2.0 * tokens * hidden * kBf16Bytes, phase,
        repeat);
  }

  void SiluMul(std::string_view name, int64_t width, int64_t tokens,
               OpPhase phase, int repeat) {
    if (tokens <= 0 || repeat <= 0) return;
    Add(name, "silu_mul", {{"width", width}}, static_cast<double>(tokens),
        4.0 * tokens * width, 3.0 * tokens * width * kBf16Bytes, phase, repeat);
  }

  // A collective of `bytes` per GPU (x = comm_bytes) over `gpus` GPUs.
  // `extent`: how many consecutive GPUs the group's members span (its size
  // for a TP group; the whole replica for DP peers at one TP position).
  // Returns the op, or null when the group or the buffer is empty.
  Op* Collective(std::string_view name, std::string_view kind, int gpus,
                 int64_t bytes, int repeat, int extent = 0) {
    if (gpus <= 1 || bytes <= 0 || repeat <= 0) return nullptr;
    Op& op = Add(name, kind, {{"gpus", gpus}}, static_cast<double>(bytes), 0,
                 2.0 * bytes, OpPhase::kCommunication, repeat);
    op.comm_bytes = static_cast<double>(bytes);
    op.comm_group_gpus = gpus;
    op.comm_spans_nodes = l_.node_gpus > 0 && std::max(extent, gpus) > l_.node_gpus;
    return &op;
  }

  // The GPUs one MoE all-gather / reduce-scatter spans (ParallelLayout::
  // moe_gather_in_dp_group): the DP peers, or the whole MoE group.
  int MoeGatherGpus(int moe_group) const {
    return l_.moe_gather_in_dp_group ? l_.attn_dp : moe_group;
  }

  void Embedding(int64_t tokens) {
    const int64_t h = spec_.hidden_size();
    const int64_t bytes = tokens * h * kBf16Bytes;
    if (tokens > 0) {
      Add("embedding", "copy_d2d", {}, static_cast<double>(bytes), 0,
          2.0 * bytes, OpPhase::kOther, 1);
    }
    // VocabParallelEmbedding: each TP rank looks up its vocab slice, then sums.
    Collective("embedding_all_reduce", "all_reduce", l_.attn_tp, bytes, 1);
  }

  void AttentionLayers(const AttentionWork& w, int layers);
  void IndexerOps(const AttentionWork& w, int layers);
  void LatentAttentionKernels(const AttentionWork& w, int layers);
  void DenseFfnLayers(int64_t tokens, int64_t tokens_global, int layers);
  void MoeLayers(int64_t tokens, int64_t tokens_global, int layers);
  void RoutedExperts(int64_t tokens, int64_t moe_tokens, int layers);
  void Head(const AttentionWork& w, int64_t tokens);

 private:
  const ModelSpec& spec_;
  const ParallelLayout& l_;
  const OpGraphOptions& o_;
  std::vector<Op>& ops_;
  size_t used_ = 0;            // ops written so far; ops_ may hold more, stale
  std::string name_scratch_;   // a derived op name, built without allocating
};

// The DSA lightning indexer: its projections, the scores of each row's keys
// and the top-k selection that picks the keys sparse MLA attends to.
void Builder::IndexerOps(const AttentionWork& w, int layers) {
  const MlaSpec& a = spec_.mla();
  const int64_t h = spec_.hidden_size();
  const int64_t t = w.tokens;
  const OpPhase ph = OpPhase::kAttention;
  const IndexerSpec& ix = spec_.indexer();
  const int64_t ih = ix.num_heads();
  const int64_t key_bytes = IndexerKeyBytesPerTokenPerLayer(spec_);
  Gemm("indexer_wq_b", ih * ix.head_dim(), a.q_lora_rank(), t, true, ph, layers);
  Gemm("indexer_wk", ix.head_dim(), h, t, true, ph, layers);
  Gemm("indexer_weights_proj", ih, h, t, !IsUnquantized(spec_, INDEXER_WEIGHTS_PROJ), ph, layers);
  if (t > 0 && ix.rope_head_dim() > 0) {
    Add("indexer_rope", "rope", {{"dim", ix.rope_head_dim()}}, static_cast<double>(t * (ih + 1)),
        6.0 * t * (ih + 1) * ix.rope_head_dim(),
        2.0 * t * (ih + 1) * ix.rope_head_dim() * kBf16Bytes, ph, layers);
  }
  const double score_flops = 2.0 * ih * ix.head_dim();
  if (w.decode_keys > 0) {
    Add("indexer_decode", "indexer_decode", {{"heads", ih}}, static_cast<double>(w.decode_keys),
        score_flops * w.decode_keys, static_cast<double>(w.decode_keys) * key_bytes, ph, layers)
        .token_linear = false;
  }
  // A write-only pass: -inf into each decode row's logits past its keys.
  PerRow(StreamingPass("indexer_logits_clean", "indexer_logits_clean", 0,
                       w.decode_logits_cleaned * kFp32Bytes, ph, layers));
  if (w.sparse_prefill_pairs > 0) {
    Add("indexer_prefill", "indexer_prefill", {{"heads", ih}},
        static_cast<double>(w.sparse_prefill_pairs), score_flops * w.sparse_prefill_pairs,
        static_cast<double>(w.sparse_prefill_tokens) * ih * ix.head_dim() +
            static_cast<double>(w.sparse_prefill_pairs) * kFp32Bytes,
        ph, layers)
        .token_linear = false;
  }
  // Rows with at most top-k keys keep them all: no selection runs (the
  // iteration check on the H200 found the op charged for them otherwise).
  if (w.selected_keys > 0) {
    Op& topk = Add("index_topk", "topk", {{"k", ix.index_topk()}},
                   static_cast<double>(w.selected_keys), static_cast<double>(w.selected_keys),
                   static_cast<double>(w.selected_keys) * kFp32Bytes, ph, layers);
    topk.longest_row = static_cast<double>(w.longest_selected_row);
    topk.token_linear = false;
  }
}

// Latent attention: decode rows and sparse prefill rows on the kernels the
// engine routes them to (FlashMLA sparse decode and prefill, or dense MLA
// decode without an indexer), after the cache's quantize pass where the
// decode kernel needs FP8 keys.
void Builder::LatentAttentionKernels(const AttentionWork& w, int layers) {
  const MlaSpec& a = spec_.mla();
  const int64_t heads = a.num_heads() / l_.attn_tp;
  const int64_t latent = int64_t{a.kv_lora_rank()} + a.qk_rope_head_dim();
  const OpPhase ph = OpPhase::kAttention;
  int64_t kv_entry = KvBytesPerTokenPerLayer(spec_, o_.kv_dtype);
  bool kv_fp8 = o_.kv_dtype == KvCacheDtype::kFp8DsMla;
  const double mqa_flops_per_pair =
      2.0 * (latent + a.kv_lora_rank());  // QK^T over 576, PV over 512
  // The (rows, key pairs) each sparse kernel runs, as the engine routes them.
  // The kernels' work is their walked pairs (flops); their HBM traffic is
  // the keys they read: a top-k slot past a short row's keys is padding
  // (index -1), masked without a load; a decode row's keys are its own
  // sequence's, read once per row; a prefill's rows share their prompt's
  // keys, read from HBM once.
  int64_t decode_kernel_rows = w.decode_rows, decode_kernel_pairs = w.decode_keys_topk;
  int64_t decode_kernel_valid = w.decode_keys_valid;
  int64_t prefill_kernel_pairs = w.sparse_prefill_pairs_topk;
  int64_t prefill_kernel_valid = w.sparse_prefill_kv_tokens;
  if (spec_.has_indexer()) {
    if (o_.sparse_kernel_routing == SparseKernelRouting::kAllOnPrefillKernel) {
      prefill_kernel_pairs += decode_kernel_pairs;
      prefill_kernel_valid += decode_kernel_valid;
      decode_kernel_rows = decode_kernel_pairs = decode_kernel_valid = 0;
    } else if (o_.sparse_kernel_routing == SparseKernelRouting::kAllOnDecodeKernel) {
      decode_kernel_rows += w.sparse_prefill_tokens;
      decode_kernel_pairs += prefill_kernel_pairs;
      decode_kernel_valid += prefill_kernel_valid;
      prefill_kernel_pairs = prefill_kernel_valid = 0;
    }
  }
  if (decode_kernel_rows > 0) {
    if (spec_.has_indexer() && !kv_fp8 && o_.decode_quantizes_kv_pool_tokens > 0) {
      // An elementwise pass: x is the bytes a device copy moving the same
      // traffic would copy, (read + written) / 2 (docs/profile-tables.md).
      const int64_t fp8_entry = KvBytesPerTokenPerLayer(spec_, KvCacheDtype::kFp8DsMla);
      const double moved = static_cast<double>(o_.decode_quantizes_kv_pool_tokens) *
                           static_cast<double>(kv_entry + fp8_entry);
      Add("kv_cache_quantize", "kv_cache_quantize", {}, moved / 2, 0, moved, ph, layers);
      kv_entry = fp8_entry;
      kv_fp8 = true;
    }
    if (spec_.has_indexer()) {
      const int64_t padded =
          RoundUp(heads, std::max(1, o_.min_sparse_decode_heads));
      Add("sparse_mla_decode", "sparse_mla_decode",
          {{"heads", padded}, {"kv_fp8", kv_fp8}},
          static_cast<double>(decode_kernel_pairs),
          mqa_flops_per_pair * padded * decode_kernel_pairs,
          static_cast<double>(decode_kernel_valid) * kv_entry +
              static_cast<double>(decode_kernel_rows) * padded *
                  (latent + a.kv_lora_rank()) * kBf16Bytes,
          ph, layers)
          .token_linear = false;
    } else {
      // Dense MLA decode over the whole context (FlashMLA dense). No profile
      // table in docs/profile-tables.md: roofline fallback.
      Add("dense_mla_decode", "dense_mla_decode",
          {{"heads", heads}, {"kv_fp8", kv_fp8}},
          static_cast<double>(w.decode_keys),
          mqa_flops_per_pair * heads * w.decode_keys,
          static_cast<double>(w.decode_keys) * kv_entry, ph, layers)
          .token_linear = false;
    }
  }
  if (prefill_kernel_pairs > 0) {
    const int64_t padded =
        RoundUp(heads, std::max(1, o_.min_sparse_prefill_heads));
    Add("sparse_mla_prefill", "sparse_mla_prefill", {{"heads", padded}},
        static_cast<double>(prefill_kernel_pairs),
        mqa_flops_per_pair * padded * prefill_kernel_pairs,
        static_cast<double>(prefill_kernel_valid) * latent * kBf16Bytes,
        ph, layers)
        .token_linear = false;
  }
}

void Builder::AttentionLayers(const AttentionWork& w, int layers) {
  const MlaSpec& a = spec_.mla();
  const int64_t h = spec_.hidden_size();
  const int64_t t = w.tokens;
  const int64_t heads = a.num_heads() / l_.attn_tp;
  const int64_t latent = int64_t{a.kv_lora_rank()} + a.qk_rope_head_dim();
  const OpPhase ph = OpPhase::kAttention;
  Norm("input_layernorm", h, t, ph, layers);
  // q_a and kv_a read the same input: one fused GEMM (vLLM fused_qkv_a_proj),
  // replicated under TP.
  Gemm("fused_qkv_a_proj", int64_t{a.q_lora_rank()} + latent, h, t, true, ph, layers);
  Norm("q_a_layernorm", a.q_lora_rank(), t, ph, layers);
  Norm("kv_a_layernorm", a.kv_lora_rank(), t, ph, layers);
  Gemm("q_b_proj", heads * (a.qk_nope_head_dim() + a.qk_rope_head_dim()), a.q_lora_rank(), t, true,
       ph, layers);
  if (t > 0) {
    Add("rope", "rope", {{"dim", a.qk_rope_head_dim()}}, static_cast<double>(t * (heads + 1)),
        6.0 * t * (heads + 1) * a.qk_rope_head_dim(),
        2.0 * t * (heads + 1) * a.qk_rope_head_dim() * kBf16Bytes, ph, layers);
  }
  if (spec_.has_indexer()) IndexerOps(w, layers);
  // Decode and sparse prefill run MQA over the latent (weight absorption):
  // q_nope is mapped into the latent by W_UK and the latent output back by
  // W_UV, both per-head batched BF16 GEMMs (vLLM keeps W_UK/W_UV in BF16).
  const int64_t absorbed = w.decode_rows + w.sparse_prefill_tokens;
  Bmm("attn_w_uk", heads, a.qk_nope_head_dim(), a.kv_lora_rank(), absorbed, layers);
  LatentAttentionKernels(w, layers);
  Bmm("attn_w_uv", heads, a.kv_lora_rank(), a.v_head_dim(), absorbed, layers);
  // Dense MHA prefill: expand the cached latent of context + chunk into
  // per-head K/V with kv_b, then causal attention (d_qk 192, d_v 128).
  Gemm("kv_b_proj", heads * (a.qk_nope_head_dim() + a.v_head_dim()),
       a.kv_lora_rank(), w.dense_prefill_kv_tokens, true, ph, layers);
  if (w.dense_prefill_tokens > 0) {
    const int64_t dqk = int64_t{a.qk_nope_head_dim()} + a.qk_rope_head_dim();
    Add("dense_mha_prefill", "dense_mha_prefill", {{"heads", heads}},
        static_cast<double>(w.dense_prefill_pairs),
        2.0 * heads * (dqk + a.v_head_dim()) * w.dense_prefill_pairs,
        static_cast<double>(w.dense_prefill_kv_tokens) * heads *
            (dqk + a.v_head_dim()) * kBf16Bytes,
        ph, layers)
        .token_linear = false;
  }
  Gemm("o_proj", h, heads * a.v_head_dim(), t, true, ph, layers);
  Collective("attn_all_reduce", "all_reduce", l_.attn_tp, t * h * kBf16Bytes,
             layers);
  Norm("post_attention_layernorm", h, t, ph, layers);
}

void Builder::DenseFfnLayers(int64_t tokens, int64_t tokens_global,
                             int layers) {
  if (layers <= 0) return;
  const int64_t h = spec_.hidden_size();
  const int tp = l_.dense_tp;
  SERVESIM_CHECK(tp == 1 || tp == l_.attn_tp || tp == l_.gpus,
                 "dense TP must be 1, the attention TP or all GPUs");
  const bool gathered = tp > l_.attn_tp;
  const int64_t tf = gathered ? tokens_global : tokens;
  // Every GPU of the gather ends with all DP ranks' tokens: each sends 1/tp.
  const int64_t shard_bytes = CeilDiv(tokens_global, tp) * h * kBf16Bytes;
  if (gathered)
    Collective("dense_all_gather", "all_gather", tp, shard_bytes, layers);
  const int64_t w = spec_.dense_intermediate_size() / tp;
  Gemm("dense_gate_up_proj", 2 * w, h, tf, true, OpPhase::kDense, layers);
  SiluMul("dense_silu_mul", w, tf, OpPhase::kDense, layers);
  Gemm("dense_down_proj", h, w, tf, true, OpPhase::kDense, layers);
  if (gathered) {
    Collective("dense_reduce_scatter", "reduce_scatter", tp, shard_bytes,
               layers);
  } else if (tp == l_.attn_tp) {
    Collective("dense_all_reduce", "all_reduce", tp, tokens * h * kBf16Bytes,
               layers);
  }
}

// Routed experts: moe_tokens * top-k pairs spread evenly over the EP ranks
// (the busiest EP rank at a handful of tokens reads more: group-limited
// routing puts a token's 8 experts on 4 ranks [U]); MoE TP splits each
// expert's width instead. `tokens` are this rank's own, `moe_tokens` those
// its experts see.
void Builder::RoutedExperts(int64_t tokens, int64_t moe_tokens, int layers) {
  const MoeSpec& m = spec_.moe();
  const int64_t h = spec_.hidden_size();
  const int64_t e = m.num_routed_experts();
  const int64_t topk = m.experts_per_token();
  const OpPhase ph = OpPhase::kMoe;
  const int64_t local_experts = e / l_.moe_ep;
  const int64_t w = m.expert_intermediate_size() / l_.moe_tp;
  const int64_t pairs = moe_tokens * topk / l_.moe_ep;
  if (pairs > 0) {
    const bool fp8 = o_.fp8_gemms;
    const std::string_view kind = fp8 ? "grouped_gemm_fp8" : "grouped_gemm_bf16";
    const int64_t wbytes = fp8 ? 1 : kBf16Bytes;
    // Weights read: the experts the batch's pairs touch under random routing
    // (or, for a step's baseline, the whole step's pairs).
    const int64_t routed = std::max(pairs, o_.moe_routing_tokens * topk / l_.moe_ep);
    const double touched =
        ExpectedExpertsTouched(static_cast<double>(routed), static_cast<double>(local_experts));
    // DeepEP dispatches FP8: the rank quantizes its own tokens before
    // sending; otherwise the tokens the experts see are quantized here.
    const bool all_to_all = l_.moe_comm == ParallelLayout::MoeComm::kAllToAll;
    if (fp8) {
      ActivationQuant("experts_gate_up", all_to_all ? tokens : moe_tokens, h, ph, layers);
    }
    Op& up = Add("experts_gate_up", kind, {{"experts", local_experts}, {"k", h}, {"n", 2 * w}},
                 static_cast<double>(pairs), 2.0 * pairs * 2 * w * h,
                 touched * 2 * w * h * wbytes +
                     static_cast<double>(pairs) * (h * wbytes + 2 * w * kBf16Bytes),
                 ph, layers);
    up.fp8_math = fp8;
    up.routed_pairs = static_cast<double>(routed);
    SiluMul("experts_silu_mul", w, pairs, ph, layers);
    if (fp8) ActivationQuant("experts_down", pairs, w, ph, layers);
    Op& down =
        Add("experts_down", kind, {{"experts", local_experts}, {"k", w}, {"n", h}},
            static_cast<double>(pairs), 2.0 * pairs * w * h,
            touched * w * h * wbytes + static_cast<double>(pairs) * (w * wbytes + h * kBf16Bytes),
            ph, layers);
    down.fp8_math = fp8;
    down.routed_pairs = static_cast<double>(routed);
    // Each token's top-k expert outputs come back as separate rows and are
    // summed with the router weights (vLLM moe_sum / unpermute-and-reduce,
    // SGLang's and TensorRT-LLM's finalize); DeepEP's combine does the sum
    // itself.
    if (!all_to_all) {
      StreamingPass("experts_topk_reduce", "moe_topk_reduce",
                    static_cast<double>(pairs) * h * kBf16Bytes,
                    static_cast<double>(moe_tokens) * h * kBf16Bytes, ph, layers);
    }
  }
}

void Builder::MoeLayers(int64_t tokens, int64_t tokens_global, int layers) {
  if (layers <= 0) return;
  const MoeSpec& m = spec_.moe();
  const int64_t h = spec_.hidden_size();
  const int64_t e = m.num_routed_experts();
  const int64_t topk = m.experts_per_token();
  const int group = l_.moe_tp * l_.moe_ep;
  const OpPhase ph = OpPhase::kMoe;
  Gemm("router_gate", e, h, tokens, !IsUnquantized(spec_, ROUTER_GATE), ph,
       layers);
  if (tokens > 0) {
    Add("router_topk", "router_topk", {{"experts", e}},
        static_cast<double>(tokens), 4.0 * tokens * e,
        static_cast<double>(tokens) * e * kFp32Bytes, ph, layers);
  }
  int64_t moe_tokens = tokens;
  // Every GPU of the gather ends with all DP ranks' tokens, each sending an
  // equal share: a DP rank's tokens among its DP peers (vLLM), a rank's
  // tokens split over its attention-TP GPUs across the whole group (SGLang,
  // whose attention-TP group reduce-scatters before it gathers and
  // all-gathers after the MoE; charged as the attention all-reduce, the same
  // bytes).
  const int64_t shard_bytes = CeilDiv(tokens_global, MoeGatherGpus(group)) * h * kBf16Bytes;
  switch (l_.moe_comm) {
    case ParallelLayout::MoeComm::kAllReduce:
      SERVESIM_CHECK(
          group == l_.attn_tp,
          "all-reduce MoE needs the MoE group to be the attention TP group");
      break;
    case ParallelLayout::MoeComm::kAllGatherReduceScatter:
      SERVESIM_CHECK(group == l_.attn_tp * l_.attn_dp,
                     "all-gather MoE needs the MoE group to be attention TP x DP");
      moe_tokens = tokens_global;
      Collective("moe_all_gather", "all_gather", MoeGatherGpus(group), shard_bytes, layers,
                 l_.gpus);
      break;
    case ParallelLayout::MoeComm::kAllToAll: {
      moe_tokens = tokens_global;
      // Each token goes to top-k experts; (ep-1)/ep of the copies leave this
      // GPU. Dispatch in FP8 with 1x128 scales, combine in BF16 (DeepEP normal
      // mode).
      const int64_t fp8_token =
          h + CeilDiv(h, kActivationQuantGroup) * kFp32Bytes;
      const int64_t remote = tokens * topk * (l_.moe_ep - 1) / l_.moe_ep;
      Collective("moe_dispatch", "all_to_all", l_.moe_ep, remote * fp8_token,
                 layers);
      break;
    }
  }
  // Shared expert(s): on the gathered tokens when split wider than attention
  // TP.
  const bool shared_gathered =
      l_.moe_comm == ParallelLayout::MoeComm::kAllGatherReduceScatter &&
      l_.shared_tp > l_.attn_tp;
  const int64_t ts = shared_gathered ? tokens_global : tokens;
  const int64_t ws = int64_t{m.expert_intermediate_size()} *
                     m.num_shared_experts() / l_.shared_tp;
  if (ws > 0) {
    Gemm("shared_gate_up_proj", 2 * ws, h, ts, true, ph, layers);
    SiluMul("shared_silu_mul", ws, ts, ph, layers);
    Gemm("shared_down_proj", h, ws, ts, true, ph, layers);
  }
  RoutedExperts(tokens, moe_tokens, layers);
  switch (l_.moe_comm) {
    case ParallelLayout::MoeComm::kAllReduce:
      Collective("moe_all_reduce", "all_reduce", l_.attn_tp,
                 tokens * h * kBf16Bytes, layers);
      break;
    case ParallelLayout::MoeComm::kAllGatherReduceScatter:
      Collective("moe_reduce_scatter", "reduce_scatter", MoeGatherGpus(group), shard_bytes,
                 layers, l_.gpus);
      if (l_.moe_gather_in_dp_group) {
        Collective("moe_tp_all_reduce", "all_reduce", l_.attn_tp, shard_bytes, layers);
      }
      break;
    case ParallelLayout::MoeComm::kAllToAll: {
      const int64_t remote = tokens * topk * (l_.moe_ep - 1) / l_.moe_ep;
      Collective("moe_combine", "all_to_all", l_.moe_ep,
                 remote * h * kBf16Bytes, layers);
      break;
    }
  }
}

void Builder::Head(const AttentionWork& w, int64_t tokens) {
  const int64_t h = spec_.hidden_size();
  const int64_t v = spec_.vocab_size();
  const bool lm_q = !IsUnquantized(spec_, LM_HEAD);
  Norm("final_norm", h, tokens, OpPhase::kHead, 1);
  const int64_t rows = w.head_rows;
  if (rows <= 0) return;
  if (l_.lm_head_dp || l_.attn_dp == 1) {
    const int ways = l_.lm_head_dp ? l_.attn_tp : l_.gpus;
    const int64_t n = CeilDiv(v, ways);
    PerRow(Gemm("lm_head", n, h, rows, lm_q, OpPhase::kHead, 1));
    PerRow(Collective("logits_all_gather", "all_gather", ways, rows * n * kBf16Bytes, 1));
  } else {
    // Vocab split over all GPUs: the LM-head rows of every DP rank are
    // gathered first. Other ranks' row counts are not known here; assume each
    // DP rank has as many as this one (lockstep ranks are balanced by the
    // round-robin dispatcher) [approximation].
    const int64_t rows_global = rows * l_.attn_dp;
    const int64_t n = CeilDiv(v, l_.gpus);
    PerRow(Collective("lm_head_hidden_all_gather", "all_gather", l_.gpus,
                      CeilDiv(rows_global, l_.gpus) * h * kBf16Bytes, 1));
    PerRow(Gemm("lm_head", n, h, rows_global, lm_q, OpPhase::kHead, 1));
    PerRow(Collective("logits_all_gather", "all_gather", l_.gpus,
                      rows_global * n * kBf16Bytes, 1));
  }
  const int64_t sampled = w.sampled_rows;
  Add("sampling", o_.sampler_sorts_vocab ? "sampling_top_p" : "sampling", {{"vocab", v}},
      static_cast<double>(sampled), 5.0 * sampled * v, 2.0 * sampled * v * kFp32Bytes,
      OpPhase::kHead, 1)
      .token_linear = false;
}

}  // namespace

void BuildRankIterationOps(const ModelSpec& spec, const ParallelLayout& layout,
                           const RankBatch& mine, int64_t moe_tokens_global,
                           const OpGraphOptions& options, std::vector<Op>& ops) {
  const AttentionWork w = SummarizeBatch(spec, mine, options);
  SERVESIM_CHECK(moe_tokens_global >= w.tokens,
                 "moe_tokens_global must count at least this rank's tokens");
  Builder b(spec, layout, options, ops);
  if (w.tokens > 0) {
    b.Embedding(w.tokens);
    b.AttentionLayers(w, spec.num_layers());
    b.DenseFfnLayers(w.tokens, moe_tokens_global, spec.num_dense_layers());
    b.MoeLayers(w.tokens, moe_tokens_global,
                spec.num_layers() - spec.num_dense_layers());
    b.Head(w, w.tokens);
  }
  b.Finish();
}

std::vector<Op> BuildRankIterationOps(const ModelSpec& spec,
                                      const ParallelLayout& layout,
                                      const RankBatch& mine,
                                      int64_t moe_tokens_global,
                                      const OpGraphOptions& options) {
  std::vector<Op> ops;
  BuildRankIterationOps(spec, layout, mine, moe_tokens_global, options, ops);
  return ops;
}

void BuildMtpDraftOps(const ModelSpec& spec, const ParallelLayout& layout,
                      const RankBatch& mine, int64_t moe_tokens_global,
                      const OpGraphOptions& options, std::vector<Op>& ops) {
  AttentionWork w = SummarizeBatch(spec, mine, options);
  SERVESIM_CHECK(moe_tokens_global >= w.tokens,
                 "moe_tokens_global must count at least this rank's tokens");
  // The proposer takes draft logits at one position per request, its last
  // accepted token (vLLM's EagleProposer last_token_indices; SGLang's logits
  // processor keeps the last row of each extend [U: recalled]), not at each
  // of a verified decode's 1 + k rows.
  w.head_rows = 0;
  w.sampled_rows = 0;
  for (const SequenceWork& s : mine.seqs) {
    if (s.kind != RowKind::kWeightReading) AddLogitRows(s.kind, 1, options, w);
  }
  const int n = spec.num_mtp_layers();
  // Drafts are the argmax of the draft logits (vLLM's and SGLang's MTP
  // proposers): no nucleus sort, whatever the target sampler does.
  OpGraphOptions draft_options = options;
  draft_options.sampler_sorts_vocab = false;
  Builder b(spec, layout, draft_options, ops);
  if (w.tokens > 0 && n > 0) {
    const int64_t h = spec.hidden_size();
    b.Embedding(w.tokens);
    b.Norm("mtp_enorm", h, w.tokens, OpPhase::kOther, n);
    b.Norm("mtp_hnorm", h, w.tokens, OpPhase::kOther, n);
    // eh_proj is a plain BF16 linear in the engines' MTP modules (vLLM's and
    // SGLang's nn.Linear [U: recalled]).
    b.Gemm("mtp_eh_proj", h, 2 * h, w.tokens, false, OpPhase::kOther, n);
    b.AttentionLayers(w, n);
    b.MoeLayers(w.tokens, moe_tokens_global, n);
    b.Head(w, w.tokens);
  }
  b.Finish();
}

std::vector<Op> BuildMtpDraftOps(const ModelSpec& spec,
                                 const ParallelLayout& layout,
                                 const RankBatch& mine,
                                 int64_t moe_tokens_global,
                                 const OpGraphOptions& options) {
  std::vector<Op> ops;
  BuildMtpDraftOps(spec, layout, mine, moe_tokens_global, options, ops);
  return ops;
}

std::string OpGraphToText(const std::vector<Op>& ops) {
  std::string out =
      absl::StrFormat("%-28s %-18s %-30s %14s %4s %12s %12s %s\n", "op", "kind",
                      "key", "x", "rep", "GFLOP", "MB", "comm");
  for (const Op& op : ops) {
    std::string key;
    for (const auto& [name, value] : op.key) {
      absl::StrAppend(&key, key.empty() ? "" : ",", name, "=", value);
    }
    std::string comm;
    if (op.comm_group_gpus > 1) {
      comm = absl::StrFormat("%.3f MB over %d GPUs", op.comm_bytes / 1e6,
                             op.comm_group_gpus);
    }
    absl::StrAppend(
        &out, absl::StrFormat("%-28s %-18s %-30s %14.0f %4d %12.4f %12.3f %s\n",
                              op.name, op.kind, key, op.x, op.repeat,
                              op.flops / 1e9, op.hbm_bytes / 1e6, comm));
  }
  return out;
}

}  // namespace servesim::models
