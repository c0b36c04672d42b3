// Unit tests of model_math: the paper's table, hand-computed values of every formula (the
// arithmetic is in the comments), ZeRO volumes, tensor and pipeline parallelism, scaling and the
// straggler bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

#include "commscope/analysis/model_math.hpp"
#include "commscope/common/model_flops.hpp"

namespace ca = commscope::analysis;

namespace {

// The paper's table (b = 1, s = 1024): FLOPs per iteration in TFLOP, quoted to 2 significant
// digits (0.64, 8.2, 41.2). Computed must round to the quoted figure: within half a unit of its
// last digit (0.005, 0.05, 0.05 TFLOP, i.e. 0.8%, 0.6%, 0.12%).
TEST(ModelMath, PaperFlopsTable) {
  struct Row {
    const char* preset;
    double quoted_tflop, half_unit;
  };
  for (const Row& r : {Row{"125m", 0.64, 0.005}, Row{"1.3b", 8.2, 0.05}, Row{"6.7b", 41.2, 0.05}}) {
    const ca::ModelShape m = ca::model_preset(r.preset);
    const double tflop = ca::flops_per_iteration(1, m.seq, m.d_model, m.layers) / 1e12;
    std::printf("  %-5s l=%d d=%d s=%d: %.4f TFLOP/iteration (paper %.2f), P = 12 d^2 l = %.4g\n", r.preset, m.layers,
                m.d_model, m.seq, tflop, r.quoted_tflop, ca::params_approx(m.d_model, m.layers));
    EXPECT_NEAR(tflop, r.quoted_tflop, r.half_unit) << r.preset;
  }
  // Hand: 125m = 12 (72*1024*768^2 + 12*1024^2*768) = 12 * 53,150,220,288 = 637,802,643,456.
  EXPECT_DOUBLE_EQ(ca::flops_per_iteration(1, 1024, 768, 12), 637802643456.0);
}

TEST(ModelMath, Presets) {
  const ca::ModelShape g = ca::model_preset("gpt2-124m");
  EXPECT_EQ(g.layers, 12);
  EXPECT_EQ(g.d_model, 768);
  EXPECT_EQ(g.heads, 12);
  EXPECT_EQ(g.seq, 1024);
  EXPECT_EQ(g.vocab, 50257);
  EXPECT_EQ(g.padded_vocab, 50304);
  const ca::ModelShape b = ca::model_preset("1.3b");
  EXPECT_EQ(b.d_model % b.heads, 0);
  EXPECT_EQ(b.d_model, 2064);
  const ca::ModelShape t = ca::model_preset("tiny");
  EXPECT_EQ(t.layers, 2);
  EXPECT_EQ(t.d_model, 32);
  EXPECT_EQ(t.heads, 2);
  EXPECT_EQ(t.seq, 32);
  EXPECT_EQ(t.padded_vocab, 256);
  const ca::ModelShape s = ca::model_preset("small");
  EXPECT_EQ(s.layers, 6);
  EXPECT_EQ(s.d_model, 384);
  EXPECT_EQ(s.seq, 256);
  EXPECT_EQ(ca::model_preset_names().size(), 6u);
  for (const auto& name : ca::model_preset_names()) {
    const ca::ModelShape m = ca::model_preset(name);
    EXPECT_EQ(m.d_model % m.heads, 0) << name;
  }
  EXPECT_THROW(ca::model_preset("175b"), std::invalid_argument);
}

TEST(ModelMath, Parameters) {
  // 12 * 2^2 * 3 = 144; 12 * 768^2 * 12 = 84,934,656.
  EXPECT_DOUBLE_EQ(ca::params_approx(2, 3), 144.0);
  EXPECT_DOUBLE_EQ(ca::params_approx(768, 12), 84934656.0);
  // V=10, s_max=4, d=2, l=1: 20 + 8 + (12*4 + 13*2) + 4 = 106.
  EXPECT_DOUBLE_EQ(ca::params_gpt2_exact(10, 4, 2, 1), 106.0);
  // GPT-2 124M, vocabulary padded to 50304: 38,633,472 + 786,432 + 12 * 7,087,872 + 1,536.
  const ca::ModelShape g = ca::model_preset("gpt2-124m");
  const double exact = ca::params_gpt2_exact(g.padded_vocab, g.seq, g.d_model, g.layers);
  std::printf("  gpt2-124m exact parameters: %.0f\n", exact);
  EXPECT_DOUBLE_EQ(exact, 124475904.0);
  EXPECT_THROW(ca::params_approx(-1, 2), std::invalid_argument);
  EXPECT_THROW(ca::params_gpt2_exact(NAN, 1, 1, 1), std::invalid_argument);
  // One rank of the last stage in commscope-train's layout: the whole model at (tp, pp) = (1, 1);
  // at pp 2 segment 0 (38,633,472 + 786,432 = 39,419,904), 6 layers (42,527,232) and the final
  // layernorm (1,536): 81,948,672 = 312.6 MiB in fp32, not P / 2 = 237.4 MiB; at tp 2 a layer
  // holds 6 d^2 + 3.5 d + 6 d = 3,546,240 and wte half its rows (docs/trainer.md's P_tp).
  EXPECT_DOUBLE_EQ(ca::last_stage_params(50304, 1024, 768, 12, 1, 1).total(), 124475904.0);
  const ca::StageParams pp2 = ca::last_stage_params(50304, 1024, 768, 12, 1, 2);
  EXPECT_DOUBLE_EQ(pp2.embeddings, 39419904.0);
  EXPECT_DOUBLE_EQ(pp2.layers, 42527232.0);
  EXPECT_DOUBLE_EQ(pp2.final_norm, 1536.0);
  const ca::StageParams tp2 = ca::last_stage_params(50304, 1024, 768, 12, 2, 2);
  EXPECT_DOUBLE_EQ(tp2.embeddings, 50304.0 / 2 * 768 + 786432.0);
  EXPECT_DOUBLE_EQ(tp2.layers, 6 * 3546240.0);
  EXPECT_THROW(ca::last_stage_params(50304, 1024, 768, 12, 1, 5), std::invalid_argument);
  // Their sum between the first and last stage: the whole segment 0 under ZeRO 0 and 1, a rank's
  // shard under 2 and 3; a 2-rank allreduce sends its bytes once.
  EXPECT_DOUBLE_EQ(ca::embedding_allreduce(39419904, 1, 2, 4).bytes_per_call, 157679616.0);
  EXPECT_DOUBLE_EQ(ca::embedding_allreduce(39419904, 2, 2, 4).per_gpu_bytes, 78839808.0);
}

TEST(ModelMath, FlopsAndActivations) {
  // b=1, s=2, d=3, l=1: 72*2*9 + 12*4*3 = 1296 + 144 = 1440.
  EXPECT_DOUBLE_EQ(ca::flops_per_iteration(1, 2, 3, 1), 1440.0);
  // b=2, l=3: 1440 * 6 = 8640.
  EXPECT_DOUBLE_EQ(ca::flops_per_iteration(2, 2, 3, 3), 8640.0);
  // + head 6 b s d V = 6*1*2*3*5 = 180.
  EXPECT_DOUBLE_EQ(ca::flops_per_iteration_with_head(1, 2, 3, 1, 5), 1620.0);
  // b=1, s=2, d=3, l=1, a=1: 34*2*3 + 5*1*4 = 204 + 20 = 224 bytes.
  EXPECT_DOUBLE_EQ(ca::activation_bytes(1, 2, 3, 1, 1), 224.0);
  // b=2, l=2, a=3: 2 * (204 + 60) * 2 = 1056.
  EXPECT_DOUBLE_EQ(ca::activation_bytes(2, 2, 3, 2, 3), 1056.0);
  EXPECT_THROW(ca::flops_per_iteration(1, -2, 3, 1), std::invalid_argument);
  // The one formula, which commscope-train's step log counts too (common/model_flops.hpp).
  static_assert(commscope::transformer_flops(1, 2, 3, 1) == 1440.0);
  EXPECT_EQ(ca::flops_per_iteration(4, 256, 384, 6), commscope::transformer_flops(4, 256, 384, 6));
}

TEST(ModelMath, MegatronTflops) {
  // B=1, s=6, l=1, h=1, V=16: 96*6 * (1 + 6/6 + 16/16) = 576 * 3 = 1728 FLOP;
  // 1 GPU, t = 1e-9 s: 1728 / (1e12 * 1e-9) = 1.728.
  EXPECT_NEAR(ca::megatron_tflops_per_gpu(1, 6, 1, 1, 16, 1, 1e-9), 1.728, 1e-12);
  // Twice the GPUs, half the TFLOP/s each.
  EXPECT_NEAR(ca::megatron_tflops_per_gpu(1, 6, 1, 1, 16, 2, 1e-9), 0.864, 1e-12);
  // Realistic magnitude: 125m on 8 GPUs, B = 8, 0.1 s/iteration.
  const double t = ca::megatron_tflops_per_gpu(8, 1024, 12, 768, 50257, 8, 0.1);
  std::printf("  megatron 125m B=8 on 8 GPUs at 0.1 s: %.3f TFLOP/s per GPU\n", t);
  // = 96*8*1024*12*768^2 (1 + 1024/4608 + 50257/147456) / (8e11) = 10.8755...
  EXPECT_NEAR(t, 96.0 * 8 * 1024 * 12 * 768.0 * 768 * (1 + 1024.0 / 4608 + 50257.0 / 147456) / 8e11, 1e-9);
  EXPECT_GT(t, 10.875);
  EXPECT_LT(t, 10.876);
  EXPECT_THROW(ca::megatron_tflops_per_gpu(1, 6, 1, 1, 16, 0, 1), std::invalid_argument);
  EXPECT_THROW(ca::megatron_tflops_per_gpu(1, 6, 1, 1, 16, 1, 0), std::invalid_argument);
}

TEST(ModelMath, ZeroCommVolume) {
  // p = 4, P = 1000, fp16 (2 bytes): allreduce 2 * 3/4 * 1000 * 2 = 3000 bytes = docs/design.md's 4(1-1/p)P;
  // allgather / reducescatter 3/4 * 1000 * 2 = 1500 = docs/design.md's 2(1-1/p)P.
  const ca::CommVolume v0 = ca::zero_comm_volume(0, 4, 1000, 2);
  ASSERT_EQ(v0.calls.size(), 1u);
  EXPECT_EQ(v0.calls[0].collective, "allreduce");
  EXPECT_DOUBLE_EQ(v0.calls[0].count, 1000.0);
  EXPECT_EQ(v0.calls[0].calls, 1);
  EXPECT_DOUBLE_EQ(v0.calls[0].bytes_per_call, 2000.0);
  EXPECT_DOUBLE_EQ(v0.per_gpu_bytes(), 3000.0);
  EXPECT_DOUBLE_EQ(v0.per_gpu_bytes(), 4 * (1 - 1.0 / 4) * 1000);

  // ZeRO-1 as commscope-train runs it: the gradients reduce-scattered (each rank needs only its
  // shard's sum for its optimizer shard), the parameters allgathered.
  const ca::CommVolume v1 = ca::zero_comm_volume(1, 4, 1000, 2);
  ASSERT_EQ(v1.calls.size(), 2u);
  EXPECT_EQ(v1.calls[0].collective, "reducescatter");
  EXPECT_EQ(v1.calls[1].collective, "allgather");
  EXPECT_DOUBLE_EQ(v1.per_gpu_bytes(), 3000.0);  // 1500 + 1500

  const ca::CommVolume v2 = ca::zero_comm_volume(2, 4, 1000, 2);
  ASSERT_EQ(v2.calls.size(), 2u);
  EXPECT_EQ(v2.calls[0].collective, "reducescatter");
  EXPECT_EQ(v2.calls[1].collective, "allgather");
  EXPECT_DOUBLE_EQ(v2.per_gpu_bytes(), 3000.0);  // 1500 + 1500

  const ca::CommVolume v3 = ca::zero_comm_volume(3, 4, 1000, 2);
  ASSERT_EQ(v3.calls.size(), 3u);
  EXPECT_EQ(v3.calls[0].collective, "allgather");
  EXPECT_EQ(v3.calls[1].collective, "allgather");
  EXPECT_EQ(v3.calls[2].collective, "reducescatter");
  EXPECT_DOUBLE_EQ(v3.per_gpu_bytes(), 4500.0);  // 3 * 1500
  // With a tied head of 200 parameters (commscope-train's ZeRO-3 gathers it a third time).
  const ca::CommVolume v3h = ca::zero_comm_volume(3, 4, 1000, 2, 1, 200);
  ASSERT_EQ(v3h.calls.size(), 4u);
  EXPECT_EQ(v3h.calls[2].collective, "allgather");
  EXPECT_EQ(v3h.calls[2].purpose, "params (tied head)");
  EXPECT_DOUBLE_EQ(v3h.calls[2].bytes_per_call, 400.0);
  EXPECT_DOUBLE_EQ(v3h.per_gpu_bytes(), 4500.0 + 300.0);
  EXPECT_EQ(ca::zero_comm_volume(2, 4, 1000, 2, 1, 200).calls.size(), 2u);  // only ZeRO-3 regathers

  // fp32, 10 buckets: count 100 per call, 10 calls, 400 bytes per call, 2 * 3/4 * 1000 * 4 = 6000.
  const ca::CommVolume b = ca::zero_comm_volume(0, 4, 1000, 4, 10);
  EXPECT_DOUBLE_EQ(b.calls[0].count, 100.0);
  EXPECT_EQ(b.calls[0].calls, 10);
  EXPECT_DOUBLE_EQ(b.calls[0].bytes_per_call, 400.0);
  EXPECT_DOUBLE_EQ(b.per_gpu_bytes(), 6000.0);
  // One rank: nothing moves.
  EXPECT_DOUBLE_EQ(ca::zero_comm_volume(3, 1, 1000, 2).per_gpu_bytes(), 0.0);
  EXPECT_THROW(ca::zero_comm_volume(4, 4, 1000, 2), std::invalid_argument);
  EXPECT_THROW(ca::zero_comm_volume(0, 0, 1000, 2), std::invalid_argument);
  EXPECT_THROW(ca::zero_comm_volume(0, 4, 1000, 0), std::invalid_argument);
  EXPECT_THROW(ca::zero_comm_volume(0, 4, 1000, 2, 0), std::invalid_argument);
}

// Megatron's tensor and pipeline parallelism, b = 2, s = 128, d = 256, l = 8, 2 bytes:
// A = 2 * 128 * 256 * 2 = 131072 bytes per call.
TEST(ModelMath, ModelParallelComm) {
  // tp 4, pp 2, M 3: 4 allreduces x 8/2 layers x 3 micro-batches = 48 calls of A over 4 ranks
  // (per GPU 48 A 2(3/4) = 9437184 bytes); 3 sends forward and 3 backward of A.
  const ca::ModelParallelComm c = ca::model_parallel_comm(2, 128, 256, 8, {4, 2, 3}, 2);
  ASSERT_EQ(c.tensor.size(), 1u);
  EXPECT_EQ(c.tensor[0].collective, "allreduce");
  EXPECT_EQ(c.tensor[0].calls, 48);
  EXPECT_DOUBLE_EQ(c.tensor[0].count, 65536.0);
  EXPECT_DOUBLE_EQ(c.tensor[0].bytes_per_call, 131072.0);
  EXPECT_DOUBLE_EQ(c.tensor[0].per_gpu_bytes, 9437184.0);
  ASSERT_EQ(c.pipeline.size(), 2u);
  for (const ca::CommCall& p : c.pipeline) {
    EXPECT_EQ(p.collective, "sendrecv");
    EXPECT_EQ(p.calls, 3);
    EXPECT_DOUBLE_EQ(p.bytes_per_call, 131072.0);
    EXPECT_DOUBLE_EQ(p.per_gpu_bytes, 3 * 131072.0);
  }
  // Sequence parallel: a reduce-scatter and an allgather of A (the whole array) in place of each
  // allreduce, (tp-1)/tp of it per GPU each (48 A 3/4 = 4718592 bytes); the layernorms' weight
  // gradients (2 d = 512 elements) summed for each of the stage's 2 x 4 layernorms and 3
  // micro-batches; stages send their rows, A / 4.
  const ca::ModelParallelComm sp = ca::model_parallel_comm(2, 128, 256, 8, {4, 2, 3, true}, 2);
  ASSERT_EQ(sp.tensor.size(), 3u);
  EXPECT_EQ(sp.tensor[0].collective, "reducescatter");
  EXPECT_EQ(sp.tensor[1].collective, "allgather");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(sp.tensor[i].calls, 48);
    EXPECT_DOUBLE_EQ(sp.tensor[i].bytes_per_call, 131072.0);
    EXPECT_DOUBLE_EQ(sp.tensor[i].per_gpu_bytes, 4718592.0);
  }
  EXPECT_EQ(sp.tensor[2].collective, "allreduce");
  EXPECT_EQ(sp.tensor[2].calls, 24);
  EXPECT_DOUBLE_EQ(sp.tensor[2].bytes_per_call, 1024.0);
  ASSERT_EQ(sp.pipeline.size(), 2u);
  for (const ca::CommCall& p : sp.pipeline) EXPECT_DOUBLE_EQ(p.bytes_per_call, 32768.0);
  // With the embeddings and the tied head (commscope-train's model), the last stage also sums the
  // head's input gradient (A, once per micro-batch; with pp 1 the encoder's lookup too) and the
  // cross-entropy's row sums (2 per micro-batch) and maximum (1) of b s = 256 elements, 512 bytes.
  const ca::ModelParallelComm h = ca::model_parallel_comm(2, 128, 256, 8, {4, 2, 3}, 2, true);
  ASSERT_EQ(h.tensor.size(), 4u);
  EXPECT_EQ(h.tensor[0].calls, 48);
  EXPECT_EQ(h.tensor[1].calls, 3);
  EXPECT_DOUBLE_EQ(h.tensor[1].bytes_per_call, 131072.0);
  EXPECT_EQ(h.tensor[2].calls, 6);
  EXPECT_EQ(h.tensor[3].calls, 3);
  for (int i = 2; i < 4; ++i) EXPECT_DOUBLE_EQ(h.tensor[i].bytes_per_call, 512.0);
  EXPECT_EQ(ca::model_parallel_comm(2, 128, 256, 8, {4, 1, 3}, 2, true).tensor[1].calls, 6);
  // Sequence parallel with the head, one stage: the encoder's and the head's reduce-scatter and
  // allgather (2 per micro-batch each), the final layernorm's gradients besides the 2 x 8 others.
  const ca::ModelParallelComm hsp = ca::model_parallel_comm(2, 128, 256, 8, {4, 1, 3, true}, 2, true);
  ASSERT_EQ(hsp.tensor.size(), 7u);
  EXPECT_EQ(hsp.tensor[1].collective, "reducescatter");
  EXPECT_EQ(hsp.tensor[1].calls, 6);
  EXPECT_EQ(hsp.tensor[3].collective, "allgather");
  EXPECT_EQ(hsp.tensor[3].calls, 6);
  EXPECT_EQ(hsp.tensor[4].calls, (2 * 8 + 1) * 3);
  // No tensor or pipeline parallelism: nothing moves.
  const ca::ModelParallelComm none = ca::model_parallel_comm(2, 128, 256, 8, {1, 1, 5}, 2);
  EXPECT_TRUE(none.tensor.empty());
  EXPECT_TRUE(none.pipeline.empty());
  EXPECT_THROW(ca::model_parallel_comm(2, 128, 256, 8, {1, 3, 1}, 2), std::invalid_argument);  // 3 does not divide 8
  EXPECT_THROW(ca::model_parallel_comm(2, 128, 256, 8, {0, 1, 1}, 2), std::invalid_argument);
  EXPECT_THROW(ca::model_parallel_comm(2, 128, 256, 8, {1, 1, 0}, 2), std::invalid_argument);
  EXPECT_THROW(ca::model_parallel_comm(2, 128, 256, 8, {2, 1, 1 << 30}, 2), std::invalid_argument);  // calls > int

