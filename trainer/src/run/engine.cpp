#include "engine.hpp"

#include <cblas.h>

#include <new>
#include <stdexcept>
#include <vector>

#include "commscope/collectives/error.hpp"
#include "commscope/common/timing.hpp"
#include "memory_plan.hpp"
#include "parallel/pipeline.hpp"
#include "setup.hpp"

#if COMMSCOPE_WITH_CUDA
#include "commscope/trainer/cuda_engine.hpp"
#endif

namespace commscope::trainer {
namespace {

// The machine's sgemm rate with this rank's threads: the reference for "fraction of sgemm". The
// first GEMM warms up (threads, pages), then the best of 7: on a busy node the best of 3 read
// anywhere from 102 to 199 GFLOP/s, and the steps then ran at "145% of GEMM".
double measure_sgemm_gflops(int m, int k, int n) {
  std::vector<float> a(static_cast<std::size_t>(m) * k, 0.5f), b(static_cast<std::size_t>(n) * k, 0.25f),
      c(static_cast<std::size_t>(m) * n);
  const double s = timing::best_seconds(8, [&] {
    return timing::seconds_of([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n);
    });
  });
  return 2.0 * m * n * k / s / 1e9;
}

#if COMMSCOPE_WITH_CUDA
Engine cuda_engine(const TrainOptions& o, const ModelConfig& config, int local_batch, int seq,
                   const AdamWOptions& adamw, Communicator& world, parallel::ProcessGrid* grid, const Stage& stage) {
  const bool bf16 = o.precision == "bf16";
  CudaEngineOptions co;
  co.bf16 = bf16;
  co.transport = o.transport;
  co.grid = grid;
  co.stage = stage;
  co.attention = o.attention;
  Engine e;
  try {
    e.engine = make_cuda_engine(world, config, local_batch, seq, o.parallel, adamw, co);
  } catch (const InvalidArgument& err) {
    throw UsageError(err.what());
  }
  // cuBLAS's rate beside the engine (cuda_device_info in engine_cuda.cpp).
  const CudaDeviceInfo info = cuda_device_info(bf16);
  e.gemm_gflops = info.gemm_tflops * 1e3;
  e.gemm_what =
      info.name + " (" + mib(info.memory_bytes) + "), cuBLAS " + (bf16 ? "bf16" : "fp32") + " GEMM 4096 x 4096 x 4096";
  return e;
}
#else
Engine cuda_engine(const TrainOptions&, const ModelConfig&, int, int, const AdamWOptions&, Communicator&,
                   parallel::ProcessGrid*, const Stage&) {
  throw UsageError("--device cuda: this build has no CUDA (configure where the CUDA toolkit and NCCL are installed)");
}
#endif

}  // namespace

Engine make_engine(const TrainOptions& o, const ModelConfig& config, int local_batch, int seq,
                   const AdamWOptions& adamw, Communicator& world, Communicator& dp, parallel::ProcessGrid* grid,
                   const Stage& stage, int threads) {
  if (o.device == "cuda") {
    Engine e = cuda_engine(o, config, local_batch, seq, adamw, world, grid, stage);
    if (o.gemm_gflops > 0) e.gemm_gflops = o.gemm_gflops, e.gemm_what = "--gemm-gflops, on " + e.gemm_what;
    return e;
  }
  Engine e;
  const ParallelPlan& parallel_plan = o.parallel;
  const int slots =
      parallel::pipeline_slots(stage.index, stage.count, parallel_plan.micro_batches, parallel_plan.gpipe);
  // Refused in one line before the model allocates, rather than std::bad_alloc on the way.
  const HostMemoryPlan plan =
      plan_host_memory(o, config, local_batch / parallel_plan.micro_batches, seq, stage, slots, dp.size());
  check_host_memory(plan, o, seq, world);
  try {
    e.cpu_model = std::make_unique<Gpt2<float>>(config, local_batch / parallel_plan.micro_batches, seq,
                                                parallel_plan.tp, stage, slots, parallel_plan.sp);
    e.engine = std::make_unique<CpuEngine>(dp, *e.cpu_model, parallel_plan, adamw,
                                           grid != nullptr ? grid->groups() : ParallelGroups{});
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory making the model: this rank needs " + describe(plan));
  }
  // A 1024^3 sgemm with this rank's threads (multi-threaded OpenBLAS; the model itself splits
  // GEMMs over its OpenMP threads and calls single-threaded BLAS).
  e.gemm_gflops = o.gemm_gflops > 0 ? o.gemm_gflops : measure_sgemm_gflops(1024, 1024, 1024);
  e.gemm_what = o.gemm_gflops > 0 ? std::string("--gemm-gflops")
                                  : "sgemm 1024 x 1024 x 1024, " + std::to_string(threads) + " threads, best of 7";
  return e;
}

}  // namespace commscope::trainer
