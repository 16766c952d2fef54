// The op graph: every kernel and collective one GPU runs in one forward pass
// of its batch on a layout, with the profile-table kind/key/x of each op
// (docs/profile-tables.md) and FLOPs/bytes for the roofline fallback.
#ifndef SERVESIM_MODELS_OP_GRAPH_H_
#define SERVESIM_MODELS_OP_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"
#include "models/op.h"
#include "models/parallel_layout.h"

namespace servesim::models {

// One sequence's share of an iteration. A prefill chunk: query_tokens > 1
// new tokens with context_before_tokens already cached. A decode: 1 query
// token (1 + k when verifying k speculative tokens) after its context.
enum class RowKind {
  kSequence,  // a request's work
  // A one-token row StepPredictor adds to a step's decodes to read the
  // weights (WeightReadingRows), not a sequence: it runs the token-linear ops
  // (GEMMs, MoE, norms, collectives) and nothing else, no attention, no
  // sampled row, no MTP draft pass.
  kWeightReading,
  // A row that CUDA-graph padding adds to a decode batch: it runs the whole
  // captured forward (attention over no context too), but no sampler sees
  // it, and its logits are computed only where the graph captures the LM
  // head (OpGraphOptions::lm_head_in_graph).
  kGraphFiller,
};

struct SequenceWork {
  int64_t query_tokens = 0;
  int64_t context_before_tokens = 0;
  RowKind kind = RowKind::kSequence;
  // A prompt's chunk, as the scheduler formed it (else a generation step).
  // Whether a short one runs as a decode is the engine's: RunsAsDecode.
  bool prefill_chunk = false;
};

// The sequences one attention-DP rank runs this iteration.
struct RankBatch {
  std::vector<SequenceWork> seqs;
  // Tokens a CUDA graph pads the batch with that only its graphed,
  // token-linear ops see (GEMMs, MoE, norms, collectives): vLLM's piecewise
  // graphs run attention, the sampler and the LM head on the real rows alone.
  int64_t padding_tokens = 0;

