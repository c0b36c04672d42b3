// test_replay_order RECORDED REPLAY: whether the replay ran each rank's calls in their recorded
// order and place. Per played rank, the recorded calls the replay replays (profiler/calls.hpp's,
// those replay::classify takes) by start, as (iteration, name), against the replay's own calls by
// start. Exit 0 when the sequences are equal and some calls lay outside the iterations between
// two of them (what the check is for); else the first difference and exit 1. Exit 2: bad usage.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "commscope/formats/profile_file.hpp"
#include "commscope/profiler/calls.hpp"
#include "commscope/replay/plan.hpp"

namespace prof = commscope::profiler;
namespace rp = commscope::replay;

namespace {

using Call = std::pair<std::int32_t, std::string>;  // iteration, name

std::vector<Call> calls_of(const prof::Profile& p, int rank, bool only_replayed) {
  std::vector<const prof::Event*> comm;
  for (const prof::Event* e : prof::communication_calls(p.events.at(static_cast<std::size_t>(rank)))) {
    if (only_replayed && !rp::replayed_call(p.strings.at(e->name))) continue;
    comm.push_back(e);
  }
  std::stable_sort(comm.begin(), comm.end(),
                   [](const prof::Event* a, const prof::Event* b) { return a->start_ns < b->start_ns; });
  std::vector<Call> out;
  for (const prof::Event* e : comm) out.emplace_back(e->iteration, p.strings.at(e->name));
  return out;
}

std::string text(const std::vector<Call>& calls, std::size_t at) {
  if (at >= calls.size()) return "(none)";
  return calls[at].second + " in " +
         (calls[at].first < 0 ? std::string("no iteration") : "iteration " + std::to_string(calls[at].first));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test_replay_order RECORDED REPLAY\n");
    return 2;
  }
  try {
    const prof::Profile recorded = prof::read_profile(argv[1], true);
    const prof::Profile replay = prof::read_profile(argv[2], true);
    if (replay.meta.nranks != recorded.meta.nranks) {
      std::fprintf(stderr, "test_replay_order: the replay ran %d ranks of %d\n", replay.meta.nranks,
                   recorded.meta.nranks);
      return 1;
    }
    int between = 0;  // calls outside the iterations with an iteration before and after them
    for (int r = 0; r < recorded.meta.nranks; ++r) {
      const std::vector<Call> want = calls_of(recorded, r, true), got = calls_of(replay, r, false);
      for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i)
        if (i >= want.size() || i >= got.size() || want[i] != got[i]) {
          std::printf("test_replay_order: rank %d, call %zu: recorded %s, replayed %s\n", r, i, text(want, i).c_str(),
                      text(got, i).c_str());
          return 1;
        }
      for (std::size_t i = 1; i + 1 < want.size(); ++i)
        if (want[i].first < 0) {
          const bool before = std::any_of(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(i),
                                          [](const Call& c) { return c.first >= 0; });
          const bool after = std::any_of(want.begin() + static_cast<std::ptrdiff_t>(i), want.end(),
                                         [](const Call& c) { return c.first >= 0; });
          between += before && after;
        }
      std::printf("test_replay_order: rank %d: %zu calls in their recorded order\n", r, want.size());
    }
    if (between == 0) {
      std::printf("test_replay_order: no call outside the iterations between two of them: nothing checked\n");
      return 1;
    }
    std::printf("test_replay_order: OK (%d calls between iterations, outside them)\n", between);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_replay_order: %s\n", e.what());
    return 2;
  }
}
