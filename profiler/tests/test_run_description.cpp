// The trainer's run description in a profile's attributes: written and read back field for field,
// the keys and text of files written before it (the trainer's 24 string attributes), and the
// defaults where keys are absent (older files, other programs' profiles).
#include <gtest/gtest.h>

#include "commscope/profiler/run_description.hpp"

namespace commscope::profiler {
namespace {

RunDescription example() {
  RunDescription d;
  d.tool = "commscope-train";
  d.model = "small";
  d.layers = 6, d.heads = 6, d.channels = 384, d.seq = 256, d.context = 256, d.vocab = 256, d.padded_vocab = 256;
  d.global_batch = 8;
  d.dp = "zero2";
  d.tp = 2, d.pp = 2, d.micro_batches = 4, d.sp = true;
  d.schedule = "1f1b";
  d.algo = "ring", d.tp_algo = "shm", d.embedding_algo = "mpi";
  d.threads = 3, d.node_cpus = 12;
  d.device = "cpu", d.precision = "fp32";
  d.gemm_gflops = 41.5;
  return d;
}

TEST(RunDescription, RoundTripsEveryField) {
  const RunDescription d = example();
  const RunDescription got = read_run_description(to_attributes(d));
  EXPECT_EQ(got.tool, d.tool);
  EXPECT_EQ(got.model, d.model);
  EXPECT_EQ(got.layers, 6);
  EXPECT_EQ(got.heads, 6);
  EXPECT_EQ(got.channels, 384);
  EXPECT_EQ(got.seq, 256);
  EXPECT_EQ(got.context, 256);
  EXPECT_EQ(got.vocab, 256);
  EXPECT_EQ(got.padded_vocab, 256);
  EXPECT_EQ(got.global_batch, 8);
  EXPECT_EQ(got.dp, "zero2");
  EXPECT_EQ(got.zero_stage(), 2);
  EXPECT_EQ(got.tp, 2);
  EXPECT_EQ(got.pp, 2);
  EXPECT_EQ(got.micro_batches, 4);
  EXPECT_TRUE(got.sp);
  EXPECT_EQ(got.schedule, "1f1b");
  EXPECT_EQ(got.algo, "ring");
  EXPECT_EQ(got.tp_algo, "shm");
  EXPECT_EQ(got.embedding_algo, "mpi");
  EXPECT_EQ(got.threads, 3);
  EXPECT_EQ(got.node_cpus, 12);
  EXPECT_EQ(got.device, "cpu");
  EXPECT_EQ(got.precision, "fp32");
  EXPECT_DOUBLE_EQ(got.gemm_gflops, 41.5);
}

// The keys and text the trainer wrote before the description had a type: files of every
// version read alike, and the writer writes them unchanged.
TEST(RunDescription, KeysAndTextOfEarlierFiles) {
  const Attributes earlier = {{"tool", "commscope-train"},
                              {"model", "small"},
                              {"layers", "6"},
                              {"heads", "6"},
                              {"channels", "384"},
                              {"seq", "256"},
                              {"context", "256"},
                              {"vocab", "256"},
                              {"padded_vocab", "256"},
                              {"global_batch", "8"},
                              {"dp", "zero2"},
                              {"tp", "2"},
                              {"sp", "1"},
                              {"pp", "2"},
                              {"micro_batches", "4"},
                              {"schedule", "1f1b"},
                              {"algo", "ring"},
                              {"tp_algo", "shm"},
                              {"embedding_algo", "mpi"},
                              {"threads", "3"},
                              {"node_cpus", "12"},
                              {"device", "cpu"},
                              {"precision", "fp32"},
                              {"gemm_gflops", "41.500000"}};
  EXPECT_EQ(to_attributes(example()), earlier);
  EXPECT_EQ(to_attributes(read_run_description(earlier)), earlier);
}

TEST(RunDescription, AbsentKeysReadAsOneRankWithoutLayout) {
  const RunDescription d = read_run_description({{"model", "small"}, {"vocab", "50257"}});
  EXPECT_EQ(d.tool, "");
  EXPECT_EQ(d.workload(), "an unnamed program");
  EXPECT_EQ(d.tp, 1);
  EXPECT_EQ(d.pp, 1);
  EXPECT_EQ(d.micro_batches, 1);
  EXPECT_EQ(d.threads, 1);
  EXPECT_FALSE(d.sp);
  EXPECT_EQ(d.padded_vocab, 50257);  // absent: the vocabulary
  EXPECT_EQ(d.context, 0);           // absent: unknown
  EXPECT_EQ(d.node_cpus, 0);
  EXPECT_EQ(d.global_batch, 0);
  EXPECT_EQ(d.zero_stage(), 0);
}

TEST(RunDescription, WorkloadNamesTheTrainersShapeOrTheSource) {
  EXPECT_EQ(example().workload(),
            "commscope-train --model small (layers 6, channels 384, heads 6, vocab 256, seq 256, cpu, fp32)");
  const RunDescription imported = read_run_description({{"source", "libcommscope-mpiprof (PMPI)"}});
  EXPECT_EQ(imported.workload(), "libcommscope-mpiprof (PMPI)");
  EXPECT_EQ(read_run_description({{"dp", "ddp"}}).zero_stage(), 0);
  EXPECT_EQ(read_run_description({{"dp", "zero3"}}).zero_stage(), 3);
}

}  // namespace
}  // namespace commscope::profiler
