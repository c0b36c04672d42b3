// synthetic_verdicts OUT_DIR: bench results files whose header records a machine model, for the
// verdicts' known answers end to end (tests/verdicts_end_to_end.sh works them out by hand):
//   cluster.h5  4 ranks on host1:2,host2:2 (allreduce f32 sum, out-of-place), the model
//               model/tests/machine_fixtures.hpp's cluster(2, 2) (copy 10 GB/s, links 0.125 GB/s,
//               system "eth0 1000 Mb/s") but host2's link given as 0.1 GB/s
//               (--link-rate host2=800mbit), no latency of its own (the run's own is taken), and
//               the doctor's measured links as the bench records them from --doctor: host1 0.116,
//               host2 0.012 GB/s. Rows: ring 8 B 300 us, 64 MiB busbw 0.088; rhd 8 B 400 us,
//               64 MiB busbw 0.0075; hier 64 MiB busbw 0.13.
//   nonic.h5    the same rows, host2's link with no rate (its NIC reported none, none given).
//   curve.h5    2 ranks on one node (host1:2), latency 1 us (measured), a copy rate of 8 GB/s
//               with its curve by a rank's working set (40 GB/s at 16 KiB, 30 at 256 KiB, 10 at
//               4 MiB, 8 at 128 MiB), no rate between the ranks (half the copy rate's). Rows: ring
//               4 KiB 2.5 us, 1 MiB busbw 5, 64 MiB busbw 3.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_file_writer.hpp"
#include "commscope/model/machine_model.hpp"
#include "machine_fixtures.hpp"

namespace h5 = commscope::h5;
namespace ct = commscope::analysis::testing;
using commscope::FigureSource;
using commscope::MachineModel;

namespace {

constexpr double kN = 64.0 * 1024 * 1024;

struct Row {
  const char* algorithm;
  double bytes;
  double time_us;
};

// The time of a 4-rank allreduce row of `busbw` GB/s: nccl-tests' busbw = 1.5 n / t.
double time_of_busbw(double bytes, double busbw) {
  return 1.5 * bytes / (busbw * 1e3);
}

// The run: its ranks, hosts and command line.
struct Run {
  int ranks = 4;
  const char* nhosts = "2";
  const char* hosts = "host1:2,host2:2";
  const char* command = "commscope-bench allreduce --algo ring,rhd,hier --doctor d.h5 --link-rate host2=800mbit";
};

void write(const std::string& path, const MachineModel& model, const std::vector<Row>& rows, const Run& run = {}) {
  h5::File f = h5::File::create(path);
  ct::write_bench_meta(f, std::string(commscope::schemas::kBench), run.ranks);
  h5::Group meta = f.open_group("meta");
  meta.set_attr("nhosts", run.nhosts);
  meta.set_attr("hosts", run.hosts);
  meta.set_attr("command_line", run.command);
  meta.set_attr("machine_model", commscope::to_text(model));
  auto results = h5::Table<ct::BenchRecord>::create(f, "results", ct::bench_record_type());
  std::int64_t n = 0;
  for (const Row& r : rows) {
    ct::BenchRecord b =
        ct::bench_record(n++, "allreduce", r.algorithm, false, static_cast<std::uint64_t>(r.bytes), r.time_us, run.ranks);
    b.sample_count = 0;
    b.sample_offset = 0;
    results.append(b);
  }
  f.close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: synthetic_verdicts OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  MachineModel m = commscope::test_fixtures::cluster(2, 2);
  m.latency_us = 0;  // the header records no latency: the report takes the run's own
  m.latency_source = FigureSource::none;
  m.nodes[1].nic = {0.1, FigureSource::user, "--link-rate host2=800mbit"};
  m.nodes[0].nic_measured = {0.116, FigureSource::doctor, "d.h5: fastest of 1 host pair"};
  m.nodes[1].nic_measured = {0.012, FigureSource::doctor, "d.h5: fastest of 1 host pair"};
  const std::vector<Row> rows{{"ring", 8, 300},
                              {"rhd", 8, 400},
                              {"ring", kN, time_of_busbw(kN, 0.088)},
                              {"rhd", kN, time_of_busbw(kN, 0.0075)},
                              {"hier", kN, time_of_busbw(kN, 0.13)}};
  write((out / "cluster.h5").string(), m, rows);
  m.nodes[1].nic = {};
  write((out / "nonic.h5").string(), m, rows);
  // One node of 2 ranks, its copy rate by size; busbw = n / t on 2 ranks.
  MachineModel one = commscope::test_fixtures::cluster(1, 2);
  one.latency_us = 1, one.latency_source = FigureSource::measured, one.latency_detail = "8 B ping-pong";
  one.nodes[0].copy = {8, FigureSource::measured, "memcpy 128 MiB, best of 4"};
  one.nodes[0].copy.curve = {{16384, 40}, {262144, 30}, {4194304, 10}, {134217728, 8}};
  one.nodes[0].intra = {};
  write((out / "curve.h5").string(), one,
        {{"ring", 4096, 2.5}, {"ring", 1048576, 1048576 / 5e3}, {"ring", kN, kN / 3e3}},
        {2, "1", "host1:2", "commscope-bench allreduce --algo ring -b 4K -e 64M -f 256 --out curve.h5"});
  std::printf("synthetic_verdicts: cluster.h5, nonic.h5, curve.h5 in %s\n", out.c_str());
  return 0;
}
