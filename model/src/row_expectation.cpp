#include "commscope/model/row_expectation.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "commscope/common/trim.hpp"

namespace commscope {

NcclAlgorithm nccl_algorithm(std::string_view text) {
  text = trimmed(text);
  NcclAlgorithm a;
  // A list ("Ring,Tree"), an exclusion ("^NVLS") or per-collective lists ("allreduce:tree;...")
  // leave NCCL a choice among several: priced as without NCCL_ALGO.
  if (text.empty() || text.find_first_of(",^:;") != std::string_view::npos) return a;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  a.basis = "NCCL_ALGO=" + std::string(text);
  if (lower == "ring" || lower == "tree")
    a.priced = lower;
  else
    a.missing = "a cost model of " + a.basis + " (priced: Ring, Tree)";
  return a;
}

ExpectationOptions run_expectation_options(std::optional<double> segment_bytes, std::optional<double> shm_adapt_bytes,
                                           std::optional<double> blocking) {
  ExpectationOptions o;
  o.calls_overlap = !blocking || *blocking == 0 || *blocking == 2;
  if (segment_bytes && *segment_bytes > 0) o.ring_segment_bytes = *segment_bytes;
  // UINT64_MAX (1.8e19) and SIZE_MAX mean never; no run adapts from an exabyte.
  if (shm_adapt_bytes && *shm_adapt_bytes >= 0)
    o.shm_adapt_bytes = *shm_adapt_bytes >= 1e18 ? std::numeric_limits<double>::infinity() : *shm_adapt_bytes;
  return o;
}

Expectation expected_row(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                         std::string_view algorithm, double bytes, std::string_view nccl_algo,
                         const ExpectationOptions& options) {
  // One rank copies whatever NCCL_ALGO says: expected_time's one copy.
  const NcclAlgorithm chosen =
      algorithm == "nccl" && node_of_rank.size() > 1 ? nccl_algorithm(nccl_algo) : NcclAlgorithm{};
  if (chosen.basis.empty()) return expected_time(model, node_of_rank, c, algorithm, bytes, options);
  if (!chosen.missing.empty()) {
    Expectation e;
    e.basis = chosen.basis;
    e.missing.push_back(chosen.missing);
    return e;
  }
  // NCCL runs only allreduce as a tree (pipelined: "nccl_tree"); under Tree the others run as
  // the ring, which the basis and the limit's detail (the verdict's words) say.
  std::string algorithm_run = chosen.priced, fallback;
  if (chosen.priced == "tree" && c == Collective::allreduce) {
    algorithm_run = "nccl_tree";
  } else if (chosen.priced == "tree") {
    algorithm_run = "ring";
    fallback = "NCCL runs only allreduce as a tree; " + std::string(collective_name(c)) + " falls back to ring";
  }
  Expectation e = expected_time(model, node_of_rank, c, algorithm_run, bytes, options);
  e.basis = chosen.basis + ": " + e.basis + (fallback.empty() ? "" : " (" + fallback + ")");
  if (!fallback.empty() && e.limit.level != LinkLevel::none)
    e.limit.detail += (e.limit.detail.empty() ? "" : "; ") + fallback;
  return e;
}

std::optional<double> of_expected(const Expectation& e, double measured_time_us) {
  if (!e.time_us || !(*e.time_us > 0) || !(measured_time_us > 0)) return std::nullopt;
  return *e.time_us / measured_time_us;
}

}  // namespace commscope
