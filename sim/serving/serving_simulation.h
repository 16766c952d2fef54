// The event loop of one benchmark run: the client sends requests, a router
// places each on a DP rank, engine instances step their ranks (in lockstep
// where the MoE spans them) and the client records every streamed chunk.
#ifndef SERVESIM_SIM_SERVING_SERVING_SIMULATION_H_
#define SERVESIM_SIM_SERVING_SERVING_SIMULATION_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/core/sim_time.h"
#include "sim/cost/execution_time_predictor.h"
#include "sim/engine/replica_scheduler.h"
#include "sim/metrics/request_record.h"

namespace servesim::serving {

struct ClientRequest {
  // What the engine tokenizes and prefills (chat template included).
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  // tokens generated before the stream ends (EOS or the cap)
  // max_completion_tokens as sent; the engine plans with it. 0 = output_tokens.
  int64_t max_output_tokens = 0;
  sim::SimTime arrival;       // when the client wants to send it
  // What the client counts as the request's input tokens (vllm bench serve's
  // dataset prompt_len, without the chat template). 0 = prompt_tokens.
  int64_t client_prompt_tokens = 0;
  // The prompt's shareable prefix (engine tokens), as engine::Request has it.
  std::vector<int64_t> prefix_node_keys;
  std::vector<int64_t> prefix_node_tokens;
  int64_t max_completion() const { return std::max(max_output_tokens, output_tokens); }
  int64_t client_prompt() const {
    return client_prompt_tokens > 0 ? client_prompt_tokens : prompt_tokens;
  }
};

// How requests are placed on DP ranks.
enum class RouterPolicy {
  // vLLM's DP load balancer: the rank with the fewest waiting*4 + running.
  kLeastLoaded,
  // SGLang's data-parallel controller default: i-th request to rank i mod D.
  kRoundRobin,
};

// A DP rank's queue as vLLM's load balancer sees it.
struct RankLoad {
  int64_t waiting = 0;
  int64_t running = 0;
};
// vLLM's DP load balancer (v1 DPLBAsyncMPClient.get_core_engine_for_request):
// the rank with the least waiting x 4 + running, the first of equals (one API
// server starts its scan at rank 0). `loads` is not empty.
int LeastLoadedRank(const std::vector<RankLoad>& loads);

// How a load balancer in front of several engine replicas (a node each, or
// more where one spans nodes) picks a replica.
enum class ReplicaBalancer {
  kRoundRobin,        // i-th request to replica i mod N
  kLeastOutstanding,  // the replica with the fewest requests sent and not finished,
                      // ties in turn (nginx least_conn)
};

// SSE messages an engine's OpenAI chat endpoint streams that carry no token,
// which vllm bench serve times as chunks all the same (it times every message
// that has `choices`): TTFT on the first, an ITL between each two.
struct ChatStreamFraming {
  // A first message with the assistant role and empty content, sent with the
  // first token's: TTFT is timed on it and the first token adds a ~0 ms ITL.
  bool role_message_first = false;
  // A last message with the finish_reason and an empty delta, after the last
  // token's: one more ~0 ms ITL.
  bool finish_message_last = false;
};

struct EngineTopology {
  int num_ranks = 1;  // DP ranks of one engine replica
  // Ranks step together (the MoE spans them; idle ranks run dummy batches).
  // Otherwise each rank is an independent engine instance.
  bool lockstep = false;
  // Lockstep ranks run the same phase: a step prefills on every rank that
  // can, and the others run idle batches; only when no rank can prefill do
  // they all decode (SGLang with speculative decoding under DP attention).
  bool ranks_agree_on_phase = false;
  // The engine forms batch N + 1 while batch N runs, before N's results
  // (SGLang's and TensorRT-LLM's overlap schedulers, vLLM's async
  // scheduling): a request that reaches a busy instance is first scheduled
  // in the step after next, and a request that finished in N is decoded
  // once more in N + 1, its token thrown away. Only when N + 1 would hold
  // nothing does the engine wait for N's results and read its queue afresh.
  bool schedules_one_step_ahead = false;
  // With schedules_one_step_ahead: a request that stops at its max_tokens
  // is known to stop before its last step's results (vLLM's async scheduler
  // counts the tokens in flight), so only one that stops at EOS is decoded
  // once more.
  bool sees_length_stops_ahead = false;
  // With schedules_one_step_ahead: a step that prefills decodes nothing
  // (SGLang without --enable-mixed-chunk), so a request that finished while
  // a prefill batch was formed ahead is not decoded once more; only a decode
  // batch carries it.
  bool prefill_steps_hold_no_decodes = false;
  RouterPolicy router = RouterPolicy::kLeastLoaded;
  std::function<std::unique_ptr<engine::ReplicaScheduler>(int rank, size_t num_requests)>
      make_scheduler;
  // The API server handles requests one at a time (chat template,
  // tokenisation, validation) before an engine sees them: a FIFO server with
  // this service time per request. Zero: requests reach the engine at once.
  sim::SimTime frontend_per_request = sim::SimTime::Zero();
  // The engine's request validation: a non-empty reason fails the request at
  // once, as the server answers it with an error.
  std::function<std::string(const ClientRequest&)> reject_reason;
  // The most tokens the engine lets an accepted request generate, where it
  // shortens a max_tokens that does not fit instead of refusing the request
  // (TensorRT-LLM: max_seq_len - prompt); unset or above max_tokens: as sent.
  std::function<int64_t(const ClientRequest&)> output_cap;
  // The rule behind output_cap, as the run's header names it.
  std::string output_cap_rule;
  // Independent replicas of this engine (each on its own node or nodes, with its own API
  // server, ranks and KV) behind one load balancer.
  int replicas = 1;
  ReplicaBalancer replica_balancer = ReplicaBalancer::kRoundRobin;
  // What the chat endpoint adds to each stream (SimulationInput::chat_endpoint).
  ChatStreamFraming chat_stream;
};

struct SimulationInput {
  std::vector<ClientRequest> requests;
  std::optional<int64_t> max_concurrency;  // the client's semaphore
  // The client streams from /v1/chat/completions (`--backend openai-chat`):
  // chunk times carry the engine's EngineTopology::chat_stream messages.
  bool chat_endpoint = false;
  bool record_steps = false;               // fill SimulationResult::step_records
};

// One iteration of one engine instance, for `servesim run --step-log`: what
// each of its DP ranks ran and how long the step took.
struct StepRecord {
  int instance = 0;
  sim::SimTime start;
  sim::SimTime duration;
  struct Rank {
    int64_t decode_seqs = 0;
    int64_t prefill_seqs = 0;
    int64_t prefill_tokens = 0;
    int64_t running = 0;  // requests holding KV on the rank after scheduling
    int64_t waiting = 0;
  };
  std::vector<Rank> ranks;
};

struct SimulationResult {
  std::vector<metrics::RequestRecord> records;  // in request order
  sim::SimTime duration;                        // benchmark start (t = 0) to last completion
  int64_t steps = 0;                            // iterations over all instances
  int64_t preempted_or_retracted = 0;           // requests that lost their KV
  int64_t rejected = 0;
  std::string first_reject_reason;
  int64_t output_capped = 0;             // accepted requests whose max_tokens the engine shortened
  std::vector<StepRecord> step_records;  // when SimulationInput::record_steps
};

// Runs the benchmark to completion. Fails (Internal) if an engine can make no
// progress, which a validated configuration rules out, and (InvalidArgument)
// if the predictor gives a step no valid time (its inputs are bad).
absl::StatusOr<SimulationResult> RunServingSimulation(const EngineTopology& topology,
                                                      cost::ExecutionTimePredictor& predictor,
                                                      const SimulationInput& input);

}  // namespace servesim::serving

#endif  // SERVESIM_SIM_SERVING_SERVING_SIMULATION_H_
