#include "commscope/trainer/collective_activity.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstdio>

#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/profiler/vocabulary.hpp"

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

prof::CommGroup& profile_group(const Communicator& comm, std::string_view kind) {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(
        MPI_COMM_NULL_COPY_FN,
        [](MPI_Comm, int, void* group, void*) {
          delete static_cast<prof::CommGroup*>(group);
          return MPI_SUCCESS;
        },
        &k, nullptr);
    return k;
  }();
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm.mpi_comm(), keyval, &value, &found);
  if (found) return *static_cast<prof::CommGroup*>(value);
  auto* group = new prof::CommGroup(prof::communicator_label(kind, prof::world_ranks(comm.mpi_comm())));
  MPI_Comm_set_attr(comm.mpi_comm(), keyval, group);
  return *group;
}

}  // namespace commscope::trainer
