// Writes the profiles commscope-replay must refuse (replay/tests/CMakeLists.txt): DIR/no_comm.h5,
// 2 ranks that computed and never communicated; DIR/lost_group.h5, 2 ranks whose collective ran
// on "tp[0,5]", a group with a rank the profile does not have; DIR/truncated.h5, its first
// half; DIR/two_ranks.h5, a good profile of 2 ranks and one allreduce (for bad command lines);
// DIR/swapped_messages.h5, a good one whose receives matched rank 0's two messages out of order.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "commscope/profiler/profile_file.hpp"

namespace prof = commscope::profiler;

namespace {

// communicator: "" none; else the label its one allreduce ran on ("-": the profiled communicator).
prof::Profile two_ranks(const std::string& communicator) {
  const bool communicate = !communicator.empty();
  prof::Profile p;
  p.meta.version = "test";
  p.meta.nranks = 2;
  p.meta.events_layout = "single";
  p.strings = {"", "iteration", "matmul", "tp.allreduce", communicator == "-" ? "unused" : communicator};
  p.events.resize(2);
  for (int r = 0; r < 2; ++r) {
    prof::RankInfo info;
    info.rank = r;
    info.host = "test";
    info.backend = "host";
    prof::Event it;
    it.kind = prof::EventKind::kIteration, it.name = 1, it.iteration = 0, it.start_ns = 0, it.end_ns = 1000;
    prof::Event k;
    k.kind = prof::EventKind::kKernel, k.name = 2, k.iteration = 0, k.start_ns = 100, k.end_ns = 400;
    auto& ev = p.events[static_cast<std::size_t>(r)];
    ev = {it, k};
    if (communicate) {
      prof::Event c;
      c.kind = prof::EventKind::kCommunication, c.name = 3, c.communicator = communicator == "-" ? 0u : 4u,
      c.iteration = 0, c.bytes = 64;
      c.start_ns = 500, c.end_ns = 600, c.seq = 0;
      ev.push_back(c);
    }
    info.events = static_cast<std::int64_t>(ev.size());
    p.ranks.push_back(info);
    prof::BreakdownRow row;
    row.rank = r, row.window_ns = 1000, row.kernel_ns = 300, row.inter_ns = communicate ? 600 : 700;
    row.comm_ns = communicate ? 100 : 0, row.comm_transfer_ns = row.comm_ns, row.identity_ok = 1;
    p.breakdown.push_back(row);
  }
  return p;
}

// Rank 0 sent 4 KiB, then 8 B; rank 1 received the 8 B first (as a program's tags allow), then
// the 4 KiB: the replay, matching one tag in order, must not truncate the 4 KiB.
prof::Profile swapped_messages() {
  prof::Profile p = two_ranks("");
  p.strings.push_back("MPI_Send");  // 5
  p.strings.push_back("MPI_Recv");  // 6
  p.strings.push_back("mpi[0>1]");  // 7
  const auto message = [](std::uint32_t name, std::int64_t bytes, std::int64_t start) {
    prof::Event c;
    c.kind = prof::EventKind::kCommunication, c.name = name, c.communicator = 7, c.iteration = 0, c.bytes = bytes;
    c.start_ns = start, c.end_ns = start + 50;
    return c;
  };
  p.events[0].push_back(message(5, 4096, 500));
  p.events[0].push_back(message(5, 8, 600));
  p.events[1].push_back(message(6, 8, 500));
  p.events[1].push_back(message(6, 4096, 600));
  for (int r = 0; r < 2; ++r) p.ranks[static_cast<std::size_t>(r)].events = 4;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: test_replay_bad_profiles DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  prof::write_profile_file(two_ranks(""), dir + "/no_comm.h5");
  prof::write_profile_file(two_ranks("tp[0,5]"), dir + "/lost_group.h5");
  prof::write_profile_file(two_ranks("-"), dir + "/two_ranks.h5");
  prof::write_profile_file(swapped_messages(), dir + "/swapped_messages.h5");
  std::ifstream in(dir + "/lost_group.h5", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/truncated.h5", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  return 0;
}
