// OSU Micro-Benchmarks' tests under their own names and flags, OSU 7.4's defaults:
//   point-to-point: osu_latency, osu_bw, osu_bibw, osu_mbw_mr: -m [MIN:]MAX, -i ITER, -x WARMUP,
//     -W WINDOW, -d cuda with OSU's buffer placement (`D D`), -R and -p for osu_mbw_mr, -f
//     (min/max columns; OSU's collectives have it, its point-to-point tests do not);
//   collective: osu_allreduce, osu_allgather, osu_alltoall, osu_bcast, osu_gather, osu_reduce,
//     osu_reduce_scatter, osu_scatter (the library's `mpi` algorithm, host buffers): -m -i -x
//     -f, -M MEMLIMIT, -k fixed:ROOT (gather, reduce, scatter);
//   both: -T mpi_char|mpi_int|mpi_float|all (repeatable; each type its own table), -c
//     (validation: a Pass/Fail column), -u N (validation warm-ups), -h.
// Other osu_* names are refused by name (osu_refusal) with the test that measures the nearest
// thing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/collectives/types.hpp"

namespace commscope::bench {

enum class OsuTest {
  latency,
  bw,
  bibw,
  mbw_mr,
  allreduce,
  allgather,
  alltoall,
  bcast,
  gather,
  reduce,
  reduce_scatter,
  scatter
};

// "osu_latency", ...
std::string_view to_string(OsuTest t);
// The test for an OSU binary name (osu_latency, or a path ending in it), nullopt for any other.
std::optional<OsuTest> osu_test_named(std::string_view name);
// For an osu_* name (or a path ending in one) that is none of ours, the one line saying why and
// which test measures the nearest thing; "" for any other name.
std::string osu_refusal(std::string_view name);

// The collective tests (osu_allreduce ...), and the library's collective each one times.
bool is_collective(OsuTest t);
Collective osu_collective(OsuTest t);

// OSU's datatypes (-T), their MPI names ("MPI_FLOAT"), sizes and the library's types.
enum class OsuType { mpi_char, mpi_int, mpi_float };
std::string_view to_string(OsuType t);
std::size_t type_size(OsuType t);
DataType library_type(OsuType t);  // i8, i32, f32

// OSU's iteration counts: sizes above 8 KiB take the large counts.
inline constexpr std::size_t kOsuLargeMessage = 8192;
// OSU's -M: the collectives' largest message is cut to fit (osu_alltoall: size x ranks).
inline constexpr std::size_t kOsuMemLimit = std::size_t{512} << 20;

struct OsuOptions {
  OsuTest test = OsuTest::latency;
  std::size_t min_bytes = 0;                     // -m MIN: (latency starts at 0 B, the others at 1 B)
  std::size_t max_bytes = std::size_t{4} << 20;  // -m MAX (collectives: 1 MiB)
  std::optional<int> iters;                      // -i: every size; nullopt: OSU's small/large counts
  std::optional<int> skip;                       // -x: untimed iterations first
  int window = 64;                               // -W: messages in flight per iteration (bw, bibw, mbw_mr)
  bool full = false;                             // -f: min and max per iteration, and the count
  bool print_rate = true;                        // -R 0|1: osu_mbw_mr's Messages/s column
  int pairs = 0;                                 // -p: osu_mbw_mr's sender/receiver pairs (0: ranks/2)
  bool device = false;                           // -d cuda
  char src = 'H', dst = 'H';                     // rank 0's and rank 1's buffers (`-d cuda D D`: both on the device)
  double timeout_s = 300;                        // --timeout: how long one size may take before the run ends
  std::vector<OsuType> types = {OsuType::mpi_char};  // -T, in order
  bool validate = false;                             // -c: check every timed message, Pass/Fail
  int validation_warmup = 0;                         // -u: untimed repeats before each checked one (-c: 5)
  int root = 0;                                      // -k fixed:ROOT
  std::size_t mem_limit = kOsuMemLimit;              // -M
  bool corrupt = false;  // --debug-corrupt (hidden, tests): each receiver alters an element before the check

  // OSU's counts for one size: timed and untimed iterations (collectives 1000 after 100, 100
  // after 10 above 8 KiB).
  int iterations(std::size_t bytes) const;
  int warmup(std::size_t bytes) const;
  // The sizes, OSU's way: from MIN doubling to MAX (0 is followed by 1; collectives start at 1).
  std::vector<std::size_t> sizes() const;
};

struct OsuParse {
  OsuOptions options;
  int exit_code = -1;   // >= 0: stop with this status (-h: 0, bad usage: 2)
  std::string message;  // the help text or the one-line error
};

// Parse an OSU command line; argv[0] names the test. Never throws for bad input.
OsuParse parse_osu_options(OsuTest test, int argc, const char* const* argv);

}  // namespace commscope::bench
