// The exhaustive correctness suite, run under mpirun at several rank counts: every collective
// x algorithm x datatype x op, counts 0, 1, 7, 1003, 1000003 and one array over 16 MiB, in place
// (where the collective has a form: not alltoallv) and out of place, root 0 and a non-zero root
// (the large counts take one op per type and one type per element size where nothing is reduced,
// the array over 16 MiB one type per element size everywhere, and alternate the layout, see below); shm's allreduce also with its one-shot /
// two-shot switch moved, so that each variant meets every size; hier also on emulated nodes
// (one host).
// Integers compare exactly; floats against an f64 reference within check::tolerance (one ulp
// of the type). Out of place, the send buffer must come back unchanged. shm is skipped (and
// said) when the ranks span several nodes: it refuses to run across nodes by design.
//
//   mpirun -np 5 test_correctness [--quick | --no-big] [--seed S] [--segment BYTES] [--types f32,i64,...]
//
// --no-big: without the > 16 MiB arrays (the suite at 5 and 8 ranks on a 2-core machine: their
// size paths are those of fewer ranks, which run them; 4 MiB arrays still take many steps), the
// 1000003 count at one type per element size for the reducing collectives too (their arithmetic
// at that count is every type's at 2 ranks; at 8 ranks all ten types took 7 of 27 s), and
// mpi (the MPI library's own collectives) at the counts up to 1003 only: its wrapper has one path
// below 2^30 elements, so the 1000003 count checks the library rather than commscope (at 8
// oversubscribed ranks they took 13.6 of the test's 27.5 s, reducescatter 6.5).
// --types: only these datatypes (the cluster tests, where every case crosses TCP between
// emulated hosts on shared cores).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/hier_options.hpp"
#include "commscope/collectives/shm_options.hpp"
#include "harness.hpp"

using namespace commscope;
using namespace commscope::testing;

