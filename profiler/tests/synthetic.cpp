// A synthetic CPU workload with known components, profiled under mpirun: busy-wait "kernels" of
// known length, known idle time inside and between operators, a real MPI_Allreduce that rank 0
// reaches `skew` earlier than the last rank. The breakdown must recover every injected component
// within 5% or 50 us, whichever is larger (the wait: plus twice the largest clock offset error the
// profile records, see below); the test prints both.
//
// "Injected" is what the workload actually did, timed with its own CLOCK_MONOTONIC reads around
// each phase (independent of the profiler's clock, scopes and sweep): on a loaded machine a phase
// can overrun its schedule, and the profiler must report the overrun, not the schedule. The
// schedule is printed beside it. The wait is computed from the ranks' arrival times at the
// allreduce, exchanged after the run (the ranks share one host's CLOCK_MONOTONIC).
//
// With --stream the file is written step by step (SessionOptions::stream, append_so_far() after
// each iteration), each step's breakdown computed from that step's events alone. Either way the
// file's breakdown must equal the one computed from its events whole (analyze_ranks).
//
//   mpirun -np 2 test_profiler_synthetic OUT.h5 [--max-single-file-ranks N] [--iterations N] [--stream]

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "commscope/formats/profile_file.hpp"
#include "commscope/profiler/breakdown.hpp"
#include "commscope/profiler/session.hpp"

namespace cp = commscope::profiler;

