#include "setup.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <tuple>

#include "commscope/profiler/session.hpp"
#include "commscope/trainer/checkpoint.hpp"

namespace commscope::trainer {
namespace {

namespace prof = commscope::profiler;

std::string default_corpus() {
  for (const std::string& candidate :
       {std::string("data/kjv.txt"), std::string(COMMSCOPE_SOURCE_DIR) + "/data/kjv.txt"})
    if (std::filesystem::exists(candidate)) return candidate;
  throw UsageError("no training text: run scripts/get-corpus.sh (writes data/kjv.txt) or pass --data FILE");
}

}  // namespace

profiler::RunDescription describe_run(const TrainOptions& o, const RunSetup& setup, int threads, double gemm_gflops) {
  const ModelConfig& c = setup.config;
  profiler::RunDescription d;
  d.tool = "commscope-train";
  d.model = o.model;
  d.layers = c.layers, d.heads = c.heads, d.channels = c.channels;
  d.seq = setup.seq, d.context = c.max_seq, d.vocab = c.vocab, d.padded_vocab = c.padded_vocab;
  d.global_batch = o.batch;
  d.dp = std::string(to_string(o.parallel.dp_mode));
  d.tp = o.parallel.tp, d.sp = o.parallel.sp, d.pp = o.parallel.pp, d.micro_batches = o.parallel.micro_batches;
  d.schedule = o.parallel.schedule();
  d.algo = o.parallel.algo;
  d.tp_algo = o.parallel.tp_algorithm();
  d.embedding_algo = o.parallel.embedding_algorithm();
  d.threads = threads;
  d.node_cpus = static_cast<int>(std::thread::hardware_concurrency());  // what the node's ranks share
  d.device = o.device;
  d.precision = o.device == "cuda" ? o.precision : std::string("fp32");
  d.gemm_gflops = gemm_gflops;
  return d;
}

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

namespace {

// --layers, --heads and --dim over a model's shape (0: left as it is).
void apply_shape_flags(const TrainOptions& o, ModelConfig& c) {
  if (o.layers) c.layers = o.layers;
  if (o.heads) c.heads = o.heads;
  if (o.dim) c.channels = o.dim;
}

// The shape flags given beside a model file (--load, --load-llmc): the file gives the model, and
// a flag that names another one is refused rather than left unread ("" where all agree).
std::string loaded_shape_problem(const TrainOptions& o, const ModelConfig& file, const std::string& path) {
  ModelConfig wanted = file;
  std::string flags;
  auto flag = [&flags](const std::string& text) { flags += (flags.empty() ? "" : " ") + text; };
  if (o.model_named) {
    const ModelConfig p = preset(o.model);
    wanted.layers = p.layers, wanted.heads = p.heads, wanted.channels = p.channels, wanted.vocab = p.vocab;
    flag("--model " + o.model);
  }
  apply_shape_flags(o, wanted);
  for (const auto& [name, value] : {std::pair{"--layers", o.layers}, {"--heads", o.heads}, {"--dim", o.dim}})
    if (value) flag(std::string(name) + " " + std::to_string(value));
  auto shape = [](const ModelConfig& c) {
    return std::to_string(c.layers) + " layers, " + std::to_string(c.heads) + " heads, " + std::to_string(c.channels) +
           " channels, vocabulary " + std::to_string(c.vocab);
  };
  if (wanted.layers == file.layers && wanted.heads == file.heads && wanted.channels == file.channels &&
      wanted.vocab == file.vocab)
    return "";
  return flags + " (" + shape(wanted) + ") is not the model in " + path + " (" + shape(file) +
         "): the file gives the model; leave the flag out";
}

}  // namespace

RunSetup prepare_run(const TrainOptions& o, int ranks) {
  RunSetup r;
  // --- model configuration
  ModelConfig& config = r.config;
  try {
    if (!o.load_llmc.empty()) {
      ModelFile f = read_llmc_model(o.load_llmc);
      config = f.config;
      if (std::string p = loaded_shape_problem(o, config, o.load_llmc); !p.empty()) throw UsageError(p);
      r.start_params = std::move(f.params);
    } else if (!o.load.empty()) {
      TrainingState st = read_training_checkpoint(o.load);
      config = st.config;
      if (std::string p = loaded_shape_problem(o, config, o.load); !p.empty()) throw UsageError(p);
      r.start_params = std::move(st.params);
      r.start_m = std::move(st.m);
      r.start_v = std::move(st.v);
      r.start_step = st.step;
    } else {
      config = preset(o.model);
      apply_shape_flags(o, config);
      if (o.seq) config.max_seq = std::max(config.max_seq, o.seq);
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const CheckpointError& e) {
    throw UsageError(e.what());
  }
  if (const std::string p = config.problem(); !p.empty()) throw UsageError(p);
  const int seq = r.seq = o.seq ? o.seq : config.max_seq;
  if (seq > config.max_seq)
    throw UsageError("--seq " + std::to_string(seq) + " exceeds the model's context " + std::to_string(config.max_seq));
  // --- the PP x DP x TP grid (TP innermost, PP outermost)
  const ParallelPlan& plan = o.parallel;
  if (const std::string p = config.tensor_parallel_problem(plan.tp); !p.empty())
    throw UsageError("--tp " + std::to_string(plan.tp) + ": " + p);
  if (plan.pp > config.layers)
    throw UsageError("--pp " + std::to_string(plan.pp) + ": the model has " + std::to_string(config.layers) +
                     " layers (a stage needs one at least)");
  if (ranks % (plan.tp * plan.pp) != 0) {
    // In launcher terms: which -np values work, and what this run got.
    const std::string g = std::to_string(plan.tp * plan.pp);
    throw UsageError("--tp " + std::to_string(plan.tp) + " x --pp " + std::to_string(plan.pp) +
                     " needs a multiple of " + g + " ranks (mpirun -np " + g + ", " +
                     std::to_string(2 * plan.tp * plan.pp) + ", ...); this run has " + std::to_string(ranks));
  }
  const int dp_ranks = r.dp_ranks = ranks / (plan.tp * plan.pp);
  if (o.batch % dp_ranks != 0)
    throw UsageError("--batch " + std::to_string(o.batch) + " is not a multiple of the " + std::to_string(dp_ranks) +
                     (plan.tp * plan.pp > 1 ? " data-parallel ranks" : " ranks"));
  if (o.batch / dp_ranks % plan.micro_batches != 0)
    throw UsageError("--micro-batches " + std::to_string(plan.micro_batches) + " does not divide the " +
                     std::to_string(o.batch / dp_ranks) + " sequences of a data-parallel rank's batch");
  if (plan.sp && o.batch / dp_ranks / plan.micro_batches * seq % plan.tp != 0)
    throw UsageError("--sp: --tp " + std::to_string(plan.tp) + " does not divide the " +
                     std::to_string(o.batch / dp_ranks / plan.micro_batches * seq) +
                     " positions of a micro-batch (batch x seq per data-parallel rank and micro-batch)");
  for (const std::string* path : {&o.profile, &o.save_llmc, &o.save})
    if (!path->empty())
      if (const std::string p = prof::output_problem(*path); !p.empty()) throw UsageError(p);

  // --- data
  TokenDataset& data = r.data;
  const std::string& data_path = r.data_path = o.data.empty() ? default_corpus() : o.data;
  try {
    data = TokenDataset::load(data_path);
  } catch (const DataError& e) {
    throw UsageError(e.what());
  }
  if (data.max_token() >= config.vocab) {
    std::string message = data_path;
    message += ": holds token " + std::to_string(data.max_token()) + ", outside the model's vocabulary of " +
               std::to_string(config.vocab);
    const std::string& model_file = !o.load.empty() ? o.load : o.load_llmc;
    if (!model_file.empty()) message += " (the model read from " + model_file + ")";
    throw UsageError(message);
  }
  std::tie(r.train, r.val) = data.split(o.val_fraction);
  const TokenDataset &train = r.train, &val = r.val;
  if (train.size() < static_cast<std::size_t>(seq) + 1 ||
      (o.val_fraction > 0 && val.size() < static_cast<std::size_t>(seq) + 1)) {
    std::string message = data_path;
    message += ": too short for --seq " + std::to_string(seq) + " (" + std::to_string(data.size()) + " tokens)";
    throw UsageError(message);
  }
  return r;
}

}  // namespace commscope::trainer
