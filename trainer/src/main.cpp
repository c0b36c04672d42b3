// commscope-train: a GPT-2 trained over the collectives library on the CPU or on CUDA GPUs, in
// data (DDP, ZeRO-1/2/3), tensor, sequence and pipeline parallelism, with the profiler's
// breakdown of every step.
//
//   mpirun -np 2 build/bin/commscope-train --model small --steps 20 --dp zero2 --algo ring --profile p.h5
//   mpirun -np 8 build/bin/commscope-train --device cuda --precision bf16 --model gpt2-124m --profile p.h5

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/model_flops.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "commscope/model/machine_model.hpp"
#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/flight_watch.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/trainer/checkpoint.hpp"
#include "commscope/trainer/cpu_engine.hpp"
#include "commscope/trainer/data.hpp"
#include "commscope/trainer/model.hpp"
#include "commscope/trainer/train_options.hpp"
#include "parallel/process_grid.hpp"
#include "parallel/tensor_parallel.hpp"
#include "run/banner.hpp"
#include "run/engine.hpp"
#include "run/sampling.hpp"
#include "run/setup.hpp"

namespace ct = commscope::trainer;
namespace prof = commscope::profiler;
namespace timing = commscope::timing;

namespace {

using ct::mib;
using ct::UsageError;
using ct::parallel::Placement;

// Whether a stop signal (Ctrl-C, SIGTERM: commscope/common/stop_signals.hpp) reached any rank, so
// that every rank leaves the loop after the same step: its number, 0 for none. Collective.
// Through the Communicator, so that the flight recorder counts it among world's calls.
int stop_agreed(commscope::Communicator& world) {
  std::int32_t mine = commscope::stop::requested(), any = 0;
  world.allreduce(&mine, &any, 1, commscope::DataType::i32, commscope::ReduceOp::max);
  return any;
}

// FLOPs of one training iteration (forward + backward) for `batch` sequences, the analysis'
// formula (commscope/common/model_flops.hpp), which leaves out the output head's 6 b s d V.
double iteration_flops(const ct::ModelConfig& c, int batch, int seq) {
  return commscope::transformer_flops(batch, seq, c.channels, c.layers);
}

// The node's cores shared among its ranks, unless --threads says.
int rank_threads(const ct::TrainOptions& o, const commscope::Communicator& world) {
  return o.threads > 0
             ? o.threads
             : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, world.local_size()));
}

// The start parameters of this rank: initialised when no checkpoint gave them (in a model of its
// own with activations for one token, so that the training model never allocates the whole
// parameter buffer when ZeRO-3 keeps only a shard), then cut to this rank's TP and PP shard.
void shard_start_state(const ct::TrainOptions& o, ct::RunSetup& setup, const Placement& at) {
  if (setup.start_params.empty()) {
    ct::Gpt2<float> initializer(setup.config, 1, 1);
    initializer.init(o.seed);
    setup.start_params.assign(initializer.params().begin(), initializer.params().end());
  }
  if (o.parallel.tp == 1 && o.parallel.pp == 1) return;
  for (std::vector<float>* full : {&setup.start_params, &setup.start_m, &setup.start_v})
    if (!full->empty())
      *full = ct::parallel::model_shard<float>(setup.config, o.parallel.tp, at.tp_rank, at.stage, *full);
}

// The mean validation loss over --val-batches batches of the DP group's share. Collective.
double validate(const ct::TrainOptions& o, const ct::RunSetup& setup, commscope::Communicator& dp_comm,
                ct::TrainEngine& engine) {
  ct::BatchLoader vl(setup.val, o.batch, setup.seq, dp_comm.rank(), dp_comm.size(), o.seed ^ 0x5eedu);
  std::vector<int> in(static_cast<std::size_t>(vl.local_batch()) * setup.seq), tg(in.size());
  double sum = 0;
  for (int b = 0; b < o.val_batches; ++b) {
    vl.next(in.data(), tg.data());
    sum += engine.eval_loss(in.data(), tg.data());
  }
  return sum / o.val_batches;
}

