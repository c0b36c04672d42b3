// commscope-train: a GPT-2 trained data parallel (DDP, ZeRO-1/2/3) over the collectives
// library on the CPU or on CUDA GPUs, with the profiler's breakdown of every step.
//
//   mpirun -np 2 build/bin/commscope-train --model small --steps 20 --dp zero2 --algo ring --profile p.h5
//   mpirun -np 8 build/bin/commscope-train --device cuda --precision bf16 --model gpt2-124m --profile p.h5

#include <cblas.h>
#include <omp.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/common/stop_line.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/profiler/profile_file.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/trainer/checkpoint.hpp"
#include "commscope/trainer/data.hpp"
#include "commscope/trainer/data_parallel.hpp"
#include "commscope/trainer/model.hpp"
#include "commscope/trainer/tensor_parallel.hpp"
#include "commscope/trainer/train_options.hpp"
#include "run/engine.hpp"
#include "run/sampling.hpp"
#include "run/setup.hpp"

namespace ct = commscope::trainer;
namespace prof = commscope::profiler;
namespace timing = commscope::timing;

namespace {

using ct::mib;
using ct::UsageError;

// The achieved rate as a share of the GEMM reference: "45% of GEMM". Above 100% the reference
// was measured low (the node was busy at start), and the text says so rather than claim it.
std::string of_gemm(double gflops, double gemm, int decimals) {
  char text[96];
  const double share = 100.0 * gflops / gemm;
  std::snprintf(text, sizeof text, "%.*f%% of GEMM%s", decimals, share,
                share > 100.0 ? ": above the reference, which was measured low" : "");
  return text;
}

// A rank stopped by a signal (its launcher ending the job after another rank died, Ctrl-C)
// says where it was: one line naming the collective in progress (async-signal-safe).
char g_signal_prefix[64] = "commscope-train: ";

extern "C" void on_stop_signal(int sig) {
  commscope::write_stop_line(g_signal_prefix, sig, commscope::current_activity());
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_stop_handlers(int rank) {
  std::snprintf(g_signal_prefix, sizeof g_signal_prefix, "commscope-train: rank %d: ", rank);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, on_stop_signal);
}

// FLOPs of one training iteration (forward + backward) for `batch` sequences, the formula of
// docs/design.md ("Analysis formulas") b (72 s d^2 + 12 s^2 d) l, which leaves out the output
// head's 6 b s d V.
double iteration_flops(const ct::ModelConfig& c, int batch, int seq) {
  const double b = batch, s = seq, d = c.channels, l = c.layers;
  return b * (72 * s * d * d + 12 * s * s * d) * l;
}

// "params X MiB, grads X MiB, AdamW X MiB, working X MiB, activations X MiB, total X MiB".
std::string memory_text(const ct::MemoryReport& m) {
  return "params " + mib(m.params) + ", grads " + mib(m.grads) + ", AdamW " + mib(m.optimizer) + ", working " +
         mib(m.working) + ", activations " + mib(m.activations) + ", total " + mib(m.total());
}

// This process's resident memory (/proc/self/statm), 0 where unknown.
std::size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

int run(int argc, char** argv, commscope::Communicator& world) {
  const int rank = world.rank(), ranks = world.size();
  const std::size_t resident_at_start = resident_bytes();
  const ct::TrainParse parsed = ct::parse_train_options(argc, argv);
  if (parsed.exit_code >= 0) {
    if (rank == 0) std::fprintf(parsed.exit_code ? stderr : stdout, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  const ct::TrainOptions& o = parsed.options;

  ct::RunSetup setup = ct::prepare_run(o, ranks);
  const ct::ModelConfig& config = setup.config;
  const int seq = setup.seq, dp_ranks = setup.dp_ranks;
  const std::int64_t start_step = setup.start_step;
  std::vector<float>&start_params = setup.start_params, &start_m = setup.start_m, &start_v = setup.start_v;
  const ct::TokenDataset &data = setup.data, &train = setup.train, &val = setup.val;

  // --- threads: the node's cores shared among its ranks
  const int threads =
      o.threads > 0
          ? o.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, world.local_size()));
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);

