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
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace commscope::analysis {

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
  bool judge_latency = true;  // false where ranks outnumber CPUs (latency is the scheduler's)
  bool judge_probes = true;   // false where other work shared the probing CPUs
};

struct DoctorFinding {
  std::string kind;     // "bandwidth host", "latency link", "sgemm node", "allreduce node", ...
  std::string subject;  // a host, "hostA <-> hostB", a rank
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