// --machine-probe: the machine model detected as commscope-bench detects it at start-up
// (commscope/machine/machine_detect.hpp: each node's system and copy rate, its rates by size with
// every rank of the node, the 8 B latency between nodes and between a node's first two ranks),
// collective over world, before training; nothing given, everything measured (commscope-report's
// --machine, --link-rate and --doctor complete it). Its text form (rank 0's) on every rank, for
// the profile's attributes; "" without the flag. Rank 0 prints what it took and the model.
std::string probe_machine(const ct::TrainOptions& o, commscope::Communicator& world) {
  if (!o.machine_probe) return {};
  constexpr double kProbeTimeout = 300;  // s, a rank that stops answering (the bench's -T default)
  const double t0 = timing::now_s();
  const commscope::MachineModel m = commscope::machine::detect_machine(world.mpi_comm(), o.device, kProbeTimeout);
  const double took = timing::now_s() - t0;
  std::string text = world.rank() == 0 ? commscope::to_text(m) : std::string();
  long long size = static_cast<long long>(text.size());
  COMMSCOPE_MPI_CHECK(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, world.mpi_comm()));
  text.resize(static_cast<std::size_t>(size));
  COMMSCOPE_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, world.mpi_comm()));
  if (world.rank() == 0) {
    std::printf("machine model: detected at start-up in %.2f s (--machine-probe), recorded in %s\n", took,
                o.profile.c_str());
    for (const std::string& line : commscope::machine::machine_lines(m)) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  return text;
}

// The profiler session of --profile (null without), the run's description in its attributes
// (and the machine model --machine-probe detected, as machine_model):
// CUPTI on the GPU (kernels, NCCL, runtime records), the host tracer on the CPU.
std::unique_ptr<prof::Session> start_profile(const ct::TrainOptions& o, int argc, char** argv,
                                             const prof::RunDescription& description, const std::string& machine_model,
                                             commscope::Communicator& world) {
  if (o.profile.empty()) return nullptr;
  prof::SessionOptions so;
  so.output = o.profile;
  so.backend = o.device == "cuda" ? prof::BackendChoice::kCupti : prof::BackendChoice::kHost;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) so.command_line += ' ';
    so.command_line += argv[i];
  }
  so.attributes = prof::to_attributes(description);
  if (!machine_model.empty()) so.attributes.emplace_back("machine_model", machine_model);
  // Written step by step: a stop keeps every step appended (Open MPI's mpirun SIGKILLs the ranks
  // about 1 s after forwarding a Ctrl-C, long before a CPU step of a larger model ends).
  so.stream = true;
  return std::make_unique<prof::Session>(world.mpi_comm(), so);
}

// The training steps and what they measured.
struct Trained {
  double total_time = 0;  // s, over the timed steps
  int timed_steps = 0;    // all but the first, which warms up
  float last_loss = 0;
  int stopped_by = 0;  // the stop signal that ended the loop early, 0 for none
};

struct StepLoop {
  const ct::TrainOptions& o;
  const ct::RunSetup& setup;
  ct::BatchLoader& loader;
  ct::TrainEngine& engine;
  commscope::Communicator& dp_comm;
  int rank;
  double gemm;                    // the reference rate per rank
  std::size_t accounted;          // bytes, the memory line's total
  std::size_t resident_at_start;  // bytes
  commscope::Communicator& world;
  std::function<void()> checkpoint;      // --save-every's (collective)
  std::function<void()> profile_step;    // --profile's append of the step (collective)
  std::function<void()> profile_so_far;  // --profile-every's (collective)
};

// After the first step: what the memory line accounts for against what the process holds (the
// rest is the libraries, MPI and OpenBLAS's buffers, the token data and the code).
void print_resident(const StepLoop& l) {
  const std::size_t now = ct::resident_bytes();
  std::printf("resident after step 1: %s (rank 0), %s more than at start; accounted above: %s; data %s\n",
              mib(now).c_str(), mib(now > l.resident_at_start ? now - l.resident_at_start : 0).c_str(),
              mib(l.accounted).c_str(), mib(l.setup.data.size() * sizeof(std::uint16_t)).c_str());
  // The device's own count beside the plan, taken apart: at set-up (the plan's buffers, the
  // libraries' handles, NCCL's communicators) and in step 1 (what loads and grows on first use).
  if (const ct::DeviceMemoryTaken taken = l.engine.device_memory_taken(); taken.total() > 0) {
    const std::size_t used = taken.total();
    std::printf(
        "device memory after step 1: %s taken (rank 0), planned %s above (%+.1f%%): %s at set-up, %s more in step "
        "1\n",
        mib(used).c_str(), mib(l.accounted).c_str(),
        100.0 * (static_cast<double>(used) - static_cast<double>(l.accounted)) / static_cast<double>(l.accounted),
        mib(taken.setup).c_str(), mib(taken.first_step).c_str());
  }
}