  // Tensor and pipeline parallelism: the DP group carries data parallelism, the TP group the
  // layers' split, the PP group the stages.
  std::unique_ptr<ct::ProcessGrid> grid;
  if (o.tp > 1 || o.pp > 1) grid = std::make_unique<ct::ProcessGrid>(world, o.tp, o.pp);
  commscope::Communicator& dp_comm = grid ? grid->dp : world;
  const int tp_rank = grid ? grid->tp_rank : 0;
  const ct::Stage stage = ct::pipeline_stage(config, o.pp, grid ? grid->pp_rank : 0);
  ct::BatchLoader loader(train, o.batch, seq, dp_comm.rank(), dp_comm.size(), o.seed);
  loader.set_step(start_step);

  // --- model, data parallelism
  if (start_params.empty()) {
    // Initialised in a model of its own (activations for one token), so that the training model
    // never allocates the whole parameter buffer when ZeRO-3 keeps only a shard.
    ct::Gpt2<float> initializer(config, 1, 1);
    initializer.init(o.seed);
    start_params.assign(initializer.params().begin(), initializer.params().end());
  }
  if (o.tp > 1 || o.pp > 1) {  // this rank's shard of the whole model
    for (std::vector<float>* full : {&start_params, &start_m, &start_v})
      if (!full->empty()) *full = ct::model_shard<float>(config, o.tp, tp_rank, stage, *full);
  }
  ct::AdamWOptions adamw = o.adamw;
  adamw.total_steps = static_cast<int>(start_step) + o.steps;  // a resumed run continues the schedule
  const bool cuda = o.device == "cuda";
  const bool bf16 = o.precision == "bf16";
  const ct::Engine chosen =
      ct::make_engine(o, config, loader.local_batch(), seq, adamw, world, dp_comm, grid.get(), stage, threads);
  ct::TrainEngine& dp = *chosen.engine;
  const double gemm = chosen.gemm_gflops;
  const std::string& gemm_what = chosen.gemm_what;
  dp.load(start_params, start_m, start_v, start_step);
  // The engine holds its own copies now: give these back (assigning {} would keep the capacity,
  // a whole fp32 model and, on resume, its two AdamW moments, resident all run).
  for (std::vector<float>* full : {&start_params, &start_m, &start_v}) std::vector<float>().swap(*full);

