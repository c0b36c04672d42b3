#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/trainer/train_options.hpp"

namespace commscope::trainer {
namespace {

// CLI11's PositiveNumber and NonNegativeNumber say "Value -1 not in range 0.000000 to " and the
// 309 digits of DBL_MAX; these say what is wanted: "--lr: must be positive (got -1)".
CLI::Validator number_at_least_zero(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "'" + text + "' is not a number";
        if (zero_allowed ? v >= 0 : v > 0) return "";
        return std::string(zero_allowed ? "must be 0 or more" : "must be positive") + " (got " + text + ")";
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}
const CLI::Validator kPositive = number_at_least_zero(false);
const CLI::Validator kNonNegative = number_at_least_zero(true);

// The collectives library's algorithms (its registry) and NCCL's (the CUDA engine's), as --algo
// takes them.
std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const Algorithm* a : algorithms()) names.emplace_back(a->name());
  names.emplace_back("nccl");
  return names;
}

// --algo ALGO, or per group (dp=ring,tp=shm,embedding=mpi), into o.parallel; "" or what is wrong.
std::string parse_group_algorithms(const std::string& algo, TrainOptions& o) {
  const std::vector<std::string> known = algorithm_names();
  for (std::size_t at = 0; !algo.empty() && at <= algo.size();) {
    const std::size_t comma = std::min(algo.find(',', at), algo.size());
    const std::string item = algo.substr(at, comma - at);
    at = comma + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos && algo.find('=') != std::string::npos)
      return "--algo " + algo + ": name every group (dp=ALGO,tp=ALGO,embedding=ALGO)";
    const std::string group = eq == std::string::npos ? "dp" : item.substr(0, eq);
    const std::string name = eq == std::string::npos ? item : item.substr(eq + 1);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return "--algo: unknown algorithm '" + name + "' (" + list + ")";
    }
    ParallelPlan& p = o.parallel;
    std::string* slot = group == "dp"          ? &p.algo
                        : group == "tp"        ? &p.tp_algo
                        : group == "embedding" ? &p.embedding_algo
                                               : nullptr;
    if (slot == nullptr) return "--algo: unknown group '" + group + "' (dp, tp, embedding)";
    if (!slot->empty()) return "--algo: group " + group + " named twice";
    *slot = name;
  }
  return {};
}

// The groups' algorithms parsed and checked against the groups and the device; "" or what is
// wrong. The *_given: whether the command line named --precision, --transport, --attention.
std::string check_groups_and_device(TrainOptions& o, const std::string& algo, bool precision_given,
                                    bool transport_given, bool attention_given) {
  const bool cuda = o.device == "cuda";
  ParallelPlan& p = o.parallel;
  if (std::string problem = parse_group_algorithms(algo, o); !problem.empty()) return problem;
  if (!p.tp_algo.empty() && p.tp < 2) return "--algo tp=" + p.tp_algo + " needs --tp 2 or more";
  if (!p.embedding_algo.empty() && p.pp < 2) return "--algo embedding=" + p.embedding_algo + " needs --pp 2 or more";
  if (p.algo.empty()) p.algo = cuda ? (o.transport == "staged" ? "ring" : "nccl") : "mpi";
  if (!cuda && precision_given && o.precision != "fp32")
    return "--precision " + o.precision + " needs --device cuda (the CPU trains in fp32)";
  if (!cuda && transport_given) return "--transport applies to --device cuda only";
  if (!cuda && attention_given) return "--attention applies to --device cuda only";
  if (p.sp && p.tp < 2) return "--sp needs --tp 2 or more (it splits the TP group's rows)";
  if (p.sp && cuda) return "--sp needs --device cpu (sequence parallelism runs on the CPU only)";
  for (const std::string* group_algo : {&p.algo, &p.tp_algo, &p.embedding_algo}) {
    if (!cuda && *group_algo == "nccl")
      return "--algo nccl needs --device cuda (the CPU has mpi, ring, tree, rhd, shm, hier)";
    if (cuda && (*group_algo == "mpi" || *group_algo == "shm" || *group_algo == "hier"))
      return "--algo " + *group_algo +
             " with --device cuda would hand device pointers to the CPU; use nccl, or ring/tree/rhd";
    if (o.transport == "staged" && *group_algo == "nccl")
      return "--algo nccl needs --transport nccl (--transport staged runs ring, tree or rhd)";
  }
  return {};
}

