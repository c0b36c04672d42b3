// What a training run was: the model, the parallel layout, the device. The trainer fills one and
// stores it in its profile's /meta/attributes; the reports and the trace export read it back.
// The keys and their text live here only (the file's contract: profile files of every version
// carry them as text attributes, one per field; a key absent reads as the default below).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace commscope::profiler {

using Attributes = std::vector<std::pair<std::string, std::string>>;

struct RunDescription {
  // The program that wrote the profile: "commscope-train"; a file another program wrote names its
  // source instead (an import, the PMPI library), read into this field; "" when neither.
  std::string tool;
  std::string model;  // the preset, or "loaded"
  int layers = 0, heads = 0, channels = 0;
  int seq = 0;                                // the training sequence length
  int context = 0;                            // wpe's rows (the model's context); 0 where the file predates the key
  int vocab = 0;                              // the tokenizer's
  int padded_vocab = 0;                       // wte's rows; absent: the vocabulary
  int global_batch = 0;                       // sequences per step over all ranks; 0 unknown
  std::string dp;                             // the data-parallel mode: ddp, zero1, zero2, zero3
  int tp = 1, pp = 1, micro_batches = 1;      // the layout: 1 where absent
  bool sp = false;                            // sequence parallelism over the TP group
  std::string schedule;                       // the pipeline's: 1f1b or gpipe
  std::string algo, tp_algo, embedding_algo;  // each group's collective algorithm
  int threads = 1;                            // per rank
  int node_cpus = 0;                          // what a node's ranks share; 0 unknown
  std::string device, precision;              // cpu or cuda; fp32 or bf16
  double gemm_gflops = 0;                     // the reference GEMM rate per rank

  // The ZeRO stage of `dp` (zero1..zero3), 0 for DDP or unknown.
  int zero_stage() const;
  // "commscope-train --model small (layers 4, channels 128, heads 4, vocab 256, seq 64, cpu, fp32)"
  // for the trainer, else the program's name ("an unnamed program" without one): profiles of
  // different workloads do not scale against each other.
  std::string workload() const;
};

// The description as the profile's attributes, in the trainer's order.
Attributes to_attributes(const RunDescription& d);

// The description a profile's attributes hold: the trainer's keys, the defaults above where a key
// is absent (older files, other programs' profiles). Numbers as atoi/atof read them.
RunDescription read_run_description(const Attributes& attributes);

}  // namespace commscope::profiler
