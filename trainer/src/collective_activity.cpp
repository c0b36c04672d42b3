#include "commscope/trainer/collective_activity.hpp"

#include <array>
#include <cstdint>
#include <cstdio>

#include "commscope/profiler/recorder.hpp"

namespace commscope::trainer {
namespace {

namespace prof = commscope::profiler;

std::array<char, 160> collective_text(const char* collective, std::string_view algo, std::size_t bytes,
                                      const char* what) noexcept {
  std::array<char, 160> text{};
  std::snprintf(text.data(), text.size(), "%s (%.*s, %.3g MiB, %s)", collective, static_cast<int>(algo.size()),
                algo.data(), static_cast<double>(bytes) / (1024.0 * 1024.0), what);
  return text;
}

}  // namespace

CollectiveActivity::CollectiveActivity(const char* collective, std::string_view algo, std::size_t bytes,
                                       const char* what) noexcept
    : ActivityMarker(collective_text(collective, algo, bytes, what).data()) {}

double sum_over_ranks(Communicator& comm, const DataParallelNames& names, double local, const char* what) {
  CollectiveActivity activity("allreduce", "mpi", sizeof(double), what);
  double sum = 0;
  prof::CommScope c(names.allreduce, names.mpi, static_cast<std::int64_t>(sizeof(double)));
  comm.allreduce(&local, &sum, 1, DataType::f64, ReduceOp::sum, "mpi");
  return sum;
}

}  // namespace commscope::trainer
