#include "banner.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "commscope/trainer/layout.hpp"

namespace commscope::trainer {

namespace {

// The pipeline's line and one line per stage: its layers and its first rank's memory.
void print_pipeline(const TrainOptions& o, const RunSetup& setup, const BannerFacts& f, std::size_t message) {
  const ModelConfig& config = setup.config;
  const int m = o.parallel.micro_batches, p = o.parallel.pp;
  std::printf(
      "pipeline parallel: %d stage%s (%s schedule), %d micro-batch%s of %d sequences; bubble (p-1)/(m+p-1) = "
      "%.1f%%%s\n",
      p, p > 1 ? "s" : "", o.parallel.schedule(), m, m > 1 ? "es" : "", f.local_batch / m,
      100.0 * (p - 1) / (m + p - 1),
      p > 1 ? ("; " + mib(o.parallel.sp ? message / static_cast<std::size_t>(o.parallel.tp) : message) +
               " per message between stages")
                  .c_str()
            : "");
  for (int st = 0; st < p; ++st) {
    const Stage sg = pipeline_stage(config, p, st);
    const std::size_t r0 = static_cast<std::size_t>(st) * static_cast<std::size_t>(f.ranks / p);  // tp 0, dp 0
    std::printf("  stage %d: layers %d-%d%s%s (ranks %zu-%zu); memory per rank: %s\n", st, sg.first_layer,
                sg.first_layer + sg.layers - 1, sg.first() ? ", embeddings" : "", sg.last() ? ", head (tied wte)" : "",
                r0, r0 + static_cast<std::size_t>(f.ranks / p) - 1, memory_text(f.by_rank[r0]).c_str());
  }
}

}  // namespace

std::vector<MemoryReport> gather_memory(const MemoryReport& mine, Communicator& world) {
  const bool root = world.rank() == 0;
  constexpr int kinds = 6;
  std::vector<std::uint64_t> all(root ? kinds * static_cast<std::size_t>(world.size()) : 0);
  const std::uint64_t values[kinds] = {mine.params,  mine.grads,       mine.optimizer,
                                       mine.working, mine.activations, mine.libraries};
  MPI_Gather(values, kinds, MPI_UINT64_T, all.data(), kinds, MPI_UINT64_T, 0, world.mpi_comm());
  std::vector<MemoryReport> by_rank;
  for (std::size_t r = 0; r < all.size() / kinds; ++r) {
    const std::uint64_t* x = all.data() + kinds * r;
    by_rank.push_back({x[0], x[1], x[2], x[3], x[4], x[5]});
  }
  return by_rank;
}

void print_banner(const TrainOptions& o, const RunSetup& setup, const BannerFacts& f) {
  const ModelConfig& config = setup.config;
  const bool cuda = o.device == "cuda", bf16 = cuda && o.precision == "bf16";
  std::printf(
      "commscope-train: %s, %d layers, %d heads, %d channels, context %d, vocabulary %d (padded %d), "
      "%lld parameters\n",
      o.load_llmc.empty() && o.load.empty() ? o.model.c_str() : "loaded", config.layers, config.heads, config.channels,
      config.max_seq, config.vocab, config.padded_vocab, static_cast<long long>(config.parameter_count()));
  std::printf(
      "data: %zu tokens (%zu train, %zu validation); global batch %d x %d tokens, %d per rank; %d ranks x %d "
      "threads; device %s, %s\n",
      setup.data.size(), setup.train.size(), setup.val.size(), o.batch, setup.seq, f.local_batch, f.ranks, f.threads,
      o.device.c_str(), bf16 ? "bf16 with fp32 master weights" : "fp32");
  // One micro-batch's activations [b, s, C]: a pipeline message, a TP allreduce (bf16 on CUDA in bf16).
  const std::size_t message = static_cast<std::size_t>(f.local_batch / o.parallel.micro_batches) * setup.seq *
                              config.channels * (bf16 ? 2 : sizeof(float));
  if (o.parallel.pp > 1 || o.parallel.micro_batches > 1) print_pipeline(o, setup, f, message);
  if (o.parallel.tp > 1)
    std::printf(
        "tensor parallel: groups of %d consecutive ranks (%d of the %d heads each) x %d data-parallel ranks; %s "
        "(%s) of %s (batch %d) per layer and micro-batch, besides the encoder's and the head's (first and last "
        "stage)\n",
        o.parallel.tp, config.heads / o.parallel.tp, config.heads, setup.dp_ranks,
        o.parallel.sp ? "sequence parallel: 4 reduce-scatters and 4 allgathers" : "4 allreduces",
        o.parallel.tp_algorithm().c_str(), mib(message).c_str(), f.local_batch / o.parallel.micro_batches);
  if (cuda && o.parallel.pp > 1) std::printf("pipeline messages on CUDA: staged through pinned host memory over MPI\n");
  std::printf("data parallel: %s over '%s'%s%s; memory per rank: %s\n",
              std::string(to_string(o.parallel.dp_mode)).c_str(), o.parallel.algo.c_str(),
              cuda && o.parallel.algo != "nccl" ? (" (" + o.transport + " transport)").c_str() : "",
              o.parallel.dp_mode == DpMode::kDdp ? (", buckets of " + mib(o.parallel.bucket_bytes)).c_str() : "",
              memory_text(f.memory).c_str());
  std::printf("GEMM here: %.1f GFLOP/s per rank (%s)\n", f.gemm_gflops, f.gemm_what.c_str());
  if (!f.compute.empty()) std::printf("compute: %s\n", f.compute.c_str());
  std::fflush(stdout);
}

std::string memory_text(const MemoryReport& m) {
  std::string text = "params " + mib(m.params) + ", grads " + mib(m.grads) + ", AdamW " + mib(m.optimizer) +
                     ", working " + mib(m.working) + ", activations " + mib(m.activations);
  if (m.libraries > 0) text.append(", libraries' workspaces ").append(mib(m.libraries));
  return text.append(", total ").append(mib(m.total()));
}

std::string of_gemm(double gflops, double gemm, int decimals) {
  char text[96];
  const double share = 100.0 * gflops / gemm;
  std::snprintf(text, sizeof text, "%.*f%% of GEMM%s", decimals, share,
                share > 100.0 ? ": above the reference, which was measured low" : "");
  return text;
}

std::size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace commscope::trainer
