// synthetic_bench OUT_DIR: bench results files with known answers, for the report's end-to-end
// tests (2 ranks, allreduce f32 sum, sizes in bytes, times in us):
//   ties.h5        mpi 2 us + S / 8 GB/s up to 1 MiB and 300 us + S / 1 GB/s from 2 MiB (2% noise);
//                  ring and tree both 5 us + S / 2 GB/s with 10% noise per call, 20 samples a row:
//                  "mpi below 2 MiB, tie (ring, tree) from 2 MiB (to 64 MiB, the largest size)", and mpi's fit in two regimes.
//   run1..3.h5     three runs without samples: ring 5 us + S / 2 GB/s, tree 1.3x ring, 2% noise
//                  between runs. One alone has no spread (a 1.3x lead is a tie); the three
//                  together have the run-to-run spread, and ring is ahead by more than it.
//   unfit.h5       ring 5 us + S / 2 GB/s and tree 3x ring (2% noise, 20 samples a row); rhd ring's
//                  line times 1 or 9 at alternate sizes, which no regime fits: "ring fastest" by
//                  the fits, rhd left out and said so.
//   stalled.h5     ring 5 us + S / 2 GB/s exactly, 2 of every row's 20 calls 100x: the mean per
//                  call (the time) 10.9x the median call, which the fit fits (8 B: 54.54 against
//                  5.004 us).
//   crowded.h5     ties.h5's algorithms, the ranks marked as outnumbering their CPUs: not judged.
//   cut.h5         run1.h5's rows, status "running" (stopped before the end of its sweep).
//   types.h5       ring in float and in bfloat16: the bfloat16 rows are left out, and listed.
//   predict.h5     exact lines, no noise, no samples, for predict's hand-computed answers:
//                  ring allreduce, allgather and reducescatter 10 us + S / 2 GB/s, mpi sendrecv
//                  4 us + S / 5 GB/s.
// synthetic_bench --sweep MIN MAX FACTOR FILE: one file at the sizes commscope-bench -b MIN -e MAX
// -f FACTOR measures (bytes), each algorithm with two known regimes and 3% noise per call:
//                  mpi 1 us + S / 6 GB/s up to 8 MiB, then S / 0.46 GB/s (Open MPI's allreduce on
//                  2 ranks of one node: 1.4 ms at 8 MiB, 73 ms at 32 MiB); ring 5 us + S / 2 GB/s
//                  up to 512 KiB (in cache), then 40 us + S / 0.8 GB/s.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_file_writer.hpp"

namespace h5 = commscope::h5;
namespace ct = commscope::analysis::testing;

namespace {

struct Algorithm {
  const char* name;
  const char* collective;
  std::function<double(double)> time_us;  // true time of one call at S bytes
  double noise;                           // relative, per call (with samples) or per run
  int stalled = 0;                        // calls of each row that take 100x (a preempted rank)
  const char* type = "float";
};
using Meta = std::vector<std::pair<std::string, std::string>>;  // /meta attributes added

// One file: every algorithm at 8 B .. max_bytes by factors of `step`, `samples` calls a row
// (0: no /samples table, sample_count 0, the time alone carries the noise).
void write(const std::string& path, const std::vector<Algorithm>& algos, double max_bytes, double step, int samples,
           unsigned seed, const Meta& meta = {}, double min_bytes = 8) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  h5::File f = h5::File::create(path);
  ct::write_bench_meta(f);
  for (const auto& [key, value] : meta) f.open_group("meta").set_attr(key, value);
  auto results = h5::Table<ct::BenchRecord>::create(f, "results", ct::bench_record_type());
  std::vector<ct::SampleRecord> calls;
  std::int64_t row = 0;
  for (double s = min_bytes; s <= max_bytes; s = std::ceil(s * step), ++row) {
    for (const Algorithm& a : algos) {
      std::vector<double> times;
      for (int i = 0; i < std::max(samples, 1); ++i)
        times.push_back(a.time_us(s) * (1 + a.noise * z(rng)) * (i < a.stalled ? 100 : 1));
      double mean = 0;
      for (double t : times) mean += t / static_cast<double>(times.size());
      ct::BenchRecord r = ct::bench_record(row, a.collective, a.name, false, static_cast<std::uint64_t>(s), mean);
      h5::set_fixed(r.type, a.type);
      r.iterations = std::max(samples, 1);
      r.sample_offset = calls.size();
      r.sample_count = static_cast<std::uint64_t>(samples);
      for (int i = 0; i < samples; ++i)
        calls.push_back({static_cast<std::uint64_t>(results.size()), i, times[static_cast<std::size_t>(i)], 0.1});
      results.append(r);
    }
  }
  if (samples > 0) h5::Table<ct::SampleRecord>::create(f, "samples", ct::sample_record_type()).append(calls);
  f.close();
}