  // Every token the batch runs through its token-linear ops, padding included.
  int64_t Tokens() const {
    int64_t tokens = padding_tokens;
    for (const SequenceWork& s : seqs) tokens += s.query_tokens;
    return tokens;
  }
};

enum class SparseKernelRouting {
  kByPhase,              // decode rows: decode kernel; prefill rows: prefill kernel
  kAllOnPrefillKernel,   // every row through the sparse prefill kernel
  kAllOnDecodeKernel,    // every row through the sparse decode kernel
};

struct OpGraphOptions {
  KvCacheDtype kv_dtype = KvCacheDtype::kBf16;
  // Prefill sequences whose whole length (context + chunk) is at most this
  // take dense MHA instead of sparse MLA: 2048 in SGLang, index top-k in newer
  // vLLM; 0 = never. Models without an indexer always prefill with dense MHA.
  int64_t dense_mha_prefill_max_tokens = 0;
  // The choice is the batch's, not each sequence's: SGLang's
  // handle_attention_nsa takes dense MHA only when the longest sequence of
  // the prefill batch is within the limit, else every sequence runs sparse.
  bool dense_mha_prefill_whole_batch = false;
  // FlashMLA sparse decode supports h_q in {64, 128}: heads per rank are
  // padded up to a multiple of this (TP8: 16 -> 64). 1 = no padding.
  int min_sparse_decode_heads = 64;
  // Same for the sparse prefill kernel (vLLM pads the BF16 kernel to 128 when
  // it has >= 32 heads per rank) [U]. 1 = no padding.
  int min_sparse_prefill_heads = 1;
  // FlashMLA's sparse kernels walk every one of a query row's top-k index
  // slots and mask the unused ones, so a row costs index_topk keys however
  // short its context (true of FlashMLA sparse prefill and decode; SGLang's
  // fa3 NSA backend passes the real length instead). false = min(context,
  // top-k) keys per row.
  bool sparse_prefill_full_topk = false;
  bool sparse_decode_full_topk = false;
  // Which sparse MLA kernel runs which rows. vLLM's FlashMLA sparse backend
  // sends a step's decode and prefill rows through one call: the BF16 sparse
  // prefill kernel on a BF16 latent cache, the FP8 decode kernel on an FP8
  // one.
  SparseKernelRouting sparse_kernel_routing = SparseKernelRouting::kByPhase;
  // false: the BF16 fallback path (no DeepGEMM): quantised weights run as BF16
  // GEMMs.
  bool fp8_gemms = true;
  // A generation step runs 1 + num_speculative_tokens query tokens (the
  // verification of the drafts); RunsAsDecode.
  int num_speculative_tokens = 0;
  // vLLM's attention backends sort a step's rows by query length
  // (split_decodes_and_prefills) and its CUDA-graph dispatch calls a batch of
  // such rows a uniform decode, so a prompt's last chunk of <= 1 + k tokens
  // runs as a decode there. SGLang's extend and TensorRT-LLM's context phase
  // are forward modes of their own: a chunk takes the prefill path however
  // few its tokens.
  bool short_chunks_run_as_decodes = false;
  // SGLang's flashmla_kv decode on a BF16 cache: FlashMLA's sparse decode
  // reads only its FP8 layout, so every decode pass first quantizes the
  // layer's whole KV buffer (this many tokens, one DP rank's pool, used or
  // not) into it and then runs the FP8 kernel. 0 = no such pass.
  int64_t decode_quantizes_kv_pool_tokens = 0;
  // Tokens whose routing sets which experts the MoE reads, where more than
  // the batch's own: StepPredictor's baseline of a step reads the experts
  // the whole step reads. 0: the batch's.
  int64_t moe_routing_tokens = 0;
  // The sampler sorts every sampled row over the vocabulary (vLLM's
  // PyTorch-native top-p path, the `sampling_top_p` table); false: one
  // softmax pass and an exponential race (`sampling`), the cost of a sampler
  // without a sort (no top-p, or FlashInfer's rejection sampler).
  bool sampler_sorts_vocab = false;
  // The decode indexer's logits are [decode rows, this] FP32 and every entry
  // past a row's context is filled with -inf: vLLM v0.13 sizes them by
  // max_model_len and calls DeepGEMM's fp8_paged_mqa_logits with
  // clean_logits=True [U: docs/engines.md]. 0 = the engine cleans nothing
  // beyond the rows' contexts (SGLang passes clean_logits=False).
  int64_t decode_logits_width = 0;
  // The decode CUDA graph captures the LM head, so graph-padding rows get
  // logits too (SGLang's and TensorRT-LLM's graphs run the model's forward,
  // logits included, and sample outside); false: the head runs on the real
  // rows alone, outside the graph (vLLM's compute_logits on logits_indices).
  bool lm_head_in_graph = false;
};

// Whether `s` runs as a decode row (decode attention kernels, a sampled row,
// a CUDA graph's batch), by OpGraphOptions::short_chunks_run_as_decodes.
inline bool RunsAsDecode(const SequenceWork& s, const OpGraphOptions& o) {
  return s.query_tokens <= 1 + o.num_speculative_tokens &&
         (!s.prefill_chunk || o.short_chunks_run_as_decodes);
}

// Every op one GPU of `layout` runs in one forward pass of the main model for
// the batch `mine` of its attention-DP rank. `moe_tokens_global`: tokens
// entering the MoE across the expert group this step (the sum over DP ranks,
// padded as the engine pads; equals mine's token count without attention DP).
// `repeat` counts layers of a kind. Ops with zero work are left out.
std::vector<Op> BuildRankIterationOps(const ModelSpec& spec,
                                      const ParallelLayout& layout,
                                      const RankBatch& mine,
                                      int64_t moe_tokens_global,
                                      const OpGraphOptions& options);

// The same, written into `ops`: its previous contents are replaced and its
// storage reused, for callers that build a graph every step.
void BuildRankIterationOps(const ModelSpec& spec, const ParallelLayout& layout,
                           const RankBatch& mine, int64_t moe_tokens_global,
                           const OpGraphOptions& options, std::vector<Op>& ops);

// One draft pass of the MTP module(s) over `mine` (eh_proj, one MoE decoder
// layer per MTP module, LM head, sampling).
std::vector<Op> BuildMtpDraftOps(const ModelSpec& spec,
                                 const ParallelLayout& layout,
                                 const RankBatch& mine,
                                 int64_t moe_tokens_global,
                                 const OpGraphOptions& options);
void BuildMtpDraftOps(const ModelSpec& spec, const ParallelLayout& layout,
                      const RankBatch& mine, int64_t moe_tokens_global,
                      const OpGraphOptions& options, std::vector<Op>& ops);

// Collective sizes (Op::x == Op::comm_bytes), per GPU: all_reduce = the
// whole buffer (tokens x hidden x 2 B); all_gather = this GPU's input shard;
// reduce_scatter = this GPU's output shard; all_to_all = bytes this GPU sends
// to other GPUs. A shard is the gathered tokens / the GPUs of the gather
// (attn_dp for vLLM's gather within the DP group: moe_gather_in_dp_group).

// One line per op (name, kind, key, x, repeat, GFLOP, MB, comm), for `explain`.
std::string OpGraphToText(const std::vector<Op>& ops);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_OP_GRAPH_H_