  // Every rank's memory (the stages differ), printed by rank 0 for each stage.
  const ct::MemoryReport mem = dp.memory();
  std::vector<std::uint64_t> mems(rank == 0 ? 5 * static_cast<std::size_t>(ranks) : 0);
  {
    const std::uint64_t mine[5] = {mem.params, mem.grads, mem.optimizer, mem.working, mem.activations};
    MPI_Gather(mine, 5, MPI_UINT64_T, mems.data(), 5, MPI_UINT64_T, 0, world.mpi_comm());
  }
  if (rank == 0) {
    std::printf(
        "commscope-train: %s, %d layers, %d heads, %d channels, context %d, vocabulary %d (padded %d), "
        "%lld parameters\n",
        o.load_llmc.empty() && o.load.empty() ? o.model.c_str() : "loaded", config.layers, config.heads,
        config.channels, config.max_seq, config.vocab, config.padded_vocab,
        static_cast<long long>(config.parameter_count()));
    std::printf(
        "data: %zu tokens (%zu train, %zu validation); global batch %d x %d tokens, %d per rank; %d ranks x %d "
        "threads; device %s, %s\n",
        data.size(), train.size(), val.size(), o.batch, seq, loader.local_batch(), ranks, threads, o.device.c_str(),
        cuda && bf16 ? "bf16 with fp32 master weights" : "fp32");
    // One micro-batch's activations [b, s, C]: a pipeline message, a TP allreduce (bf16 on CUDA in bf16).
    const std::size_t message = static_cast<std::size_t>(loader.local_batch() / o.micro_batches) * seq *
                                config.channels * (cuda && bf16 ? 2 : sizeof(float));
    if (o.pp > 1 || o.micro_batches > 1) {
      const int m = o.micro_batches, p = o.pp;
      std::printf(
          "pipeline parallel: %d stage%s (%s schedule), %d micro-batch%s of %d sequences; bubble (p-1)/(m+p-1) = "
          "%.1f%%%s\n",
          p, p > 1 ? "s" : "", o.schedule.c_str(), m, m > 1 ? "es" : "", loader.local_batch() / m,
          100.0 * (p - 1) / (m + p - 1),
          p > 1 ? ("; " + mib(o.sp ? message / static_cast<std::size_t>(o.tp) : message) + " per message between stages")
                      .c_str()
                : "");
      for (int st = 0; st < p; ++st) {
        const ct::Stage sg = ct::pipeline_stage(config, p, st);
        const std::size_t r0 = static_cast<std::size_t>(st) * static_cast<std::size_t>(ranks / p);  // tp 0, dp 0
        const std::uint64_t* x = mems.data() + 5 * r0;
        const ct::MemoryReport stage_mem{x[0], x[1], x[2], x[3], x[4]};
        std::printf("  stage %d: layers %d-%d%s%s (ranks %zu-%zu); memory per rank: %s\n", st, sg.first_layer,
                    sg.first_layer + sg.layers - 1, sg.first() ? ", embeddings" : "",
                    sg.last() ? ", head (tied wte)" : "", r0, r0 + static_cast<std::size_t>(ranks / p) - 1,
                    memory_text(stage_mem).c_str());
      }
    }
    if (o.tp > 1)
      std::printf(
          "tensor parallel: groups of %d consecutive ranks (%d of the %d heads each) x %d data-parallel ranks; %s "
          "(%s) of %s (batch %d) per layer and micro-batch, besides the encoder's and the head's (first and last "
          "stage)\n",
          o.tp, config.heads / o.tp, config.heads, dp_ranks,
          o.sp ? "sequence parallel: 4 reduce-scatters and 4 allgathers" : "4 allreduces",
          (o.dp.tp_algo.empty() ? o.dp.algo : o.dp.tp_algo).c_str(), mib(message).c_str(),
          loader.local_batch() / o.micro_batches);
    if (cuda && o.pp > 1)
      std::printf("pipeline messages on CUDA: staged through pinned host memory over MPI\n");
    std::printf("data parallel: %s over '%s'%s%s; memory per rank: %s\n", std::string(ct::to_string(o.dp.mode)).c_str(),
                o.dp.algo.c_str(), cuda && o.dp.algo != "nccl" ? (" (" + o.transport + " transport)").c_str() : "",
                o.dp.mode == ct::DpMode::kDdp ? (", buckets of " + mib(o.dp.bucket_bytes)).c_str() : "",
                memory_text(mem).c_str());
    std::printf("GEMM here: %.1f GFLOP/s per rank (%s)\n", gemm, gemm_what.c_str());
    if (const std::string details = dp.compute_details(); !details.empty())
      std::printf("compute: %s\n", details.c_str());
    std::fflush(stdout);
  }

  auto validate = [&]() {
    ct::BatchLoader vl(val, o.batch, seq, dp_comm.rank(), dp_comm.size(), o.seed ^ 0x5eedu);
    std::vector<int> in(static_cast<std::size_t>(vl.local_batch()) * seq), tg(in.size());
    double sum = 0;
    for (int b = 0; b < o.val_batches; ++b) {
      vl.next(in.data(), tg.data());
      sum += dp.eval_loss(in.data(), tg.data());
    }
    return sum / o.val_batches;
  };