Trained train(const StepLoop& l) {
  const ct::TrainOptions& o = l.o;
  const int seq = l.setup.seq;
  std::vector<int> inputs(static_cast<std::size_t>(l.loader.local_batch()) * seq), targets(inputs.size());
  // TP splits every GEMM, PP the layers (evenly, to first order).
  const double flops_rank =
      iteration_flops(l.setup.config, l.loader.local_batch(), seq) / (o.parallel.tp * o.parallel.pp);
  Trained t;
  for (int s = 0; s < o.steps; ++s) {
    if (s == o.debug_kill_step && l.rank == o.debug_kill_rank) {
      // Fault tests: the others are waiting for this rank in the step's first collective by the
      // time it dies.
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::raise(SIGKILL);
    }
    const double t0 = timing::now_s();
    ct::TrainEngine::StepResult r;
    {
      prof::IterationScope iteration(static_cast<std::int32_t>(l.engine.step()));
      if (s == o.debug_stall_step) std::this_thread::sleep_for(std::chrono::seconds(60));
      l.loader.next(inputs.data(), targets.data());
      r = l.engine.train_step(inputs.data(), targets.data());
    }
    const double dt = timing::now_s() - t0;
    l.profile_step();  // on disk before its line is printed
    t.last_loss = r.loss;
    if (s > 0) t.total_time += dt, ++t.timed_steps;
    if (s == 0 && l.rank == 0) print_resident(l);
    if (!std::isfinite(r.loss))
      throw std::runtime_error("the loss is not finite at step " + std::to_string(l.engine.step()));
    if (l.rank == 0 && (s % o.log_every == 0 || s + 1 == o.steps)) {
      const double tokens = static_cast<double>(o.batch) * seq;
      const double gflops = flops_rank / dt / 1e9;
      std::printf(
          "step %5lld/%d | loss %.4f | lr %.2e | norm %.3f | %8.1f ms | %9.0f tok/s | %.2f GFLOP/s per rank "
          "(%s)\n",
          static_cast<long long>(l.engine.step()), o.steps + static_cast<int>(l.setup.start_step), r.loss, r.lr,
          r.grad_norm, dt * 1e3, tokens / dt, gflops, ct::of_gemm(gflops, l.gemm, 0).c_str());
      std::fflush(stdout);
    }
    if (o.val_every > 0 && (s + 1) % o.val_every == 0 && o.val_fraction > 0) {
      const double vloss = validate(o, l.setup, l.dp_comm, l.engine);
      if (l.rank == 0) std::printf("step %5lld validation loss %.4f\n", static_cast<long long>(l.engine.step()), vloss);
    }
    if ((t.stopped_by = stop_agreed(l.world)) != 0) break;
    if (o.save_every > 0 && (s + 1) % o.save_every == 0 && s + 1 < o.steps) l.checkpoint();
    if (o.profile_every > 0 && (s + 1) % o.profile_every == 0 && s + 1 < o.steps) l.profile_so_far();
  }
  return t;
}