  // Bubble (pp - 1) / (M + pp - 1): pp 4, M 8: 3/11; pp 1: none; pp 2, M 1: half.
  EXPECT_DOUBLE_EQ(ca::pipeline_bubble_fraction(4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(ca::pipeline_bubble_fraction(1, 8), 0.0);
  EXPECT_DOUBLE_EQ(ca::pipeline_bubble_fraction(2, 1), 0.5);
  // Step = work (M + pp - 1) / M: 8 ms of work, pp 4, M 8: 11 ms, 3 of them the bubble (3/11).
  EXPECT_DOUBLE_EQ(ca::pipeline_step_time(8.0, 4, 8), 11.0);
  const double w = 0.1 + 0.2;  // pp 1 returns the work itself, bit for bit
  EXPECT_EQ(ca::pipeline_step_time(w, 1, 1), w);
  EXPECT_EQ(ca::pipeline_step_time(w, 1, 7), w);
  EXPECT_THROW(ca::pipeline_bubble_fraction(0, 1), std::invalid_argument);
  EXPECT_THROW(ca::pipeline_step_time(1.0, 1, 0), std::invalid_argument);
  EXPECT_THROW(ca::pipeline_step_time(-1.0, 2, 2), std::invalid_argument);
}

TEST(ModelMath, Scaling) {
  EXPECT_DOUBLE_EQ(ca::speedup(10.0, 4.0), 2.5);
  EXPECT_DOUBLE_EQ(ca::comm_efficiency(2.0, 4.0), 0.5);
  // (0.6 + 0.4) / (0.6 + 0.4 / 0.5) = 1 / 1.4 = 0.714285...
  EXPECT_NEAR(ca::predicted_speedup(0.6, 0.4, 0.5), 1.0 / 1.4, 1e-15);
  // No change in communication: no change in time.
  EXPECT_DOUBLE_EQ(ca::predicted_speedup(0.5, 0.3, 1.0), 1.0);
  // Communication twice as fast (eff 2): (0.5 + 0.5) / (0.5 + 0.25) = 4/3.
  EXPECT_NEAR(ca::predicted_speedup(0.5, 0.5, 2.0), 4.0 / 3.0, 1e-15);
  // Strong scaling 2 -> 4 ranks with as many CPUs each: compute halves (w = 0.5), communication
  // doubles (eff 0.5): 1 / (0.25 + 1) = 0.8.
  EXPECT_NEAR(ca::predicted_speedup(0.5, 0.5, 0.5, 0.5), 0.8, 1e-15);
  EXPECT_THROW(ca::predicted_speedup(0.5, 0.5, 1.0, 0.0), std::invalid_argument);
  // Strong: speedup 2.5 from 2 to 8 ranks -> 2.5 * 2 / 8 = 0.625. Weak: 1.0 / 1.25 = 0.8.
  EXPECT_DOUBLE_EQ(ca::strong_scaling_efficiency(10.0, 4.0, 2, 8), 0.625);
  EXPECT_DOUBLE_EQ(ca::weak_scaling_efficiency(1.0, 1.25), 0.8);
  EXPECT_THROW(ca::speedup(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(ca::predicted_speedup(0.5, 0.5, 0.0), std::invalid_argument);
  EXPECT_THROW(ca::predicted_speedup(0.0, 0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(ca::strong_scaling_efficiency(1, 1, 0, 2), std::invalid_argument);
}

// An independent evaluation of E[max]: E = int_0^inf (1 - Phi^p) dx - int_-inf^0 Phi^p dx,
// by the trapezoid rule with step 1e-4 on [-10, 10].
double expected_max_by_cdf(double p) {
  const double h = 1e-4;
  double sum = 0.0;
  for (int i = -100000; i <= 100000; ++i) {
    const double x = i * h;
    const double phi_p = std::exp(p * std::log(0.5 * std::erfc(-x / std::numbers::sqrt2)));
    // The integrand jumps by 1 at x = 0: take the mean of both sides there.
    const double f = i > 0 ? 1.0 - phi_p : (i < 0 ? -phi_p : 0.5 - phi_p);
    sum += (i == -100000 || i == 100000 ? 0.5 : 1.0) * f;
  }
  return sum * h;
}

TEST(ModelMath, ExpectedMaxOfNormals) {
  EXPECT_EQ(ca::expected_max_std_normal(1), 0.0);
  EXPECT_NEAR(ca::expected_max_std_normal(2), 1.0 / std::sqrt(std::numbers::pi), 1e-10);
  // p = 3 is exact too: 3 / (2 sqrt(pi)) = 0.8462843753...
  EXPECT_NEAR(ca::expected_max_std_normal(3), 1.5 / std::sqrt(std::numbers::pi), 1e-10);
  // Tabulated values (6 decimals).
  EXPECT_NEAR(ca::expected_max_std_normal(3), 0.846284, 5e-7);
  EXPECT_NEAR(ca::expected_max_std_normal(4), 1.029375, 5e-7);
  EXPECT_NEAR(ca::expected_max_std_normal(10), 1.538753, 5e-7);
  EXPECT_NEAR(ca::expected_max_std_normal(100), 2.507594, 5e-7);
  double previous = 0.0;
  for (std::int64_t p : {2, 10, 100, 1000, 10000, 100000}) {
    const double e = ca::expected_max_std_normal(p);
    const double check = expected_max_by_cdf(static_cast<double>(p));
    std::printf("  E[max of %6lld standard normals] = %.7f (cdf form %.7f)\n", static_cast<long long>(p), e, check);
    EXPECT_NEAR(e, check, 1e-6) << p;
    EXPECT_GT(e, previous);
    EXPECT_LT(e, std::sqrt(2.0 * std::log(static_cast<double>(p))));  // the classical upper bound
    previous = e;
  }
  EXPECT_THROW(ca::expected_max_std_normal(0), std::invalid_argument);
}

TEST(ModelMath, StragglerBound) {
  // 100 + 10 / sqrt(pi) = 105.6418958...
  EXPECT_NEAR(ca::straggler_bound(100.0, 10.0, 2), 100.0 + 10.0 / std::sqrt(std::numbers::pi), 1e-9);
  EXPECT_DOUBLE_EQ(ca::straggler_bound(100.0, 10.0, 1), 100.0);
  EXPECT_DOUBLE_EQ(ca::straggler_bound(100.0, 0.0, 1000), 100.0);
  EXPECT_NEAR(ca::straggler_bound(50.0, 2.0, 100), 50.0 + 2.0 * 2.507594, 2e-6);
  EXPECT_THROW(ca::straggler_bound(1.0, -1.0, 4), std::invalid_argument);
}

}  // namespace
