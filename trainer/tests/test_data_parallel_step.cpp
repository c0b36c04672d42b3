// The parallel wing's buffer plan (src/parallel/data_parallel_step.hpp): which buffers each
// data-parallel mode holds, DDP's buckets and the memory they add up to, for both engines; and
// the profiled group's operation names (src/parallel/profiled_group.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "commscope/trainer/config.hpp"
#include "commscope/trainer/layout.hpp"
#include "parallel/data_parallel_step.hpp"
#include "parallel/profiled_group.hpp"
#include "parallel/sharding.hpp"

namespace {

namespace ct = commscope::trainer;
namespace par = commscope::trainer::parallel;
using ct::DpMode;

struct Fixture {
  ct::ParameterLayout layout{ct::preset("tiny")};
  ct::parallel::ShardPlan plan{layout, 3, 1};
};

TEST(BufferPlan, DdpHoldsEverythingWhole) {
  Fixture f;
  const std::size_t total = f.layout.total();
  const par::BufferPlan b(DpMode::kDdp, f.plan, total, 1, sizeof(float), 1);
  EXPECT_TRUE(b.full_grads);
  EXPECT_FALSE(b.sharded());
  EXPECT_EQ(b.state, total);
  EXPECT_EQ(b.grad_shard + b.param_shard + b.staging + b.grad_work + b.param_work + b.rs_sum, 0u);
  const ct::MemoryReport m = b.memory(1, 100);
  EXPECT_EQ(m.params, total * 4);
  EXPECT_EQ(m.grads, total * 4);
  EXPECT_EQ(m.optimizer, 2 * total * 4);
  EXPECT_EQ(m.working, 0u);
  EXPECT_EQ(m.activations, 100u);
}

TEST(BufferPlan, ZeroStagesShardMore) {
  Fixture f;
  const std::size_t total = f.layout.total(), shards = f.plan.shard_total;
  const par::BufferPlan z1(DpMode::kZero1, f.plan, total, 1, 4, 1);
  EXPECT_EQ(z1.state, shards);
  EXPECT_EQ(z1.staging, f.plan.max_padded);
  EXPECT_TRUE(z1.full_grads);
  const par::BufferPlan z2(DpMode::kZero2, f.plan, total, 2, 4, 1);
  EXPECT_FALSE(z2.full_grads);
  EXPECT_EQ(z2.grad_work0, f.plan.shards[0].padded);
  EXPECT_EQ(z2.grad_work, f.plan.max_padded_layer);
  EXPECT_EQ(z2.rs_sum, f.plan.max_padded / 3);  // micro-batches add into the shard
  EXPECT_EQ(z2.param_shard, 0u);
  const par::BufferPlan z3(DpMode::kZero3, f.plan, total, 1, 4, 1);
  EXPECT_EQ(z3.staging, 0u);
  EXPECT_EQ(z3.rs_sum, 0u);
  EXPECT_EQ(z3.param_shard, shards);
  // Two working copies (the CUDA engine's) count twice.
  const ct::MemoryReport one = z3.memory(1, 0), two = z3.memory(2, 0);
  EXPECT_EQ(one.params, shards * 4);
  EXPECT_EQ(one.grads, shards * 4);
  EXPECT_EQ(two.working - one.working, (z3.grad_work + z3.param_work) * 4);
}

TEST(BufferPlan, MixedPrecisionMasterWeights) {
  Fixture f;
  const std::size_t total = f.layout.total(), shards = f.plan.shard_total;
  const par::BufferPlan ddp(DpMode::kDdp, f.plan, total, 1, 2, 1, true, true);  // bf16
  EXPECT_EQ(ddp.master, total);
  EXPECT_EQ(ddp.memory(2, 0).params, total * 2 + total * 4);
  EXPECT_EQ(ddp.memory(2, 0).grads, total * 2);  // read as bf16 by the update: no fp32 copy
  const par::BufferPlan fp32(DpMode::kDdp, f.plan, total, 1, 4, 1, true, false);  // the model's own
  EXPECT_EQ(fp32.master, 0u);
  const par::BufferPlan z1(DpMode::kZero1, f.plan, total, 1, 4, 1, true, false);
  EXPECT_EQ(z1.master, shards);
}

// DDP's buckets cover every segment once, in backward order, closing at the segment the plan says.
TEST(BufferPlan, BucketsCoverTheLayout) {
  Fixture f;
  const par::BufferPlan b(DpMode::kDdp, f.plan, f.layout.total(), 1, sizeof(float), 1);
  std::size_t covered = 0, end = f.layout.total();
  for (int s = f.layout.segment_count() - 1; s >= 0; --s) {
    const std::optional<ct::Segment> bucket = b.bucket(f.plan, s);
    if (!bucket) continue;
    EXPECT_EQ(bucket->offset + bucket->count, end);
    end = bucket->offset;
    covered += bucket->count;
  }
  EXPECT_EQ(covered, f.layout.total());
  EXPECT_EQ(end, 0u);
}

TEST(BufferPlan, LoadChecksSizes) {
  const std::vector<float> p(10), wrong(9);
  EXPECT_NO_THROW(par::check_load("E", 10, p, {}, {}));
  EXPECT_THROW(par::check_load("E", 10, wrong, {}, {}), std::invalid_argument);
  EXPECT_THROW(par::check_load("E", 10, p, wrong, {}), std::invalid_argument);
}

TEST(BufferPlan, ClipScale) {
  ct::AdamWOptions a;
  a.grad_clip = 1.0f;
  EXPECT_EQ(par::clip_scale(a, 0.5f), 1.0f);
  EXPECT_NEAR(par::clip_scale(a, 4.0f), 0.25f, 1e-6f);
  a.grad_clip = 0;
  EXPECT_EQ(par::clip_scale(a, 4.0f), 1.0f);
}

// The names the profile and the report know (docs/design.md, analysis's communication groups).
TEST(ProfiledGroup, OperationNames) {
  EXPECT_STREQ(par::group_op_name(par::GroupOp::grad_allreduce).profile, "allreduce");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::grad_reducescatter).profile, "reducescatter");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::param_allgather).profile, "allgather");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::embedding_allreduce).profile, "embedding.allreduce");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::tp_allreduce).profile, "tp.allreduce");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::tp_allreduce_max).profile, "tp.allreduce_max");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::tp_reducescatter).profile, "tp.reducescatter");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::tp_allgather).profile, "tp.allgather");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::tp_allgather).collective, "allgather");
  EXPECT_STREQ(par::group_op_name(par::GroupOp::embedding_allreduce).what, "embedding gradients");
}

}  // namespace