// The profile written, its mean step printed (rank 0). Collective. After a stop the file holds the
// steps appended before the signal, which published it.
void finish_profile(prof::Session& session, const ct::TrainOptions& o, int rank, bool stopped) {
  const prof::Profile p = session.finish();
  if (rank != 0) return;
  std::printf("profile: %s%s", o.profile.c_str(), session.written() ? "" : " NOT WRITTEN");
  if (stopped && session.written())
    std::printf(" (%lld steps, those written before the stop)",
                static_cast<long long>(std::count_if(p.breakdown.begin(), p.breakdown.end(),
                                                     [](const prof::BreakdownRow& r) { return r.rank == 0; })));
  if (p.breakdown.empty()) {
    std::printf("; no steps\n");
    return;
  }
  std::printf("; per iteration (mean over ranks and steps):");
  const prof::StepSummary s = prof::summarize(p);
  std::printf(" %.2f ms = kernel %.2f + intra %.2f + inter %.2f + comm %.2f (wait %.2f)\n", s.window_ms, s.kernel_ms,
              s.intra_ms, s.inter_ms, s.comm_ms, s.comm_wait_ms);
}

// The mean step after the first (rank 0).
void print_mean_step(const StepLoop& l, const Trained& t) {
  const ct::TrainOptions& o = l.o;
  const double flops_rank =
      iteration_flops(l.setup.config, l.loader.local_batch(), l.setup.seq) / (o.parallel.tp * o.parallel.pp);
  const double gflops = flops_rank * t.timed_steps / t.total_time / 1e9;
  std::printf("mean step %.1f ms (%d steps after the first), %.0f tok/s, %.2f GFLOP/s per rank (%s)",
              t.total_time / t.timed_steps * 1e3, t.timed_steps, o.batch * l.setup.seq * t.timed_steps / t.total_time,
              gflops, ct::of_gemm(gflops, l.gemm, 1).c_str());
  if (o.peak_tflops > 0)
    std::printf(", MFU %.1f%% of %.0f TFLOP/s", 100.0 * gflops / (o.peak_tflops * 1e3), o.peak_tflops);
  std::printf("\n");
}

// Checkpoints and sampling: the whole model gathered over the DP group (ZeRO), then over the
// TP x PP ranks (their shards), on every rank (collective); rank 0 writes and samples. `all`
// false: the --save checkpoint alone (--save-every's).
void save_outputs(const ct::TrainOptions& o, const ct::RunSetup& setup, const Placement& at, ct::TrainEngine& engine,
                  int rank, bool all = true) {
  if (!all && o.save.empty()) return;
  if (o.save_llmc.empty() && o.save.empty() && o.sample <= 0) return;
  const ct::ModelConfig& config = setup.config;
  auto whole = [&](std::vector<float> mine) {
    return at.grid ? ct::parallel::gather_model<float>(at.grid->mp, config, o.parallel.tp, at.tp_rank, at.stage, mine)
                   : mine;
  };
  const std::vector<float> params = whole(engine.full_params());
  ct::TrainingState st;
  if (!o.save.empty()) {
    st.m = whole(engine.full_m());
    st.v = whole(engine.full_v());
  }
  if (rank != 0) return;
  if (all && !o.save_llmc.empty()) {
    ct::write_llmc_model(o.save_llmc, config, params);
    std::printf("saved %s (llm.c fp32)\n", o.save_llmc.c_str());
  }
  if (!o.save.empty()) {
    st.config = config;
    st.step = engine.step();
    st.params = params;
    ct::write_training_checkpoint(o.save, st);
    std::printf("saved %s (step %lld)\n", o.save.c_str(), static_cast<long long>(st.step));
  }
  if (all && o.sample > 0) {
    const std::string text = ct::sample_text(config, setup.seq, params, o.prompt, o.sample, o.temperature, o.seed);
    std::printf("sample:\n%s\n", text.c_str());
  }
}

