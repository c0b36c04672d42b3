// Writes the profiles commscope-replay must refuse (replay/tests/CMakeLists.txt): DIR/no_comm.h5,
// 2 ranks that computed and never communicated; DIR/lost_group.h5, 2 ranks whose collective ran
// on "tp[0,5]", a group with a rank the profile does not have; DIR/truncated.h5, its first
// half; DIR/two_ranks.h5, a good profile of 2 ranks and one allreduce (for bad command lines);
// DIR/swapped_messages.h5, a good one whose receives matched rank 0's two messages out of order.
// And two that cannot finish, for --timeout: DIR/crossed.h5, 2 ranks that ran their two
// communicators' allreduces in opposite orders; DIR/stuck.h5, rank 0's 4 MiB send of step 0
// received by rank 1 in step 1 (rank 0 completes it at step 0's end, rank 1 waits before step 1).
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "commscope/formats/profile_file.hpp"

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

// A profile of 2 ranks whose events `add(rank, events)` gives, named from `names` (ids from 1).
prof::Profile made_up(const std::vector<std::string>& names,
                      const std::function<void(int, std::vector<prof::Event>&)>& add) {
  prof::Profile p;
  p.meta.version = "test";
  p.meta.nranks = 2;
  p.meta.events_layout = "single";
  p.strings = {""};
  p.strings.insert(p.strings.end(), names.begin(), names.end());
  p.events.resize(2);
  for (int r = 0; r < 2; ++r) {
    add(r, p.events[static_cast<std::size_t>(r)]);
    prof::RankInfo info;
    info.rank = r, info.host = "test", info.backend = "host";
    info.events = static_cast<std::int64_t>(p.events[static_cast<std::size_t>(r)].size());
    p.ranks.push_back(info);
  }
  return p;
}

prof::Event event(prof::EventKind kind, std::uint32_t name, std::int32_t iteration, std::int64_t start,
                  std::int64_t end, std::uint32_t communicator = 0, std::int64_t bytes = 0, std::int64_t seq = -1) {
  prof::Event e;
  e.kind = kind, e.name = name, e.iteration = iteration, e.start_ns = start, e.end_ns = end;
  e.communicator = communicator, e.bytes = bytes, e.seq = seq;
  return e;
}

// Rank 0 ran a[0,1]'s allreduce, then b[0,1]'s; rank 1 the other way round: replayed, each waits
// in the one the other has not reached.
prof::Profile crossed() {
  using K = prof::EventKind;
  return made_up({"iteration", "allreduce", "a[0,1]", "b[0,1]"}, [](int r, std::vector<prof::Event>& ev) {
    ev.push_back(event(K::kIteration, 1, 0, 0, 1000));
    ev.push_back(event(K::kCommunication, 2, 0, 100, 200, r == 0 ? 3 : 4, 256, 0));
    ev.push_back(event(K::kCommunication, 2, 0, 300, 400, r == 0 ? 4 : 3, 256, 0));
  });
}

// Rank 0 sent 4 MiB in step 0 (posted: the trainer's send, completed at the step's end); rank 1
// received it in step 1. Replayed, rank 0 waits at step 0's end for the receive, rank 1 in the
// barrier before step 1.
prof::Profile stuck() {
  using K = prof::EventKind;
  return made_up({"iteration", "pp.send", "pp.recv", "pp[0>1]", "allreduce", "barrier", "c[1]"},
                 [](int r, std::vector<prof::Event>& ev) {
                   ev.push_back(event(K::kIteration, 1, 0, 0, 500));
                   ev.push_back(event(K::kIteration, 1, 1, 500, 2000));
                   if (r == 0) ev.push_back(event(K::kCommunication, 2, 0, 100, 110, 4, 4 << 20, 0));
                   if (r == 1) ev.push_back(event(K::kCommunication, 6, 0, 100, 110, 7, 0, 0));
                   if (r == 1) ev.push_back(event(K::kCommunication, 3, 1, 900, 950, 4, 4 << 20, 0));
                   ev.push_back(event(K::kCommunication, 5, 1, 1000, 1100, 0, 64, 0));
                 });
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
  prof::write_profile_file(crossed(), dir + "/crossed.h5");
  prof::write_profile_file(stuck(), dir + "/stuck.h5");
  std::ifstream in(dir + "/lost_group.h5", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/truncated.h5", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  return 0;
}
