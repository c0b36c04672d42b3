// The flight recorder's own cost per call (flight.hpp), without MPI: a slot posted and completed
// per call, against the two clock readings alone (the recorder's now(), which the library's
// wrappers read for their events anyway), and a nonblocking call's request tracked, checked and finished. The median of
// ROUNDS rounds of CALLS calls each, the three kinds interleaved. A benchmark, not a test: it prints.
//   bench_flight_cost [CALLS [ROUNDS]]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "commscope/profiler/clock.hpp"
#include "commscope/profiler/flight.hpp"
#include "commscope/profiler/recorder.hpp"

namespace fl = commscope::profiler::flight;
namespace pf = commscope::profiler;

namespace {

template <class F>
double ns_per_call(long calls, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) f(i);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         static_cast<double>(calls);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (calls < 10 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_flight_cost [CALLS >= 10 [ROUNDS >= 1]]\n");
    return 2;
  }
  (void)fl::start(0, 1, "/tmp/bench-flight-cost.h5", {"here"}, "bench_flight_cost", false);
  if (!fl::on()) {
    std::fprintf(stderr, "bench_flight_cost: the recorder is off (COMMSCOPE_FLIGHT_CALLS=0)\n");
    return 2;
  }
  const std::uint32_t op = pf::name_id("allreduce");
  volatile std::int64_t sink = 0;
  std::vector<double> clocks, recorded, requests;
  for (int r = 0; r < rounds; ++r) {
    clocks.push_back(ns_per_call(calls, [&](long) {
      const std::int64_t a = fl::now();
      sink = sink + a + fl::now();
    }));
    recorded.push_back(ns_per_call(calls, [&](long i) {
      const fl::Handle h = fl::posted(0, i, op, 8, -1, 0, fl::now());
      fl::completed(h, fl::now());
    }));
    requests.push_back(ns_per_call(calls / 10, [&](long i) {
      const fl::Handle h = fl::posted(0, i, op, 8, -1, 0, fl::now());
      fl::completed(h, fl::now());
      const auto key = static_cast<std::uint64_t>(i + 1);
      fl::track_request(key, h);
      (void)fl::check_request(key, fl::now());
      fl::finish_request(key, fl::now());
    }));
  }
  fl::stop();
  const double c = median(clocks), rec = median(recorded), req = median(requests);
  std::printf(
      "flight recorder, %ld calls x %d rounds (medians): the two clock readings alone %.1f ns; a call posted and "
      "completed with them %.1f ns: the recorder adds %.1f ns a call; a nonblocking call's request tracked, "
      "checked and done adds %.1f ns more\n",
      calls, rounds, c, rec, rec - c, req - rec);
  return 0;
}