int run(int argc, char** argv, commscope::Communicator& world) {
  const int rank = world.rank(), ranks = world.size();
  const std::size_t resident_at_start = ct::resident_bytes();
  const ct::TrainParse parsed = ct::parse_train_options(argc, argv);
  if (parsed.exit_code >= 0) {
    if (rank == 0) std::fprintf(parsed.exit_code ? stderr : stdout, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  const ct::TrainOptions& o = parsed.options;
  ct::RunSetup setup = ct::prepare_run(o, ranks);
  const int threads = rank_threads(o, world);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const Placement at = ct::parallel::place(o.parallel, setup.config, world);
  // The flight recorder (docs/hang.md): every group's calls; SIGUSR1 and COMMSCOPE_HANG_TIMEOUT
  // write where each rank is.
  if (prof::flight::start_tool("commscope-train", o.profile)) ct::parallel::watch_groups(at, world);
  ct::BatchLoader loader(setup.train, o.batch, setup.seq, at.dp_comm->rank(), at.dp_comm->size(), o.seed);
  loader.set_step(setup.start_step);

  shard_start_state(o, setup, at);
  ct::AdamWOptions adamw = o.adamw;
  adamw.total_steps = static_cast<int>(setup.start_step) + o.steps;  // a resumed run continues the schedule
  const ct::Engine chosen = ct::make_engine(o, setup.config, loader.local_batch(), setup.seq, adamw, world, *at.dp_comm,
                                            at.grid.get(), at.stage, threads);
  ct::TrainEngine& engine = *chosen.engine;
  engine.load(setup.start_params, setup.start_m, setup.start_v, setup.start_step);
  // The engine holds its own copies now: give these back (assigning {} would keep the capacity,
  // a whole fp32 model and, on resume, its two AdamW moments, resident all run).
  for (std::vector<float>* full : {&setup.start_params, &setup.start_m, &setup.start_v})
    std::vector<float>().swap(*full);

  const ct::MemoryReport mem = engine.memory();
  std::vector<ct::MemoryReport> by_rank = ct::gather_memory(mem, world);
  if (rank == 0)
    ct::print_banner(o, setup,
                     {ranks, threads, loader.local_batch(), mem, std::move(by_rank), chosen.gemm_gflops,
                      chosen.gemm_what, engine.compute_details()});

  const std::string machine_model = probe_machine(o, world);
  std::unique_ptr<prof::Session> session =
      start_profile(o, argc, argv, ct::describe_run(o, setup, threads, chosen.gemm_gflops), machine_model, world);
  const StepLoop loop{o,
                      setup,
                      loader,
                      engine,
                      *at.dp_comm,
                      rank,
                      chosen.gemm_gflops,
                      mem.total(),
                      resident_at_start,
                      world,
                      [&] { save_outputs(o, setup, at, engine, rank, false); },
                      [&] {
                        if (session) session->append_so_far();
                      },
                      [&] {
                        if (session && session->write_so_far() && rank == 0)
                          std::printf("profile: %s written (steps so far)\n", o.profile.c_str());
                      }};
  const Trained t = train(loop);
  if (session) finish_profile(*session, o, rank, t.stopped_by != 0);
  if (t.stopped_by) {  // the profile so far and the checkpoint of the last step, nothing else
    save_outputs(o, setup, at, engine, rank, false);
    if (rank == 0)
      std::printf("stopped by %s after step %lld\n",
                  t.stopped_by == SIGINT    ? "SIGINT"
                  : t.stopped_by == SIGTERM ? "SIGTERM"
                                            : "SIGHUP",
                  static_cast<long long>(engine.step()));
    return 128 + t.stopped_by;
  }
  if (o.val_fraction > 0 && o.steps > 0) {
    const double vloss = validate(o, setup, *at.dp_comm, engine);
    if (rank == 0) std::printf("final: train loss %.4f, validation loss %.4f\n", t.last_loss, vloss);
  }
  if (rank == 0 && t.timed_steps > 0) print_mean_step(loop, t);
  save_outputs(o, setup, at, engine, rank);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  commscope::Communicator world;
  const int rank = world.rank();
  commscope::stop::install("commscope-train", rank, commscope::stop::Mode::kRaiseFlag);
  try {
    return run(argc, argv, world);
  } catch (const UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "commscope-train: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    // Past the check before the run: the banner's memory line names this rank's buffers.
    std::fprintf(stderr,
                 "commscope-train: rank %d: out of memory (std::bad_alloc) after the run's memory check; the "
                 "memory line above names this rank's buffers\n",
                 rank);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  } catch (const std::exception& e) {
    // A failure on one rank (a transport error, a timeout, an I/O error) ends the job: the other
    // ranks may be waiting in a collective.
    std::fprintf(stderr, "commscope-train: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    (void)prof::flight::dump("error", e.what());  // where this rank failed, for commscope-report hang
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
