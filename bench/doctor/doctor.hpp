// commscope-doctor's parts (docs/doctor.md): the options, the ranks' layout and rank 0's file,
// shared by the run (main.cpp) and its phases: pairs (pairs.cpp), probes (probes.cpp), each
// node's allreduce (nodes.cpp) and, with --device cuda, the GPUs (gpus.cpp, a CUDA build's).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "commscope/bench/environment.hpp"
#include "commscope/collectives/collectives.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/transport.hpp"
#include "commscope/common/stop_signals.hpp"
#include "commscope/formats/doctor_file.hpp"

namespace commscope::doctor {

// The file's format, rows and writer (formats/doctor_file.hpp).
using formats::doctor::File;
using formats::doctor::GpuRow;
using formats::doctor::NodeRow;
using formats::doctor::PairRow;
using formats::doctor::PeerRow;
using formats::doctor::RankRow;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Options {
  std::string out = "doctor.h5";
  std::string bytes = "1M";  // bandwidth message
  int window = 8;            // messages in flight per bandwidth iteration
  int bw_iters = 3;
  int passes = 3;
  int lat_iters = 50;
  int gemm_n = 384;
  std::string copy_bytes = "32M";
  double probe_time_s = 0.25;
  int probe_windows = 3;
  // A test aid (hidden flag): this rank's probes run at a tenth of their speed for the first this
  // many seconds of the probe phase, as a node another tenant slows for a while.
  int debug_slow_probe_rank = -1;
  double debug_slow_probe_s = 0;
  std::string probes = "auto";  // concurrent, serial, auto: serial where ranks outnumber CPUs
  std::string node_bytes = "16M";
  std::string node_algo = "mpi";
  int node_iters = 5;
  double timeout_s = 60;
  bool no_probes = false, no_nodes = false;
  std::string device = "cpu";      // cuda: the GPU phase too
  int gpu_gemm_n = 8192;           // GPU GEMMs: n x n x n
  std::string gpu_bytes = "512M";  // GPU copies: bytes per copy
};

// Every rank's host name, in rank order, and each rank's node: hosts numbered in order of
// first appearance. The names are the ones the world communicator's transport gathered.
struct Layout {
  std::vector<std::string> hosts;
  std::vector<int> node;
  std::vector<std::string> node_host;
};
Layout layout_of(const MpiTransport& t);

// Rank 0's file with the stop path's hold on it: rows are added under a stop::WriteGuard (a
// signal waits for the write), and a stop publishes the file as the last add left it and says
// how many rows it kept.
class Output {
 public:
  Output(const Options& o, const bench::Environment& env, const Layout& l);
  template <class Row>
  void add(const std::vector<Row>& rows) {
    const stop::WriteGuard guard;
    if (!tracked_->held()) return;  // published by a stop: the run is ending
    file_->add(rows);
    kept_ += rows.size();
    tracked_->set_kept(kept_);
  }
  h5::Group meta() const { return file_->meta(); }
  // Records /meta status and publishes the file under its name (once; later calls do nothing).
  void finish(const std::string& status);

 private:
  std::unique_ptr<File> file_;
  std::unique_ptr<stop::TrackedFile> tracked_;
  std::uint64_t kept_ = 0;
};

// 1. Every pair's latency and bandwidth, o.passes times over the round-robin tournament's rounds;
// rank 0 writes the rows after each round. Collective. From host buffers over MPI (run_pairs),
// or over any transport from its own memory (run_pairs_on: with --device cuda, device buffers
// through NCCL's point-to-point, run_pairs_device in gpus.cpp); `buffers` names them in the
// pairs' line and /meta pairs_buffers.
struct PairBuffers {
  std::byte* data = nullptr;  // o.bytes: the bandwidth messages
  std::size_t bytes = 0;
  std::byte* small = nullptr;  // 8 bytes: the round trips and acknowledgements
};
void run_pairs(Communicator& world, const Options& o, const Layout& layout, Output* file);
void run_pairs_on(Communicator& world, Transport& t, const PairBuffers& buf, const Options& o, const Layout& layout,
                  Output* file, const std::string& buffers);
// With a GPU of its own for every rank: the pairs from device buffers through NCCL, and true;
// else (ranks sharing a GPU: NCCL takes one GPU per rank) nothing measured, a line saying why,
// and false (the caller measures them from host buffers). Collective. A CUDA build's.
bool run_pairs_device(Communicator& world, const Options& o, const Layout& layout, Output* file);
// 2. Every rank's sgemm and memcpy probes (concurrent or one rank at a time). Collective.
void run_probes(Communicator& world, const Options& o, const Layout& layout, Output* file);
// 3. Each node's allreduce, the nodes at once. Collective.
void run_nodes(Communicator& world, const Options& o, const Layout& layout, Output* file);
// 4. (--device cuda) Every GPU's GEMM and copy rates against its peaks, and each node's peer
// copies. Collective. A CUDA build's (gpus.cpp).
void run_gpus(Communicator& world, const Options& o, const Layout& layout, Output* file);
// Whether every rank sees a GPU; each rank that sees none says so on stderr. Collective.
bool gpus_usable(Communicator& world, const Layout& layout);

// A barrier whose waiting ranks sleep (1 ms between tests) rather than poll, for the probes: a
// rank polling in MPI_Barrier takes a share of a CPU from the rank probing beside it. Past
// timeout_s: TimeoutError naming `what`.
void idle_barrier(MPI_Comm comm, double timeout_s, const std::string& what);

}  // namespace commscope::doctor
