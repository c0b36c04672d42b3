#pragma once
// The transformer and scaling formulas of docs/design.md ("Analysis formulas"), in doubles.
// Pure functions: no I/O, no MPI. Symbols follow the papers:
//   b = micro-batch (sequences per GPU per iteration), s = sequence length (tokens),
//   d = h = hidden size (channels), l = layers, a = attention heads, V = vocabulary,
//   p = ranks (GPUs), P = parameter count (elements).
// Every function throws std::invalid_argument on a non-finite or out-of-range argument.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commscope::analysis {

// ---------------------------------------------------------------- model shapes and presets

struct ModelShape {
  std::string name;
  int layers = 0;        // l
  int d_model = 0;       // d = h: channels
  int heads = 0;         // a (divides d_model)
  int seq = 0;           // s: sequence length of an iteration (= max_seq for the presets)
  int vocab = 0;         // V: real vocabulary
  int padded_vocab = 0;  // rows of the embedding (>= vocab; llm.c pads 50257 -> 50304)
  int context = 0;       // max_seq: rows of wpe, the model's context (>= seq; 0: seq)
  int positions() const { return context > 0 ? context : seq; }
};

// Presets for predict:
//   "125m"      l=12, d=768,  a=12, s=1024, V=50257 (the paper's 125M)
//   "1.3b"      l=24, d=2064, a=24, s=1024, V=50257 (the paper's 1.3B quotes d=2064; 2064/24 = 86 per head)
//   "6.7b"      l=32, d=4096, a=32, s=1024, V=50257
//   "gpt2-124m" l=12, d=768,  a=12, s=1024, V=50257 padded to 50304 (commscope-train's preset)
//   "small"     l=6,  d=384,  a=6,  s=256,  V=256
//   "tiny"      l=2,  d=32,   a=2,  s=32,   V=256
// padded_vocab is the vocabulary rounded up to a multiple of 128 (the trainer's rule); context is s.
// Throws std::invalid_argument naming the presets for an unknown name.
ModelShape model_preset(std::string_view name);
std::vector<std::string> model_preset_names();

// ---------------------------------------------------------------- parameters, FLOPs, memory

// P = 12 d^2 l (elements): the transformer blocks' weight matrices only (no embeddings, biases,
// layernorms): per block 4 d^2 (QKV + projection) + 8 d^2 (MLP d -> 4d -> d).
double params_approx(double d, double l);

// The exact GPT-2 count (elements), embeddings included:
//   V d (wte, tied with the output head) + s_max d (wpe)
//   + l (12 d^2 + 13 d)   per block: weights 12 d^2; biases 3d + d + 4d + d; 2 layernorms 4d
//   + 2 d                 final layernorm.
// V is the embedding's row count (pass the padded vocabulary to match a padded checkpoint).
double params_gpt2_exact(double vocab, double max_seq, double d, double l);

// The parameters (elements) one rank of the last pipeline stage holds in commscope-train's layout
// (trainer/.../layout.hpp), tp ranks splitting each layer and the vocabulary, pp stages the layers:
//   embeddings  Vp d / tp + s_max d       segment 0 (vocabulary-parallel wte, wpe whole); the first
//                                         and the last stage both hold it (the head is tied to wte)
//   layers      (l / pp)(12 d^2 / tp + 7 d / tp + 6 d)   the split matrices and biases, the
//                                         layernorms and the row-parallel biases whole
//   final_norm  2 d                       the last stage's final layernorm
// The last stage holds the most (the first lacks the final layernorm, the others segment 0 too);
// tp = pp = 1 gives params_gpt2_exact. Throws std::invalid_argument unless tp, pp >= 1 and pp
// divides l.
struct StageParams {
  double embeddings = 0, layers = 0, final_norm = 0;
  double total() const { return embeddings + layers + final_norm; }
};
StageParams last_stage_params(double vocab, double max_seq, double d, int layers, int tp, int pp);

// FLOPs of one training iteration (forward + backward = 3x forward), transformer blocks only:
//   b (72 s d^2 + 12 s^2 d) l
// (commscope/common/model_flops.hpp's transformer_flops, which the trainer's log counts too;
// std::invalid_argument for a negative or non-finite argument).
double flops_per_iteration(double b, double s, double d, double l);
// ... plus the output head (logits [b, s, V] = [b, s, d] x [d, V]): + 6 b s d V.
double flops_per_iteration_with_head(double b, double s, double d, double l, double vocab);

// Activation memory of one iteration (bytes, fp16 activations, no recomputation):
//   b (34 s d + 5 a s^2) l   (Korthikanti et al.; a = heads).
double activation_bytes(double b, double s, double d, double l, double heads);

