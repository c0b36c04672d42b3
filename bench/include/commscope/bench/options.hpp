// commscope-bench's options: nccl-tests' flags (-b -e -f -i -n -w -c -d -o -r -a -T) plus the
// algorithm, device, output file and statistics. Parsed with CLI11; the struct is passed in,
// never global.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/shm_options.hpp"
#include "commscope/collectives/types.hpp"
#include "commscope/model/machine_model.hpp"

namespace commscope::bench {

// How the per-rank times of one case are combined into the reported time (nccl-tests' -a:
// 0 rank0, 1 avg, 2 min, 3 max). max is the default: training waits for the slowest rank.
enum class Combine : std::uint8_t { rank0, avg, min, max };
std::string_view to_string(Combine c);

// One kind of collective call a profile holds (--from-profile): what it is, its algorithm as the
// profile names it ("" for none), its array bytes and its communicator's size.
struct ProfileCall {
  Collective coll = Collective::allreduce;
  std::string algo;
  std::size_t bytes = 0;
  int group_size = 0;
  // The world ranks of the profile's communicators of group_size that made this call, each set
  // ascending (from their labels: tp[0,1], tp[2,3]); empty where no label says.
  std::vector<std::vector<int>> groups;
};

struct Options {
  std::vector<Collective> collectives;
  // --from-profile FILE: the profile's collective calls; the run's cases are those of its rank
  // count (collectives, sizes and algorithms from the profile, not the command line).
  std::string from_profile;
  std::vector<ProfileCall> profile_calls;
  // Named as nccl-tests names them (all_reduce, all_reduce_perf, or installed under that name):
  // nccl-tests' table columns, and only the vendor's algorithm unless --algo is given.
  bool nccl_tests_names = false;
  // Named as IMB-MPI1 names them (Allreduce, Bcast, ...): the vendor's algorithm only, unless
  // --algo is given. imb_npmin: IMB's -npmin (0: not given), which must not be below the ranks.
  bool imb_names = false;
  int imb_npmin = 0;
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{64} << 20;
  double factor = 2;        // -f: multiply the size by this ...
  std::size_t step = 0;     // -i: ... or add this many bytes (0: use the factor)
  std::int64_t iters = 20;  // -n: timed iterations per case; 0 lets Google Benchmark choose
  int warmup = 5;           // -w
  int check_iters = 1;      // -c: checked iterations after timing; 0 skips the check
  std::vector<DataType> types = {DataType::f32};
  std::vector<ReduceOp> ops = {ReduceOp::sum};
  int root = 0;
  Combine combine = Combine::max;
  double timeout_s = 300;          // -T: a rank stuck longer than this in one step ends the run; 0: never
  std::vector<std::string> algos;  // empty: every algorithm of the device
  std::string device = "cpu";
  // --device cuda: how ring/tree/rhd move device buffers. nccl: ncclSend/ncclRecv (one GPU per
  // rank); staged: MPI through pinned host memory (ranks may share a GPU; no nccl algorithm).
  std::string transport = "nccl";
  std::string out;  // HDF5 results file ("" for none)
  bool stats = false;
  std::uint64_t seed = 42;
  std::size_t segment_bytes = std::size_t{1} << 20;
  std::size_t shm_chunk_bytes = commscope::ShmOptions{}.chunk_bytes;  // --shm-chunk
  // --shm-two-shot; nullopt (auto): by the node's rank count, resolved when the bench starts.
  std::optional<std::size_t> shm_two_shot_bytes = std::nullopt;
  std::size_t shm_direct_bytes = SIZE_MAX;  // never
  std::size_t shm_adapt_bytes = commscope::ShmOptions{}.adapt_bytes;
  // -u: the buffers start this many elements past a page boundary (host) or cudaMalloc's
  // 256-byte alignment (device), as nccl-tests misaligns them.
  std::size_t unalign = 0;
  // nccl-tests' shape of the timed loop (docs/bench.md): -z 0 launches the calls back to back;
  // 1 waits for each call and then a barrier; 2 waits for each call; 3 waits and barriers after
  // each iteration, the barrier left out of the time. -m: calls per iteration.
  int blocking = 0;
  int agg_iters = 1;
  int run_cycles = 1;              // -N: every case this many times, in order; 0: until interrupted
  bool report_cputime = false;     // -C: report the host's time to issue the calls
  bool report_timestamps = false;  // -S: each line ends with the time it was printed
  bool per_iter_timing = false;    // -I: nccl-tests' per-iteration columns
  int per_iter_skip = 0;           // -K: first iterations left out of the per-iteration summaries
  std::string json_out;            // -J: nccl-tests' JSON results file ("" for none)
  bool memory_report = false;      // -M: memory use in the footer
  // --device cuda with NCCL only: -G replays the timed iterations (NCCL's collectives only)
  // from a CUDA graph this many times; -R 1 registers the buffers with ncclCommRegister, 2 as
  // symmetric windows; -y runs on the legacy default stream; -x sets NCCL's CTA policy.
  int cuda_graphs = 0;
  int local_register = 0;
  bool stream_null = false;
  int cta_policy = -1;  // -1: NCCL's default
  // Testing aids (hidden from --help): rank `stall_rank` never enters the first collective of
  // at least `stall_bytes`; rank `kill_rank` dies of SIGKILL there instead (`kill_bytes`);
  // rank 0 corrupts one output element before every check.
  int stall_rank = -1;
  std::size_t stall_bytes = 0;
  int kill_rank = -1;
  std::size_t kill_bytes = 0;
  // Rank `late_rank` enters each case's first sampled call `late_us` late: the arrival
  // skew must show it.
  int late_rank = -1;
  int late_us = 0;
  std::int64_t free_bytes_override = -1;  // pretend the --out file system has this much room
  bool corrupt = false;
  // The machine model's figures the user gives (docs/bench.md, "The machine model"), applied over
  // the detected ones in order (later wins): the lines of --machine FILE, then each --link-rate
  // HOST=RATE (a `nic` entry); machine_origins[i] names where entry i came from.
  std::vector<MachineEntry> machine_entries;
  std::vector<std::string> machine_origins;
  std::string doctor_file;  // --doctor: a doctor file whose pairs give each host's nic_measured
  // --reprobe-after: a run lasting longer than this many seconds after its start-up probes measures
  // the rates by size again at its end, and its model keeps the faster of the two moments
  // (docs/verdicts.md, "Stable inputs"); negative: never.
  double reprobe_after_s = 20;
  // Google Benchmark's own flags (--benchmark_*), passed through in order.
  std::vector<std::string> benchmark_flags;
  std::string command_line;
};

// Our collective for an nccl-tests test or binary name (all_reduce, all_reduce_perf), nullopt
// for any other name. InvalidArgument for nccl-tests' hypercube, which has none here.
std::optional<Collective> nccl_tests_collective(std::string_view name);

// nccl-tests' name of a datatype ("float" for f32, "bfloat16" for bf16, ...).
std::string_view nccl_tests_name(DataType t);

// Parse "8", "64K", "1.5M", "2G" (powers of 1024, as nccl-tests; commscope::parse_size, whose
// error this throws as InvalidArgument, the bench's usage error).
std::size_t parse_size(const std::string& s);

// The requested sizes: from min to max by factor (or step), max included when reached; with
// --from-profile, the profile's sizes.
// InvalidArgument for more than kMaxSizes sizes (-f 1.0000001 or -i 1 to 64M: a run that never
// ends, and gigabytes of cases before the first call).
inline constexpr std::size_t kMaxSizes = 65536;
std::vector<std::size_t> size_list(const Options& o);

struct ParseResult {
  Options options;
  int exit_code = -1;   // >= 0: stop and exit with this code (--help: 0, bad usage: 2)
  std::string message;  // what to print (help text or the one-line error)
};

// Parse the command line. Never throws for bad input: returns exit_code 2 and a one-line
// message naming the flag and the accepted values.
ParseResult parse_options(int argc, const char* const* argv);

}  // namespace commscope::bench
