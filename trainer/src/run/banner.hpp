// What commscope-train prints before its first step (rank 0): the model, the data and batch,
// each parallel dimension with its groups and messages, every stage's memory per rank, the
// GEMM reference; and the texts the step lines share with it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/engine.hpp"
#include "commscope/trainer/train_options.hpp"
#include "setup.hpp"

namespace commscope::trainer {

struct BannerFacts {
  int ranks = 1, threads = 1;
  int local_batch = 1;                // sequences per rank and step
  MemoryReport memory;                // this rank's (rank 0's)
  std::vector<MemoryReport> by_rank;  // every rank's, in rank order (the stages differ)
  double gemm_gflops = 0;             // the reference rate per rank
  std::string gemm_what;              // what it was measured on
  std::string compute;                // the engine's compute_details() ("" when nothing to say)
};

// Every rank's memory on rank 0, in rank order (empty elsewhere). Collective over `world`.
std::vector<MemoryReport> gather_memory(const MemoryReport& mine, Communicator& world);

// The banner, on stdout.
void print_banner(const TrainOptions& o, const RunSetup& setup, const BannerFacts& facts);

// "params X MiB, grads X MiB, AdamW X MiB, working X MiB, activations X MiB, total X MiB".
std::string memory_text(const MemoryReport& m);

// The achieved rate as a share of the GEMM reference: "45% of GEMM". Above 100% the reference
// was measured low (the node was busy at start), and the text says so rather than claim it.
std::string of_gemm(double gflops, double gemm, int decimals);

// This process's resident memory (/proc/self/statm), 0 where unknown.
std::size_t resident_bytes();

}  // namespace commscope::trainer
