// Where the buffers live and how a case runs: host buffers over the collectives library
// (cpu), or device buffers over NCCL (cuda). The harness owns timing statistics, checking
// policy and reporting; a backend only allocates, fills, runs and counts.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cases.hpp"
#include "commscope/collectives/communicator.hpp"

namespace commscope::bench {

class Watchdog;

// Where a case's input and output live in a backend's two buffer pools (`a` and `b`), as byte
// offsets, following NCCL's in-place conventions: out of place, input at a and output at b;
// in place, both in a (allgather, gather: the input is this rank's block of the output;
// reducescatter, scatter: the output is this rank's block of the input). The pools start on a
// page (host) or a 256-byte (cudaMalloc) boundary; `unalign` elements (nccl-tests' -u) shift
// both buffers off it, so they stay aligned to their element size only.
struct Layout {
  std::size_t a_bytes = 0, b_bytes = 0;  // pool sizes the case needs
  std::size_t send_offset = 0, recv_offset = 0;
  bool recv_in_b = true;
};
Layout buffer_layout(const Case& c, int rank, std::size_t unalign);

// Count rank `rank`'s wrong elements of case `c` run on the check data of `seed`: its output
// `out` (host memory) and, out of place, its input `in` (host memory, must be unchanged).
// `corrupt` (a test aid) flips rank 0's first output element before the check.
std::uint64_t count_wrong(const Case& c, std::uint64_t seed, int rank, void* out, const void* in, bool corrupt);

// How the timed calls of a case run (nccl-tests' -w -n -m -z -G): after `warmup` calls and a
// barrier, `iters` iterations of `agg` calls each; -z `blocking` adds waits and barriers; with
// `graph_launches` > 0 (cuda) the iterations are captured once in a CUDA graph, replayed that
// many times.
struct TimingPlan {
  int warmup = 0;
  std::int64_t iters = 0;
  int agg = 1;
  int blocking = 0;  // 0 none; 1 wait + barrier after each call; 2 wait after each call; 3 wait +
                     // barrier after each iteration, the barrier not timed
  int graph_launches = 0;
  std::int64_t calls() const { return iters * agg * std::max(1, graph_launches); }
  // The iterations with a per-iteration sample: the first kMaxSampledIterations of them.
  std::int64_t sampled() const;
};

// Per-iteration samples are kept for at most this many iterations of a case, whatever -n (with
// -n 0 Google Benchmark ran an 8 B allreduce on one rank 29 million times: 58 million samples,
// 3 GB of memory and a 110 MB file for its two rows). 10,000 still hold a p99 of 100 above it.
inline constexpr std::int64_t kMaxSampledIterations = 10000;
// The iterations of `iters` that have a sample (the first ones), as the backends keep them, the
// results file holds them and the disk estimate counts them.
inline std::int64_t sampled_iterations(std::int64_t iters) {
  return std::min(iters, kMaxSampledIterations);
}
inline std::int64_t TimingPlan::sampled() const {
  return sampled_iterations(iters);
}

// One rank's timings of a TimingPlan.
struct LocalTimings {
  std::vector<double> op_s;  // iteration i's duration divided by its calls (s per call), of the plan's sampled()
                             // first iterations; empty if not measured
  std::vector<std::int64_t> arrival_ns;  // when iteration i started, on this rank's now_ns() clock; empty if unknown
  double total_s = 0;                    // all calls, from the barrier exit to the last completion (s)
  double launch_s = 0;                   // from the barrier exit until the last call was issued (s)
};

// The device a rank runs on, as nccl-tests lists it ("device 0 [0000:1b:00] NVIDIA H100").
struct DeviceInfo {
  int ordinal = -1;  // CUDA device; -1 on the host
  std::string pci;   // "dddd:bb:dd"; "" on the host
  std::string name;  // GPU name, or "cpu"
};

// One line of -M's memory report: what, in bytes.
struct MemoryUse {
  std::string name;
  std::int64_t bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string device() const = 0;
  virtual DeviceInfo device_info() const = 0;
  // -M: this rank's memory use so far (the same names, in the same order, on every rank).
  virtual std::vector<MemoryUse> memory_use() const = 0;
  // Algorithms this device runs, in display order.
  virtual std::vector<std::string> algorithms() const = 0;
  virtual bool supports(const std::string& algo, Collective c) const = 0;
  // Why an algorithm of algorithms() cannot run on this job at all (empty: it can), e.g. shm
  // on ranks that span nodes. `--algo all` leaves such an algorithm out; naming it is an error.
  virtual std::string unavailable(const std::string& /*algo*/) const { return {}; }
  // Allocate (or reuse) the buffers of `c` and fill the input with its check data.
  virtual void prepare(const Case& c, std::uint64_t seed) = 0;
  // Warm up, barrier, then time the plan's calls. Beats the watchdog as it goes.
  virtual LocalTimings run_timed(const TimingPlan& plan, Watchdog& dog) = 0;
  // Refill the input, run once, and count this rank's wrong output elements (and, out of
  // place, changed input elements). `corrupt` flips one output element first (a test aid).
  virtual std::uint64_t check_once(std::uint64_t seed, bool corrupt) = 0;
};

// The options' device settings (-u, and for cuda -T, --transport, ...) shape the backends.
std::unique_ptr<Backend> make_cpu_backend(Communicator& comm, const Options& o);
// o.transport (nccl or staged) moves the device buffers of ring/tree/rhd: see Options::transport.
// Throws InvalidArgument when built without CUDA, TransportError when no GPU can be used.
std::unique_ptr<Backend> make_cuda_backend(Communicator& comm, const Options& o);

}  // namespace commscope::bench