constexpr double kMiB = 1024.0 * 1024.0;

std::function<double(double)> line(double alpha, double gbps) {
  return [=](double s) { return alpha + s / (gbps * 1e3); };
}

// Two regimes per algorithm at a sweep's sizes (--sweep): what the suite's fits must find.
int write_sweep(char** argv) {
  const double min = std::atof(argv[2]), max = std::atof(argv[3]), factor = std::atof(argv[4]);
  if (!(min > 0) || !(max >= min) || !(factor > 1)) {
    std::fprintf(stderr, "synthetic_bench: --sweep needs 0 < MIN <= MAX and FACTOR > 1\n");
    return 2;
  }
  const auto mpi = [eager = line(1, 6)](double s) { return s <= 8 * kMiB ? eager(s) : s / 460.0; };
  const auto ring = [cached = line(5, 2), memory = line(40, 0.8)](double s) {
    return s <= kMiB / 2 ? cached(s) : memory(s);
  };
  write(argv[5], {{"mpi", "allreduce", mpi, 0.03}, {"ring", "allreduce", ring, 0.03}}, max, factor, 20, 7, {}, min);
  std::printf("synthetic_bench: %s, %g to %g B by %gx\n", argv[5], min, max, factor);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--sweep") return write_sweep(argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: synthetic_bench OUT_DIR | synthetic_bench --sweep MIN MAX FACTOR FILE\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const auto mpi = [eager = line(2, 8), rendezvous = line(300, 1)](double s) {
    return s <= kMiB ? eager(s) : rendezvous(s);
  };
  const std::vector<Algorithm> ties = {
      {"mpi", "allreduce", mpi, 0.02}, {"ring", "allreduce", line(5, 2), 0.1}, {"tree", "allreduce", line(5, 2), 0.1}};
  write((out / "ties.h5").string(), ties, 64 * kMiB, 2, 20, 1);
  const auto ring = line(5, 2);
  const auto tree = [ring](double s) { return 1.3 * ring(s); };
  for (unsigned run = 1; run <= 3; ++run)
    write((out / ("run" + std::to_string(run) + ".h5")).string(),
          {{"ring", "allreduce", ring, 0.02}, {"tree", "allreduce", tree, 0.02}}, kMiB, 4, 0, 10 + run);
  const auto jumpy = [ring](double s) { return ring(s) * (static_cast<int>(std::log2(s)) % 2 ? 9 : 1); };
  write((out / "unfit.h5").string(),
        {{"ring", "allreduce", ring, 0.02},
         {"rhd", "allreduce", jumpy, 0.02},
         {"tree", "allreduce", [ring](double s) { return 3 * ring(s); }, 0.02}},
        kMiB, 2, 20, 30);
  write((out / "crowded.h5").string(), ties, kMiB, 2, 20, 1, {{"oversubscribed", "node0: 4 ranks on 2 CPUs"}});
  write((out / "cut.h5").string(), {{"ring", "allreduce", ring, 0.02}, {"tree", "allreduce", tree, 0.02}}, kMiB, 4, 0,
        11, {{"status", "running"}});
  write((out / "types.h5").string(),
        {{"ring", "allreduce", ring, 0.02}, {"ring", "allreduce", ring, 0.02, 0, "bfloat16"}}, kMiB, 4, 0, 50);
  write((out / "stalled.h5").string(), {{"ring", "allreduce", ring, 0, 2}}, kMiB, 4, 20, 40);
  write((out / "predict.h5").string(),
        {{"ring", "allreduce", line(10, 2), 0},
         {"ring", "allgather", line(10, 2), 0},
         {"ring", "reducescatter", line(10, 2), 0},
         {"mpi", "sendrecv", line(4, 5), 0}},
        64 * kMiB, 2, 0, 20);
  std::printf(
      "synthetic_bench: ties.h5, run1.h5, run2.h5, run3.h5, unfit.h5, stalled.h5, crowded.h5, cut.h5, types.h5, "
      "predict.h5 in %s\n",
      out.c_str());
  return 0;
}