// Achieved model TFLOP/s per GPU (Narayanan et al., Megatron-LM, full activation recomputation):
//   96 B s l h^2 (1 + s/(6h) + V/(16 l h)) / (1e12 gpus t)
// B = global batch (sequences), t = seconds per iteration.
double megatron_tflops_per_gpu(double global_batch, double s, double l, double h, double vocab, double gpus,
                               double seconds_per_iteration);

// ---------------------------------------------------------------- data-parallel communication volume

// Convention. A collective call is described by `count`, the element count of the full array it
// operates on (nccl-tests' count: the allreduce's vector, the allgather's output, the
// reduce-scatter's input), and the bytes of one element. What one GPU sends (and receives) in a
// bandwidth-optimal algorithm is count x bytes x factor, with the busbw factor:
//   allreduce 2(1 - 1/p); allgather, reducescatter (1 - 1/p).
// Per iteration, with P parameters, as commscope-train runs each stage:
//   stage 0 (DDP): allreduce(grads, P)                                -> 2(1-1/p) P elements per GPU
//   stage 1:       reducescatter(grads, P) + allgather(params, P)     -> 2(1-1/p) P
//   stage 2:       reducescatter(grads, P) + allgather(params, P)     -> 2(1-1/p) P
//   stage 3:       allgather(params, P) in forward and again in backward + reducescatter(grads, P)
//                                                                     -> 3(1-1/p) P
//                  + allgather(params (tied head), H) when head_params H > 0: the tied embedding
//                  gathered once more for the output head                -> + (1-1/p) H
// Stages 1 and 2 move the same bytes and differ in memory: zero1 reduce-scatters the gradients
// after backward, zero2 segment by segment during backward. (An allreduce of the gradients for
// stage 1 would move twice the gradient bytes for the same update.) docs/design.md ("Analysis
// formulas") gives these volumes in bytes with bytes_per_param = 2 (fp16).
// `buckets` splits each logical collective into that many equal calls (DDP buckets, ZeRO-3
// layers): the bytes are unchanged, the call count (and so the alpha term) grows.
struct CommCall {
  std::string collective;     // "allreduce", "allgather" or "reducescatter"
  std::string purpose;        // "grads", "params (forward)", ...
  double count = 0;           // elements of the full array per call
  int calls = 0;              // calls per iteration
  double bytes_per_call = 0;  // count * bytes_per_param: the S of algbw/busbw
  double per_gpu_bytes = 0;   // calls * bytes_per_call * factor: sent by one GPU per iteration
};

struct CommVolume {
  int stage = 0;
  int ranks = 0;
  double params = 0;
  double bytes_per_param = 0;
  std::vector<CommCall> calls;
  double per_gpu_bytes() const;  // sum over calls
};

// stage 0..3, ranks >= 1, params >= 0, bytes_per_param > 0, buckets >= 1. head_params (ZeRO-3):
// the tied embedding's parameters, gathered once more for the output head in forward and in
// backward, as commscope-train does (one allgather call, "params (tied head)"; 0: no tied head).
CommVolume zero_comm_volume(int stage, int ranks, double params, double bytes_per_param, int buckets = 1,
                            double head_params = 0);

// Pipeline parallelism (pp > 1): the first and the last stage both hold segment 0 (`embeddings`
// elements per rank, last_stage_params) and sum its gradients once per step, after the last
// micro-batch: one allreduce over their 2 ranks ("embedding gradients"), of the whole segment
// (ZeRO stage 0, 1) or of a rank's data-parallel shard of it (stage 2, 3: embeddings / dp), as
// commscope-train's embedding.allreduce. per_gpu_bytes: the 2-rank allreduce's busbw factor, 1.
CommCall embedding_allreduce(double embeddings, int zero, int dp, double bytes_per_param);

// ---------------------------------------------------------------- tensor and pipeline parallelism

// Megatron's 3D layout: g = dp x tp x pp ranks. tp ranks split every GEMM of a layer, pp stages
// hold l / pp layers each, dp replicas of that tp x pp grid split the batch. A step runs
// M = micro_batches micro-batches of b sequences through each replica's pipeline (Megatron's
// convention: b is the micro-batch size; the global batch is b M dp), 1F1B schedule.
struct Layout {
  int tp = 1;             // tensor-parallel ranks
  int pp = 1;             // pipeline stages
  int micro_batches = 1;  // M per step and pipeline
  bool sp = false;        // sequence parallelism over the tp ranks (Megatron-LM's)
};

