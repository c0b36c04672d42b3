// The doctor's findings rule (commscope-report doctor; docs/doctor.md) over a table of values: which
// hosts' links are slow, which single links, which nodes and ranks, each named by the robust rule
// of outliers.hpp against the median of its peers. No I/O: the report reads the file into
// DoctorValues and prints what find_doctor_outliers returns.
//
// How links are judged. Every rank pair is measured in both directions; a host pair's value is
// the median over its rank pairs of each direction, and the worse direction counts (a link slow one
// way is a bad link). Links between hosts and links inside a host are judged apart (shared
// memory is no peer of a network). A host whose links are all slow makes every link it is on an
// outlier, and when a quarter or more of the hosts are on the bad side the links alone cannot say
// which: so hosts are judged first, each by the median of its links against the links between the
// other hosts (not against the other hosts' medians: with 3 hosts a good host's median is half
// made of the bad host's links), and a host named slow takes its links with it; the links left
// are then judged among themselves. A rank pair measured in several passes counts by its best pass:
// interference (other work, a busy switch) only ever slows a measurement down.
//
// GPUs (--device cuda) by the same rule: each probe (bf16 and fp32 GEMM, the device copy, and
// the host link's two directions) per node first (the median of its GPUs, over the nodes), then
// per GPU over every GPU of the run, a node's GPUs left out once the node is named; a GPU slow in
// several probes is one finding, its compute apart from its host link. Peer links (GPU pairs of
// a node, the worse direction of the one-way copies, and both directions at once) per node first
// (the median of its pairs), then each pair among the pairs of its node: NVLink and PCIe nodes
// are not each other's peers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commscope/model/machine_model.hpp"

namespace commscope::analysis {

// One GPU of one rank (commscope-doctor --device cuda): its rates and the peaks they are set against
// (NaN: not measured or not known).
struct DoctorGpu {
  std::string host;
  std::int64_t rank = 0, device = 0;
  std::string name;
  double gemm_fp32_gflops = 0, gemm_fp32_peak_gflops = 0, gemm_bf16_gflops = 0, gemm_bf16_peak_gflops = 0;
  double d2d_GBps = 0, d2d_peak_GBps = 0, h2d_GBps = 0, d2h_GBps = 0, host_link_GBps = 0;
  std::string host_link;  // "PCIe gen 5 x16 (nvidia-smi: max gen, width now)"
  std::string bus_id;     // "0000:1B:00.0"; "" in files before it
};
// One ordered pair of a node's GPUs: the peer copy src -> dst alone, and both directions at once.
using DoctorPeer = GpuPairMeasurement;  // model/machine_model.hpp

// What a doctor run measured, as plain values (the file's rows, without their file).
struct DoctorValues {
  struct Pair {  // one direction of one rank pair in one pass
    std::int64_t src = 0, dst = 0;
    double bandwidth_GBps = 0, latency_us = 0;  // NaN: not measured
  };
  struct Rank {
    std::int64_t rank = 0;
    double sgemm_gflops = 0, memcpy_GBps = 0;
  };
  struct Node {
    std::string host;
    double busbw_GBps = 0;
  };
  std::vector<std::string> host_of;  // every rank's host, in rank order ("?" where no row says)
  std::vector<Pair> pairs;
  std::vector<Rank> ranks;
  std::vector<Node> nodes;
  std::vector<DoctorGpu> gpus;    // none in a CPU run
  std::vector<DoctorPeer> peers;  // none in a CPU run or on nodes of one GPU
  bool judge_latency = true;      // false where ranks outnumber CPUs (latency is the scheduler's)
  bool judge_probes = true;       // false where other work shared the probing CPUs
};

struct DoctorFinding {
  std::string kind;     // "bandwidth host", "latency link", "sgemm node", "allreduce node", "gpu", ...
  std::string subject;  // a host, "hostA <-> hostB", a rank, "host rank 3 GPU 3", "host GPU 2 <-> GPU 6"
  double value = 0, median = 0;
  std::string unit, text;  // text: what the report prints, one or more lines
};

// One link metric's matrices: ranks[s][t] (s sends to t; the best pass) and links[a][b] between
// hosts (a == b: inside host a; the worse direction of the medians).
struct DoctorLinks {
  const char* name;  // "bandwidth", "latency"
  const char* unit;  // "GB/s", "us"
  bool low_is_bad;
  std::vector<std::vector<double>> ranks, hosts;
  bool measured = false;  // some host link is finite
};

struct DoctorFindings {
  std::vector<std::string> hosts;     // in the order of their first rank
  std::vector<std::size_t> node;      // each rank's host index
  std::vector<std::size_t> ranks_on;  // ranks per host
  DoctorLinks bandwidth, latency;
  std::vector<DoctorFinding> findings;  // in the report's order
  int judged_kinds = 0;                 // kinds of value with enough values for the rule
  std::string unjudged;                 // "links (1), ranks' probes (2)": too few to judge
};

DoctorFindings find_doctor_outliers(const DoctorValues& v);

}  // namespace commscope::analysis