// What a run writes and when: the profile, checkpoints, llm.c's model files, samples, the log.
void add_output_options(CLI::App& app, TrainOptions& o) {
  app.add_option("--profile", o.profile, "write the profile (HDF5) here");
  app.add_option("--profile-every", o.profile_every, "also write the --profile file, so far, every N steps (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  app.add_flag("--machine-probe", o.machine_probe,
               "detect the machine model at start-up as commscope-bench does (about 1-2 s, collective, before "
               "training) and record it in the --profile file, for commscope-report profile's expected times");
  app.add_option("--load-llmc", o.load_llmc, "start from an llm.c model file (fp32)");
  app.add_option("--save-llmc", o.save_llmc, "save the model in llm.c's format at the end");
  app.add_option("--load", o.load, "resume from a commscope training checkpoint");
  app.add_option("--save", o.save,
                 "save a training checkpoint (model, AdamW state, step) at the end, and at a stop (Ctrl-C, SIGTERM) "
                 "after the step in progress");
  app.add_option("--save-every", o.save_every, "also save the --save checkpoint every N steps (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--sample", o.sample, "generate N tokens after training")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--prompt", o.prompt, "prompt for --sample")->capture_default_str();
  app.add_option("--temperature", o.temperature, "sampling temperature")->capture_default_str()->check(kPositive);
  app.add_option("--log-every", o.log_every, "print a step line every N steps")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
}

// --save-every and --profile-every against the files they write; "" or what is wrong.
std::string check_periodic_outputs(const TrainOptions& o) {
  if (o.save_every > 0 && o.save.empty()) return "--save-every needs --save FILE";
  if (o.profile_every > 0 && o.profile.empty()) return "--profile-every needs --profile FILE";
  if (o.machine_probe && o.profile.empty()) return "--machine-probe needs --profile FILE (the model is recorded there)";
  if (o.profile_every > 0 && o.device == "cuda")
    return "--profile-every needs --device cpu (CUPTI's records are read when the run ends)";
  return {};
}

}  // namespace