  // --- training
  std::unique_ptr<prof::Session> session;
  if (!o.profile.empty()) {
    prof::SessionOptions so;
    so.output = o.profile;
    // CUPTI on the GPU (kernels, NCCL, runtime records); the host tracer on the CPU.
    so.backend = cuda ? prof::BackendChoice::kCupti : prof::BackendChoice::kHost;
    for (int i = 0; i < argc; ++i) {
      if (i > 0) so.command_line += ' ';
      so.command_line += argv[i];
    }
    so.attributes = {{"tool", "commscope-train"},
                     {"model", o.model},
                     {"layers", std::to_string(config.layers)},
                     {"heads", std::to_string(config.heads)},
                     {"channels", std::to_string(config.channels)},
                     {"seq", std::to_string(seq)},
                     {"context", std::to_string(config.max_seq)},
                     {"vocab", std::to_string(config.vocab)},
                     {"padded_vocab", std::to_string(config.padded_vocab)},
                     {"global_batch", std::to_string(o.batch)},
                     {"dp", std::string(ct::to_string(o.dp.mode))},
                     {"tp", std::to_string(o.tp)},
                     {"sp", o.sp ? "1" : "0"},
                     {"pp", std::to_string(o.pp)},
                     {"micro_batches", std::to_string(o.micro_batches)},
                     {"schedule", o.schedule},
                     {"algo", o.dp.algo},
                     {"tp_algo", o.dp.tp_algo.empty() ? o.dp.algo : o.dp.tp_algo},
                     {"embedding_algo", o.dp.embedding_algo.empty() ? o.dp.algo : o.dp.embedding_algo},
                     {"threads", std::to_string(threads)},
                     // what the node's ranks share (commscope-report scaling's CPUs per rank)
                     {"node_cpus", std::to_string(std::thread::hardware_concurrency())},
                     {"device", o.device},
                     {"precision", cuda ? o.precision : std::string("fp32")},
                     {"gemm_gflops", std::to_string(gemm)}};
    session = std::make_unique<prof::Session>(world.mpi_comm(), so);
  }
  std::vector<int> inputs(static_cast<std::size_t>(loader.local_batch()) * seq), targets(inputs.size());
  // TP splits every GEMM, PP the layers (evenly, to first order).
  const double flops_rank = iteration_flops(config, loader.local_batch(), seq) / (o.tp * o.pp);
  double total_time = 0;
  int timed_steps = 0;
  float last_loss = 0;
  for (int s = 0; s < o.steps; ++s) {
    if (s == o.debug_kill_step && rank == o.debug_kill_rank) {
      // Fault tests: the others are waiting for this rank in the step's first collective by the
      // time it dies.
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::raise(SIGKILL);
    }
    const double t0 = timing::now_s();
    ct::TrainEngine::StepResult r;
    {
      prof::IterationScope iteration(static_cast<std::int32_t>(dp.step()));
      loader.next(inputs.data(), targets.data());
      r = dp.train_step(inputs.data(), targets.data());
    }
    const double dt = timing::now_s() - t0;
    last_loss = r.loss;
    if (s > 0) total_time += dt, ++timed_steps;  // the first step warms up
    if (s == 0 && rank == 0) {
      // What the memory line accounts for against what the process holds: the rest is the
      // libraries (MPI, OpenBLAS's buffers), the token data and the code.
      const std::size_t now = resident_bytes();
      std::printf("resident after step 1: %s (rank 0), %s more than at start; accounted above: %s; data %s\n",
                  mib(now).c_str(), mib(now > resident_at_start ? now - resident_at_start : 0).c_str(),
                  mib(mem.total()).c_str(), mib(data.size() * sizeof(std::uint16_t)).c_str());
      // The device's own count beside the plan: what the engine's allocations took (cudaMemGetInfo
      // before the first and after step 1: cuBLAS's, cuDNN's and NCCL's workspaces included).
      if (const std::size_t used = dp.device_bytes_measured(); used > 0)
        std::printf("device memory after step 1: %s taken (rank 0), planned %s above (%+.1f%%)\n", mib(used).c_str(),
                    mib(mem.total()).c_str(),
                    100.0 * (static_cast<double>(used) - static_cast<double>(mem.total())) /
                        static_cast<double>(mem.total()));
    }
    if (!std::isfinite(r.loss)) throw std::runtime_error("the loss is not finite at step " + std::to_string(dp.step()));
    if (rank == 0 && (s % o.log_every == 0 || s + 1 == o.steps)) {
      const double tokens = static_cast<double>(o.batch) * seq;
      const double gflops = flops_rank / dt / 1e9;
      std::printf(
          "step %5lld/%d | loss %.4f | lr %.2e | norm %.3f | %8.1f ms | %9.0f tok/s | %.2f GFLOP/s per rank "
          "(%s)\n",
          static_cast<long long>(dp.step()), o.steps + static_cast<int>(start_step), r.loss, r.lr, r.grad_norm,
          dt * 1e3, tokens / dt, gflops, of_gemm(gflops, gemm, 0).c_str());
      std::fflush(stdout);
    }
    if (o.val_every > 0 && (s + 1) % o.val_every == 0 && o.val_fraction > 0) {
      const double vloss = validate();
      if (rank == 0) std::printf("step %5lld validation loss %.4f\n", static_cast<long long>(dp.step()), vloss);
    }
  }
  if (session) {
    const prof::Profile p = session->finish();
    if (rank == 0) {
      std::printf("profile: %s%s; per iteration (mean over ranks and steps):", o.profile.c_str(),
                  session->written() ? "" : " NOT WRITTEN");
      const prof::StepSummary s = prof::summarize(p);
      std::printf(" %.2f ms = kernel %.2f + intra %.2f + inter %.2f + comm %.2f (wait %.2f)\n", s.window_ms,
                  s.kernel_ms, s.intra_ms, s.inter_ms, s.comm_ms, s.comm_wait_ms);
    }
  }
  if (o.val_fraction > 0 && o.steps > 0) {
    const double vloss = validate();
    if (rank == 0) std::printf("final: train loss %.4f, validation loss %.4f\n", last_loss, vloss);
  }
  if (rank == 0 && timed_steps > 0) {
    const double gflops = flops_rank * timed_steps / total_time / 1e9;
    std::printf("mean step %.1f ms (%d steps after the first), %.0f tok/s, %.2f GFLOP/s per rank (%s)",
                total_time / timed_steps * 1e3, timed_steps, o.batch * seq * timed_steps / total_time, gflops,
                of_gemm(gflops, gemm, 1).c_str());
    if (o.peak_tflops > 0)
      std::printf(", MFU %.1f%% of %.0f TFLOP/s", 100.0 * gflops / (o.peak_tflops * 1e3), o.peak_tflops);
    std::printf("\n");
  }