namespace {

constexpr std::int64_t kMs = 1'000'000;
// The schedule of one iteration on rank r (ns).
constexpr std::int64_t kInterBefore = 2 * kMs;  // idle before the first operator (+ skew on the last rank)
constexpr std::int64_t kIntra = 1 * kMs;        // idle inside "fwd", twice
constexpr std::int64_t kKernelA = 8 * kMs, kKernelB = 4 * kMs;
constexpr std::int64_t kInterMid = 3 * kMs;  // idle between "fwd" and "grad_sync"
constexpr std::int64_t kSkew = 6 * kMs;      // the last rank starts its iteration this much later
constexpr int kAllreduceFloats = 1 << 18;    // 1 MiB

// Idle (from the profiler's point of view) until `d` ns have passed: sleep most of it, then spin,
// so the interval is exact to a microsecond.
void idle_for(std::int64_t d) {
  const std::int64_t end = cp::mono_ns() + d;
  if (d > 300'000) {
    const std::int64_t sleep = d - 200'000;
    timespec ts{static_cast<time_t>(sleep / 1'000'000'000), static_cast<long>(sleep % 1'000'000'000)};
    nanosleep(&ts, nullptr);
  }
  while (cp::mono_ns() < end) {
  }
}
// The same spin, but inside a KernelScope.
void busy_for(std::int64_t d) {
  idle_for(d);
}

// What one iteration actually did on this rank (ns).
struct Truth {
  std::int64_t kernel = 0, intra = 0, inter = 0, arrival = 0;
};
// Runs f and adds its duration to *sum.
template <class F>
void timed(std::int64_t* sum, F&& f) {
  const std::int64_t t0 = cp::mono_ns();
  f();
  *sum += cp::mono_ns() - t0;
}

struct Check {
  const char* name;
  double expected_ns, measured_ns;
  double clock_error_ns = 0;  // what the clock offsets allow on top (the wait only)
  double tolerance() const { return std::max(0.05 * expected_ns, 50'000.0) + clock_error_ns; }
  bool ok() const { return std::fabs(measured_ns - expected_ns) <= tolerance(); }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0)
      std::fprintf(stderr, "usage: test_profiler_synthetic OUT.h5 [--max-single-file-ranks N] [--iterations N]\n");
    MPI_Finalize();
    return 2;
  }
  cp::SessionOptions options;
  options.output = argv[1];
  options.backend = cp::BackendChoice::kHost;
  options.command_line = "test_profiler_synthetic";
  options.attributes = {{"workload", "synthetic"}};
  int iterations = 5;
  bool expect_not_written = false;  // OUT is unwritable: finish() must warn and carry on
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-not-written") == 0) expect_not_written = true;
    if (std::strcmp(argv[i], "--stream") == 0) options.stream = true;
  }
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--max-single-file-ranks") == 0) options.single_file_max_ranks = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
  }
  std::vector<float> send(kAllreduceFloats, 1.0f), recv(kAllreduceFloats);
  MPI_Allreduce(send.data(), recv.data(), kAllreduceFloats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);  // warm-up

  const bool last = rank == size - 1;
  int failures = 0;
  std::vector<Truth> truth(static_cast<std::size_t>(iterations));
  {
    cp::Session session(MPI_COMM_WORLD, options);
    const cp::NameId fwd = cp::name_id("fwd"), sync = cp::name_id("grad_sync"), ka = cp::name_id("busy_a"),
                     kb = cp::name_id("busy_b"), allreduce = cp::name_id("allreduce"), mpi = cp::name_id("mpi");
    for (int it = 0; it < iterations; ++it) {
      Truth& t = truth[static_cast<std::size_t>(it)];
      {  // the step; then it is appended
        cp::IterationScope iteration(it);
        timed(&t.inter, [&] { idle_for(kInterBefore + (last && size > 1 ? kSkew : 0)); });
        {
          cp::OperatorScope op(fwd);
          timed(&t.intra, [&] { idle_for(kIntra); });
          {
            cp::KernelScope k(ka);
            timed(&t.kernel, [&] { busy_for(kKernelA); });
          }
          timed(&t.intra, [&] { idle_for(kIntra); });
          {
            cp::KernelScope k(kb);
            timed(&t.kernel, [&] { busy_for(kKernelB); });
          }
        }
        timed(&t.inter, [&] { idle_for(kInterMid); });
        {
          cp::OperatorScope op(sync);
          cp::CommScope c(allreduce, mpi, static_cast<std::int64_t>(sizeof(float)) * kAllreduceFloats);
          t.arrival = cp::mono_ns();
          MPI_Allreduce(send.data(), recv.data(), kAllreduceFloats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
      }
      if (options.stream && !session.append_so_far()) {
        std::fprintf(stderr, "FAIL: rank %d: iteration %d was not appended\n", rank, it);
        ++failures;
      }
    }
    cp::Profile profile = session.finish();
    // Every rank's truth on rank 0.
    std::vector<Truth> all(rank == 0 ? truth.size() * static_cast<std::size_t>(size) : 0);
    MPI_Gather(truth.data(), static_cast<int>(truth.size() * sizeof(Truth)), MPI_BYTE, all.data(),
               static_cast<int>(truth.size() * sizeof(Truth)), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (expect_not_written) {
      // The program goes on after a failed write, with the breakdown in memory.
      if (session.written() || (rank == 0 && profile.breakdown.size() != static_cast<std::size_t>(iterations * size))) {
        std::fprintf(stderr, "FAIL: rank %d: written() %d, %zu rows\n", rank, session.written() ? 1 : 0,
                     profile.breakdown.size());
        ++failures;
      }
    } else if (!session.written()) {
      if (rank == 0) std::fprintf(stderr, "FAIL: the profile was not written\n");
      ++failures;
    }
    if (rank == 0 && !expect_not_written) {
      if (profile.breakdown.size() != static_cast<std::size_t>(iterations * size)) {
        std::fprintf(stderr, "FAIL: %zu breakdown rows, expected %d\n", profile.breakdown.size(), iterations * size);
        ++failures;
      }
      std::printf("%-4s %-4s %-10s %12s %12s %12s %9s %s\n", "rank", "iter", "component", "schedule_us", "injected_us",
                  "measured_us", "tol_us", "");
      std::int64_t max_clock_error = 0;
      for (const cp::RankInfo& r : profile.ranks) max_clock_error = std::max(max_clock_error, r.clock_error_ns);
      for (const cp::BreakdownRow& row : profile.breakdown) {
        const bool is_last = row.rank == size - 1 && size > 1;
        const double skew = size > 1 ? static_cast<double>(kSkew) : 0.0;
        const std::size_t per_rank = static_cast<std::size_t>(iterations);
        const Truth& t = all[static_cast<std::size_t>(row.rank) * per_rank + static_cast<std::size_t>(row.iteration)];
        std::int64_t latest = t.arrival;
        for (int r = 0; r < size; ++r)
          latest = std::max(
              latest, all[static_cast<std::size_t>(r) * per_rank + static_cast<std::size_t>(row.iteration)].arrival);
        const double schedule[] = {static_cast<double>(kKernelA + kKernelB), static_cast<double>(2 * kIntra),
                                   static_cast<double>(kInterBefore + kInterMid) + (is_last ? skew : 0.0),
                                   is_last ? 0.0 : skew};
        const Check checks[] = {
            {"kernel", static_cast<double>(t.kernel), static_cast<double>(row.kernel_ns)},
            {"intra", static_cast<double>(t.intra), static_cast<double>(row.intra_ns)},
            {"inter", static_cast<double>(t.inter), static_cast<double>(row.inter_ns)},
            // The wait compares arrivals across ranks, each placed on rank 0's clock by an offset
            // known to within its error (half the best ping-pong: milliseconds on a node whose
            // cores are oversubscribed): the latest's and this rank's together.
            {"comm_wait", static_cast<double>(latest - t.arrival), static_cast<double>(row.comm_wait_ns),
             2.0 * static_cast<double>(max_clock_error)},
        };
        for (std::size_t i = 0; i < std::size(checks); ++i) {
          const Check& c = checks[i];
          const double tol = c.tolerance();
          std::printf("%-4d %-4d %-10s %12.1f %12.1f %12.1f %9.1f %s\n", row.rank, row.iteration, c.name,
                      schedule[i] / 1e3, c.expected_ns / 1e3, c.measured_ns / 1e3, tol / 1e3, c.ok() ? "ok" : "FAIL");
          failures += c.ok() ? 0 : 1;
        }
        // Not injected: the allreduce's own time once everyone is there.
        std::printf("%-4d %-4d %-10s %12s %12s %12.1f\n", row.rank, row.iteration, "transfer", "-", "-",
                    static_cast<double>(row.comm_transfer_ns) / 1e3);
        if (row.identity_ok != 1 || row.kernel_ns + row.intra_ns + row.inter_ns + row.comm_ns != row.window_ns ||
            row.comm_wait_ns + row.comm_transfer_ns != row.comm_ns) {
          std::printf("FAIL: rank %d iteration %d: the identity does not hold\n", row.rank, row.iteration);
          ++failures;
        }
      }
      // The file holds what finish() returned.
      try {
        const cp::Profile file = cp::read_profile(options.output);
        bool same = file.breakdown.size() == profile.breakdown.size() && file.meta.nranks == size &&
                    file.events.size() == static_cast<std::size_t>(size);
        for (std::size_t i = 0; same && i < file.breakdown.size(); ++i)
          same = std::memcmp(&file.breakdown[i], &profile.breakdown[i], sizeof(cp::BreakdownRow)) == 0;
        std::size_t events = 0;
        for (std::size_t r = 0; r < file.events.size(); ++r) {
          events += file.events[r].size();
          same = same && file.events[r].size() == static_cast<std::size_t>(file.ranks[r].events);
        }
        std::printf("file %s: %s layout, %zu breakdown rows, %zu events, clock %s, offsets:", options.output.c_str(),
                    file.meta.events_layout.c_str(), file.breakdown.size(), events, file.meta.clock.c_str());
        for (const auto& r : file.ranks)
          std::printf(" %lld+-%lld ns", static_cast<long long>(r.clock_offset_ns),
                      static_cast<long long>(r.clock_error_ns));
        std::printf("\n");
        if (!same) {
          std::fprintf(stderr, "FAIL: the file's breakdown or events differ from the session's\n");
          ++failures;
        }
        // The rows again from the file's events whole, every instance's latest arrival over the ranks.
        std::vector<std::int64_t> offsets;
        for (const cp::RankInfo& r : file.ranks) offsets.push_back(r.clock_offset_ns);
        std::vector<cp::BreakdownRow> whole;
        for (const cp::RankBreakdown& b : cp::analyze_ranks(file.events, offsets, cp::Timeline::kHost))
          whole.insert(whole.end(), b.rows.begin(), b.rows.end());
        bool equal = whole.size() == file.breakdown.size();
        for (std::size_t i = 0; equal && i < whole.size(); ++i) {
          equal = std::memcmp(&whole[i], &file.breakdown[i], sizeof(cp::BreakdownRow)) == 0;
          if (!equal)
            std::printf("rank %d iteration %d: wait %lld ns in the file, %lld from its events whole\n",
                        file.breakdown[i].rank, file.breakdown[i].iteration,
                        static_cast<long long>(file.breakdown[i].comm_wait_ns),
                        static_cast<long long>(whole[i].comm_wait_ns));
        }
        std::printf("the file's %zu rows %s the %zu computed from its events whole\n", file.breakdown.size(),
                    equal ? "equal" : "DIFFER FROM", whole.size());
        failures += equal ? 0 : 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "FAIL: %s\n", e.what());
        ++failures;
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", failures == 0 ? "PASS" : "FAIL", failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