TrainParse parse_train_options(int argc, char** argv) {
  TrainParse r;
  TrainOptions& o = r.options;
  ParallelPlan& plan = o.parallel;
  std::string dp = "ddp", algo, schedule = "1f1b";
  double bucket_mb = 25;
  plan.algo.clear();  // chosen after parsing, by device
  CLI::App app{
      "commscope-train: a GPT-2 trained in parallel (DP x TP x PP, SP) over the collectives library, profiled.",
      "commscope-train"};
  app.add_option("--model", o.model, "preset: tiny, small (6 layers, 6 heads, 384 dims, context 256), gpt2-124m")
      ->capture_default_str();
  app.add_option("--layers", o.layers, "override the preset's layers")->check(CLI::Range(1, 1024));
  app.add_option("--heads", o.heads, "override the preset's heads")->check(CLI::Range(1, 1024));
  app.add_option("--dim", o.dim, "override the preset's channels")->check(CLI::Range(1, 65536));
  app.add_option("--seq", o.seq, "training sequence length (default: the preset's context)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--batch", o.batch, "global batch in sequences (a multiple of the rank count)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--steps", o.steps, "training steps")->capture_default_str()->check(CLI::Range(0, 1 << 30));
  app.add_option("--lr", o.adamw.lr, "peak learning rate")->capture_default_str()->check(kPositive);
  app.add_option("--warmup", o.adamw.warmup_steps, "linear warm-up steps")->capture_default_str()->check(kNonNegative);
  app.add_option("--weight-decay", o.adamw.weight_decay, "AdamW weight decay (matrices only)")
      ->capture_default_str()
      ->check(kNonNegative);
  app.add_option("--grad-clip", o.adamw.grad_clip, "global gradient-norm clip; 0: none")
      ->capture_default_str()
      ->check(kNonNegative);
  app.add_option("--seed", o.seed, "initialisation and data seed")->capture_default_str();
  app.add_option("--threads", o.threads, "threads per rank (0: the node's cores shared among its ranks)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  app.add_option("--data", o.data, "text file (byte tokens; no NUL bytes) or llm.c token shard; default data/kjv.txt");
  app.add_option("--val-fraction", o.val_fraction, "share of the data held out for validation")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  app.add_option("--val-every", o.val_every, "validation loss every N steps (0: at the end only)")
      ->capture_default_str()
      ->check(kNonNegative);
  app.add_option("--val-batches", o.val_batches, "batches per validation")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--dp", dp, "data parallelism: ddp, zero1, zero2, zero3")
      ->capture_default_str()
      ->check(CLI::IsMember({"ddp", "zero1", "zero2", "zero3"}));
  app.add_option("--tp", plan.tp,
                 "tensor-parallel ranks (Megatron-style split of the attention heads and the MLP): the ranks "
                 "form a DP x TP grid, TP innermost (consecutive ranks)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--pp", plan.pp,
                 "pipeline stages (the layers split into consecutive stages, activations and their gradients sent "
                 "between neighbours; on CUDA through host memory): the ranks form a PP x DP x TP grid, PP outermost")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--micro-batches", plan.micro_batches,
                 "micro-batches per step: each rank's batch runs as this many, their gradients accumulated (the "
                 "pipeline's m; bubble (p-1)/(m+p-1))")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_flag("--sp", plan.sp,
               "sequence parallelism over the TP group (Megatron-LM's; the CPU): the residual stream's rows split "
               "over the TP ranks, reduce-scatters and allgathers instead of the TP allreduces");
  app.add_option("--schedule", schedule, "pipeline schedule: 1f1b (PipeDream-Flush) or gpipe")
      ->capture_default_str()
      ->check(CLI::IsMember({"1f1b", "gpipe"}));
  app.add_option("--algo", algo,
                 "collective algorithm: mpi, ring, tree, rhd, shm (one node), hier (node-aware); nccl (--device cuda). "
                 "Default: mpi on the CPU, nccl on CUDA (ring with --transport staged). Per group: "
                 "dp=ALGO,tp=ALGO,embedding=ALGO (a group not named takes dp's)");
  app.add_option("--device", o.device,
                 "where the model runs: cpu, or cuda (one GPU per rank, the node's ranks "
                 "taking the visible GPUs in turn)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto* precision = app.add_option("--precision", o.precision,
                                   "fp32, or bf16 (--device cuda: bf16 parameters, gradients and activations, fp32 "
                                   "master weights and AdamW)")
                        ->capture_default_str()
                        ->check(CLI::IsMember({"fp32", "bf16"}));
  auto* transport = app.add_option("--transport", o.transport,
                                   "--device cuda with ring/tree/rhd: nccl (NCCL point-to-point, a GPU per rank) or "
                                   "staged (MPI through pinned host memory; ranks may share a GPU)")
                        ->capture_default_str()
                        ->check(CLI::IsMember({"nccl", "staged"}));
  auto* attention =
      app.add_option(
             "--attention", o.attention,
             "--device cuda: how attention runs: cudnn (cuDNN's fused flash attention), flash (ours), naive "
             "(the T x T scores in memory), or auto (the faster of cudnn and flash, timed at start on this GPU and "
             "shape, where both run; flash where cuDNN cannot; naive where neither can: fp32, a head size "
             "other than 64)")
          ->capture_default_str()
          ->check(CLI::IsMember({"auto", "cudnn", "flash", "naive"}));
  app.add_option("--peak-tflops", o.peak_tflops,
                 "the device's peak TFLOP/s in the training precision, for MFU (e.g. 989 for an H100 SXM in bf16)")
      ->check(kNonNegative);
  app.add_option("--gemm-gflops", o.gemm_gflops,
                 "the reference GEMM rate per rank for \"% of GEMM\" (GFLOP/s; default: measured at start, the best "
                 "of 7 GEMMs after a warm-up, about 0.5 s of the start)")
      ->envname("COMMSCOPE_GEMM_GFLOPS")
      ->check(kPositive);
  app.add_option("--bucket-mb", bucket_mb, "DDP gradient bucket size (MiB)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  add_output_options(app, o);
  app.add_option("--debug-kill-rank", o.debug_kill_rank)->group("");
  app.add_option("--debug-kill-step", o.debug_kill_step)->group("");
  app.add_option("--debug-stall-step", o.debug_stall_step)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    r.exit_code = 0;
    r.message = app.help();
    return r;
  } catch (const CLI::ParseError& e) {
    r.exit_code = 2;
    r.message = std::string("commscope-train: ") + e.what() + " (see --help)";
    return r;
  }
  auto usage = [&](std::string message) {
    r.exit_code = 2;
    r.message = "commscope-train: " + message;
    return r;
  };
  if (std::string problem =
          check_groups_and_device(o, algo, precision->count() > 0, transport->count() > 0, attention->count() > 0);
      !problem.empty())
    return usage(std::move(problem));
  if (std::string problem = check_periodic_outputs(o); !problem.empty()) return usage(std::move(problem));
  if (!o.load.empty() && !o.load_llmc.empty()) return usage("--load and --load-llmc both give the model: give one");
  o.model_named = app.count("--model") > 0;
  plan.dp_mode = parse_dp_mode(dp);
  plan.gpipe = schedule == "gpipe";
  plan.bucket_bytes = static_cast<std::size_t>(bucket_mb * 1024 * 1024);
  o.adamw.total_steps = o.steps;
  return r;
}

}  // namespace commscope::trainer
