// Synthetic machine models for the known-answer tests of expected_time (common.expected_time) and
// of the verdict rule (model.expected_verdicts): one definition, so that both suites'
// hand-worked numbers start from the same model.
#pragma once

#include "commscope/model/machine_model.hpp"

#include <string>
#include <utility>

namespace commscope::test_fixtures {

inline Rate rate(double gbps, FigureSource source = FigureSource::system, std::string detail = "") {
  return {gbps, source, std::move(detail)};
}

// `hosts` CPU nodes host1..hostN of `per_node` ranks each: 8 CPUs, copy 10 GB/s (measured,
// "memcpy 256 MiB"), NIC 0.125 GB/s (1 Gbit/s, system "eth0 1000 Mb/s"), 50 us per message (doctor).
inline MachineModel cluster(int hosts, int per_node) {
  MachineModel m;
  for (int h = 0; h < hosts; ++h) {
    NodeModel n;
    n.host = "host" + std::to_string(h + 1);
    n.ranks = per_node;
    n.cpus = 8;
    n.copy = rate(10, FigureSource::measured, "memcpy 256 MiB");
    n.nic = rate(0.125, FigureSource::system, "eth0 1000 Mb/s");
    m.nodes.push_back(n);
  }
  m.latency_us = 50;
  m.latency_source = FigureSource::doctor;
  return m;
}

}  // namespace commscope::test_fixtures