  // --- checkpoints and sampling (full buffers gathered on every rank: collective)
  if (!o.save_llmc.empty() || !o.save.empty() || o.sample > 0) {
    // The whole model: gathered over the DP group (ZeRO), then over the TP x PP ranks (their shards).
    auto whole = [&](std::vector<float> mine) {
      return grid ? ct::gather_model<float>(grid->mp, config, o.tp, tp_rank, stage, mine) : mine;
    };
    const std::vector<float> params = whole(dp.full_params());
    ct::TrainingState st;
    if (!o.save.empty()) {
      st.m = whole(dp.full_m());
      st.v = whole(dp.full_v());
    }
    if (rank == 0) {
      if (!o.save_llmc.empty()) {
        ct::write_llmc_model(o.save_llmc, config, params);
        std::printf("saved %s (llm.c fp32)\n", o.save_llmc.c_str());
      }
      if (!o.save.empty()) {
        st.config = config;
        st.step = dp.step();
        st.params = params;
        ct::write_training_checkpoint(o.save, st);
        std::printf("saved %s (step %lld)\n", o.save.c_str(), static_cast<long long>(st.step));
      }
      if (o.sample > 0) {
        const std::string text = ct::sample_text(config, seq, params, o.prompt, o.sample, o.temperature, o.seed);
        std::printf("sample:\n%s\n", text.c_str());
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  const int rank = world.rank();
  install_stop_handlers(rank);
  try {
    return run(argc, argv, world);
  } catch (const UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "commscope-train: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    // A failure on one rank (a transport error, a timeout, an I/O error) ends the job: the other
    // ranks may be waiting in a collective.
    std::fprintf(stderr, "commscope-train: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