// Per rank of the last stage and step, with A = b s d x bytes_per_activation (one micro-batch's
// activation between layers, the size the layers' calls move):
//   tensor:   allreduce over tp ranks, 4 per layer and micro-batch (2 forward, 2 backward),
//             calls = 4 (l / pp) M, bytes_per_call = A; none when tp = 1; with sp, a
//             reduce-scatter and an allgather in place of each (4 (l / pp) M calls of A each, the
//             bytes of the whole array as nccl-tests counts them), and per micro-batch an
//             allreduce of the layernorms' weight gradients (2 d elements) for each of the
//             stage's 2 (l / pp) + 1 layernorms (the +1: the final one);
//             with `head` (the model has its embeddings and tied head, as commscope-train's),
//             per micro-batch also the head's input gradient (an allreduce of A; sp: the final
//             layernorm's output gathered and the gradient reduce-scattered), on one stage
//             (pp = 1) the encoder's lookup (an allreduce of A; sp: a reduce-scatter forward and
//             an allgather backward), and the vocabulary-parallel cross-entropy's row maximum
//             (an allreduce with max, b s elements) and its two row sums (b s elements each);
//   pipeline: sendrecv between neighbouring stages, one activation forward and one gradient
//             backward per micro-batch: M calls each, bytes_per_call = A (A / tp with sp: a
//             rank's rows); none when pp = 1.
// The last stage is the busiest: the first makes the encoder's calls in place of the head's and
// no cross-entropy, a middle stage neither. per_gpu_bytes uses the busbw factor (allreduce
// 2(tp-1)/tp, reduce-scatter and allgather (tp-1)/tp, sendrecv 1). Throws
// std::invalid_argument when tp, pp or M < 1 or pp does not divide l.
struct ModelParallelComm {
  std::vector<CommCall> tensor;
  std::vector<CommCall> pipeline;
};
ModelParallelComm model_parallel_comm(double b, double s, double d, int layers, const Layout& layout,
                                      double bytes_per_activation, bool head = false);

// The pipeline's bubble: (pp - 1) / (M + pp - 1) of the pipeline's time (0 for pp = 1).
double pipeline_bubble_fraction(int pp, int micro_batches);
// One step of the pipeline from the per-rank work of all M micro-batches, work = compute +
// tensor-parallel communication + pipeline sends: work (M + pp - 1) / M, computed as
// work + work (pp - 1) / M so that pp = 1 gives work exactly. (Its bubble part, work (pp - 1) / M,
// is pipeline_bubble_fraction of it.)
double pipeline_step_time(double work, int pp, int micro_batches);

// ---------------------------------------------------------------- scaling from g to n ranks

// Measured: speedup(g->n) = t_iter(g) / t_iter(n) (seconds per iteration at g and at n ranks).
double speedup(double t_iter_g, double t_iter_n);
// Communication efficiency eff(g->n) = t_comm(g) / t_comm(n) (communication seconds per
// iteration; < 1 when communication gets slower with more ranks).
double comm_efficiency(double t_comm_g, double t_comm_n);
// Predicted speedup(g->n) = (r_comp + r_comm) / (r_comp w + r_comm / eff), where
// r_comp = t_comp(g) / t_iter(g) and r_comm = t_comm(g) / t_iter(g) are shares of the iteration
// at g, and w = t_comp(n) / t_comp(g) the per-rank compute time at n relative to g (1: the same
// per-rank work on the same CPUs; strong scaling on ranks with as many CPUs each: g/n). The
// communication time changes as t_comm(n) = t_comm(g) / eff; the result is t(g) / t(n) of the
// compute + communication part (other time, e.g. dispatch, is left out: r_comp + r_comm may be
// < 1). eff may come from a measurement or from an alpha-beta prediction of t_comm(n).
double predicted_speedup(double r_comp, double r_comm, double eff, double w = 1.0);
// Parallel efficiency. Strong scaling (fixed global work): speedup * g / n (1 = ideal).
double strong_scaling_efficiency(double t_iter_g, double t_iter_n, int g, int n);
// Weak scaling (fixed per-rank work): t(g) / t(n) (1 = ideal).
double weak_scaling_efficiency(double t_iter_g, double t_iter_n);

// ---------------------------------------------------------------- straggler bound

// E[max of p i.i.d. standard normals] = integral of x p phi(x) Phi(x)^(p-1) dx, by adaptive
// Simpson over [-10, 10] (relative error < 1e-9 for p <= 1e6); 0 for p = 1, 1/sqrt(pi) for p = 2.
double expected_max_std_normal(std::int64_t p);
// Expected slowest of p ranks whose step times are i.i.d. N(mu, sigma): mu + sigma E[max].
double straggler_bound(double mu, double sigma, std::int64_t p);

}  // namespace commscope::analysis