int main(int argc, char** argv) {
  MpiRuntime mpi(argc, argv);
  bool quick = false, no_big = false;
  std::uint64_t seed = 12345;
  CommOptions opts;
  opts.timeout_s = 120;
  std::vector<DataType> types(kAllDataTypes.begin(), kAllDataTypes.end());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--no-big")
      no_big = true;
    else if (a == "--seed" && i + 1 < argc)
      seed = std::stoull(argv[++i]);
    else if (a == "--segment" && i + 1 < argc)
      opts.algo.segment_bytes = std::stoull(argv[++i]);
    else if (a == "--types" && i + 1 < argc) {
      types.clear();
      const std::string list = argv[++i];
      for (std::size_t b = 0; b <= list.size();) {
        const std::size_t e = std::min(list.find(',', b), list.size());
        try {
          types.push_back(parse_datatype(list.substr(b, e - b)));
        } catch (const std::exception& ex) {
          std::fprintf(stderr, "test_correctness: --types: %s\n", ex.what());
          return 2;
        }
        b = e + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: test_correctness [--quick | --no-big] [--seed S] [--segment BYTES] [--types T,...]\n");
      return 2;
    }
  }
  Communicator comm(MPI_COMM_WORLD, opts);
  // shm with its switch at either end: one-shot at the large counts (several chunks), two-shot
  // at the small ones (empty slices when the count is below the rank count); both through the
  // segment, never direct.
  CommOptions one = opts, two = opts;
  one.algo.set(ShmOptions{.two_shot_bytes = SIZE_MAX, .adapt_bytes = SIZE_MAX});
  two.algo.set(ShmOptions{.two_shot_bytes = 0, .adapt_bytes = SIZE_MAX});
  Communicator shm_one_shot(MPI_COMM_WORLD, one), shm_two_shot(MPI_COMM_WORLD, two);
  // The collectives with a direct form (allgather, gather, broadcast, scatter, reducescatter,
  // allreduce): reading peers' buffers directly at every count, or choosing between that and
  // the segment by measurement at every count.
  CommOptions direct = opts, measured_choice = opts;
  direct.algo.set(ShmOptions{.direct_bytes = 0});
  measured_choice.algo.set(ShmOptions{.adapt_bytes = 0});
  Communicator shm_direct(MPI_COMM_WORLD, direct), shm_measured(MPI_COMM_WORLD, measured_choice);
  const int p = comm.size();
  // shm needs every rank on one node; across nodes it is refused (UnsupportedCollective), which
  // test_errors and the bench check, so here it is left out rather than counted as wrong.
  const bool shm_runs = comm.local_size() == p;
  std::size_t direct_form_cases = 0;
  if (!shm_runs && comm.rank() == 0) {
    std::printf("correctness: shm skipped: this node holds %d of %d ranks (shm runs on one node only)\n",
                comm.local_size(), p);
  }
  // Ranks on several hosts: hier runs on the real nodes. On one host, hier runs again on
  // emulated nodes (rank r on node r % m: round robin, uneven where p is not a multiple of m),
  // so that its multi-node paths meet every case here too.
  CommOptions fake = opts;
  fake.algo.set(HierOptions{.test_nodes = p >= 6 ? 3 : 2});
  Communicator hier_nodes(MPI_COMM_WORLD, fake);
  std::size_t skipped = 0;
  const auto t0 = std::chrono::steady_clock::now();
  Buffer send, recv;
  SharedCase shared;
  std::size_t cases = 0, failed = 0, unsupported = 0;

  for (Collective coll : kAllCollectives) {
    // Asking an algorithm for a collective it lacks must be a clear error on every rank.
    for (const Algorithm* algo : algorithms()) {
      if (algo->supports(coll)) continue;
      bool threw = false;
      try {
        comm.run({coll, nullptr, nullptr, 0, DataType::f32, ReduceOp::sum, 0}, *algo);
      } catch (const UnsupportedCollective& e) {
        threw = std::string(e.what()).find("algorithms with") != std::string::npos;
      }
      ++unsupported;
      if (!threw) {
        ++failed;
        std::fprintf(stderr, "FAIL %s %s: no UnsupportedCollective error\n", std::string(to_string(coll)).c_str(),
                     std::string(algo->name()).c_str());
      }
    }
    std::size_t large_index = 0;  // this collective's types that run the large counts, in order
    for (DataType type : types) {
      const std::size_t es = type_size(type);
      // The large counts move the same bytes for every type of one size where nothing is reduced:
      // there they run the first type of each element size only.
      bool first_of_size = true;
      for (DataType other : types) {
        if (other == type) break;
        if (type_size(other) == es) first_of_size = false;
      }
      // The array over 16 MiB (chunks, segments and count limits, whose paths depend on the element
      // size alone) runs one type per element size, for the reducing collectives too: which type of
      // a size rotates with the collective, so each type meets it over the collectives.
      std::size_t of_size = 0, nth = 0;  // how many types share this one's size; its place among them
      for (DataType other : types) {
        if (type_size(other) != es) continue;
        if (other == type) nth = of_size;
        ++of_size;
      }
      const bool runs_big = is_reducing(coll) ? nth == static_cast<std::size_t>(coll) % of_size : first_of_size;
      // Under --no-big the 1000003 count too: every type's arithmetic at that count is checked at 2
      // ranks, and the schedules of the other rank counts do not depend on the type.
      const bool runs_large = (is_reducing(coll) && !no_big) || runs_big;
      const std::size_t layout = runs_large ? large_index++ : 0;
      // Counts as passed to the collective; the last makes the array (nccl-tests size) > 16 MiB.
      const std::size_t big_total = (std::size_t{16} << 20) / es + 1001;
      const bool blocked = collective_bytes(coll, 1, type, p) != es;
      const std::size_t big = blocked ? big_total / static_cast<std::size_t>(p) + 1 : big_total;
      std::vector<std::size_t> counts = {0, 1, 7, 1003, 1000003, big};
      if (quick) counts = {0, 1, 7, 1003};
      if (no_big && !quick) counts.pop_back();
      if (!runs_large) counts.resize(std::min<std::size_t>(counts.size(), 4));
      if (runs_large && !runs_big && counts.size() == 6) counts.pop_back();
      std::vector<ReduceOp> ops(kAllReduceOps.begin(), kAllReduceOps.end());
      if (!is_reducing(coll)) ops = {ReduceOp::sum};
      std::vector<int> roots = {0};
      if (is_rooted(coll) && p > 1) roots.push_back(p == 2 ? 1 : p / 2 + 1);
      for (ReduceOp op : ops)
        for (std::size_t ci = 0; ci < counts.size(); ++ci)
          for (int root : roots)
            for (bool in_place : {false, true}) {
              if (in_place && !has_in_place(coll)) continue;
              // Counts up to 1003 run the full cross product: the arithmetic of every (type, op),
              // 1003 elements through the reduction loops' vector bodies and their tails. The
              // large counts (1000003 and the > 16 MiB array: many chunks and segments, the MPI
              // count limits) run one op per type, rotating with the collective and the count,
              // and where nothing is reduced one type per element size; each once per root,
              // in or out of place by turns over the types that run them, so each collective x
              // algorithm meets both layouts at both large sizes. Every type at every op there
              // took most of the suite's time and checked the same paths again.
              const bool large = counts[ci] >= 1000003;
              if (large && has_in_place(coll) && in_place != ((layout + ci) % 2 == 1)) continue;
              const auto rotated =
                  (static_cast<std::size_t>(type) + static_cast<std::size_t>(coll) + ci) % ops.size();
              if (large && op != ops[rotated]) continue;
              const std::uint64_t case_seed = seed + cases;
              for (const Algorithm* algo : algorithms()) {
                if (!algo->supports(coll)) continue;
                if (large && no_big && algo->name() == "mpi") continue;
                if (!shm_runs && algo->name() == "shm") {
                  ++skipped;
                  continue;
                }
                const Case c{coll, algo, type, op, counts[ci], root, in_place};
                const Outcome o = run_case(comm, c, case_seed, send, recv, shared);
                ++cases;
                if (o.wrong) ++failed;
                report(comm, c, o);
                if (algo->name() == "hier" && shm_runs && p > 1) {
                  const Outcome oh = run_case(hier_nodes, c, case_seed, send, recv, shared);
                  ++cases;
                  if (oh.wrong) ++failed;
                  report(hier_nodes, c, oh,
                         std::to_string(fake.algo.get<HierOptions>().test_nodes) + " emulated nodes: ");
                }
                if (algo->name() != "shm") continue;
                auto variant = [&](Communicator& other, const char* what) {
                  const Outcome o2 = run_case(other, c, case_seed, send, recv, shared);
                  ++cases;
                  if (o2.wrong) ++failed;
                  report(other, c, o2, what);
                };
                // The slot variant the default switch does not pick at this size.
                if (coll == Collective::allreduce || coll == Collective::reduce) {
                  if (large)
                    variant(shm_one_shot, "one-shot: ");
                  else
                    variant(shm_two_shot, "two-shot: ");
                }
                // Direct forms: direct reads, or the measured choice, in alternate cases.
                const bool direct_form = coll == Collective::allgather || coll == Collective::gather ||
                                         coll == Collective::broadcast || coll == Collective::scatter ||
                                         coll == Collective::reducescatter || coll == Collective::allreduce;
                if (direct_form) {
                  if (direct_form_cases++ % 2 == 1)
                    variant(shm_measured, "measured choice: ");
                  else
                    variant(shm_direct, "direct: ");
                }
              }
            }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (comm.rank() == 0) {
    std::printf(
        "correctness on %d ranks (%d on this node): %zu cases (+%zu unsupported pairs checked, %zu shm cases "
        "skipped across nodes), %zu failed, %.1f s\n",
        p, comm.local_size(), cases, unsupported, skipped, failed, secs);
  }
  return failed ? 1 : 0;
}
