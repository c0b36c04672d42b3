// The trainer's run description <-> a profile's /meta/attributes (run_description.hpp).

#include "commscope/profiler/run_description.hpp"

#include <cstdlib>

namespace commscope::profiler {

namespace {

const std::string* find(const Attributes& a, const char* key) {
  for (const auto& [k, v] : a)
    if (k == key) return &v;
  return nullptr;
}

std::string text(const Attributes& a, const char* key) {
  const std::string* v = find(a, key);
  return v != nullptr ? *v : std::string();
}

int number(const Attributes& a, const char* key, int absent) {
  const std::string* v = find(a, key);
  return v == nullptr || v->empty() ? absent : std::atoi(v->c_str());
}

}  // namespace

int RunDescription::zero_stage() const {
  return dp.size() == 5 && dp.starts_with("zero") ? dp[4] - '0' : 0;
}

std::string RunDescription::workload() const {
  if (tool.empty()) return "an unnamed program";
  if (tool != "commscope-train") return tool;
  std::string s = tool + " --model " + model + " (";
  for (const auto& [k, v] : {std::pair<const char*, int>{"layers", layers},
                             {"channels", channels},
                             {"heads", heads},
                             {"vocab", vocab},
                             {"seq", seq}})
    s.append(k).append(" ").append(std::to_string(v)).append(", ");
  return s + device + ", " + precision + ")";
}

Attributes to_attributes(const RunDescription& d) {
  return {{"tool", d.tool},
          {"model", d.model},
          {"layers", std::to_string(d.layers)},
          {"heads", std::to_string(d.heads)},
          {"channels", std::to_string(d.channels)},
          {"seq", std::to_string(d.seq)},
          {"context", std::to_string(d.context)},
          {"vocab", std::to_string(d.vocab)},
          {"padded_vocab", std::to_string(d.padded_vocab)},
          {"global_batch", std::to_string(d.global_batch)},
          {"dp", d.dp},
          {"tp", std::to_string(d.tp)},
          {"sp", d.sp ? "1" : "0"},
          {"pp", std::to_string(d.pp)},
          {"micro_batches", std::to_string(d.micro_batches)},
          {"schedule", d.schedule},
          {"algo", d.algo},
          {"tp_algo", d.tp_algo},
          {"embedding_algo", d.embedding_algo},
          {"threads", std::to_string(d.threads)},
          {"node_cpus", std::to_string(d.node_cpus)},
          {"device", d.device},
          {"precision", d.precision},
          {"gemm_gflops", std::to_string(d.gemm_gflops)}};
}

RunDescription read_run_description(const Attributes& a) {
  RunDescription d;
  d.tool = text(a, "tool");
  if (d.tool.empty()) d.tool = text(a, "source");
  d.model = text(a, "model");
  d.layers = number(a, "layers", 0), d.heads = number(a, "heads", 0), d.channels = number(a, "channels", 0);
  d.seq = number(a, "seq", 0), d.context = number(a, "context", 0);
  d.vocab = number(a, "vocab", 0), d.padded_vocab = number(a, "padded_vocab", d.vocab);
  d.global_batch = number(a, "global_batch", 0);
  d.dp = text(a, "dp");
  d.tp = number(a, "tp", 1), d.pp = number(a, "pp", 1), d.micro_batches = number(a, "micro_batches", 1);
  d.sp = number(a, "sp", 0) != 0;
  d.schedule = text(a, "schedule");
  d.algo = text(a, "algo"), d.tp_algo = text(a, "tp_algo"), d.embedding_algo = text(a, "embedding_algo");
  d.threads = number(a, "threads", 1), d.node_cpus = number(a, "node_cpus", 0);
  d.device = text(a, "device"), d.precision = text(a, "precision");
  if (const std::string* g = find(a, "gemm_gflops")) d.gemm_gflops = std::atof(g->c_str());
  return d;
}

}  // namespace commscope::profiler
