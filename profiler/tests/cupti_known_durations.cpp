// CUPTI against kernels of known duration: each kernel spins on the GPU's global timer for a
// requested time and records when it started and ended; the profile's kernel events must agree
// with those stamps, be linked to the operator that launched them, and the breakdown must sum
// to each iteration and hold the kernels' time.
//
//   test_profiler_cupti_known_durations [PROFILE.h5]
//
// Per iteration: operator "op.a" runs a 2000 us kernel; the host sleeps 1 ms (the device
// idles); operator "op.b" runs 500 us and 1000 us kernels back to back; the stream is
// synchronised. 5 iterations. Checks, per kernel: self-measured >= requested, and |CUPTI -
// self| <= max(2% of self, 20 us); per iteration: identity_ok, and kernel_ns within 5% of the
// kernels' self-measured sum. Prints a table (for docs/gpu-results.md). Exit 0 pass, 1 fail,
// 77 no usable GPU.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"
#include "spin_kernel.hpp"

namespace prof = commscope::profiler;

namespace {

struct Launch {
  int iteration;
  const char* op;
  std::uint64_t requested_ns;
  std::uint64_t* stamps;  // device
};

bool ok_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("FAIL: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

int run(const char* output) {
  constexpr int kIterations = 5;
  constexpr std::uint64_t kUs = 1000;
  cudaStream_t stream = nullptr;
  if (!ok_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) return 1;
  std::uint64_t* stamps = nullptr;
  if (!ok_cuda(cudaMalloc(reinterpret_cast<void**>(&stamps), sizeof(std::uint64_t) * 2 * 3 * kIterations), "cudaMalloc")) return 1;
  // A first launch outside the session: module loading is not part of what is measured.
  if (!ok_cuda(launch_spin(1000, stamps, stream), "warm-up launch") ||
      !ok_cuda(cudaStreamSynchronize(stream), "warm-up"))
    return 1;

  prof::SessionOptions so;
  so.output = output;
  so.backend = prof::BackendChoice::kCupti;
  so.command_line = "test_profiler_cupti_known_durations";
  prof::Session session(MPI_COMM_WORLD, so);
  if (std::string(session.backend()) != "cupti") {
    std::printf("FAIL: the session runs the '%s' backend, not CUPTI (see the warning above)\n", session.backend());
    return 1;
  }
  const prof::NameId op_a = prof::name_id("op.a"), op_b = prof::name_id("op.b");
  std::vector<Launch> launches;
  bool launched = true;
  for (int it = 0; it < kIterations && launched; ++it) {
    prof::IterationScope iteration(it);
    std::uint64_t* s = stamps + 6 * it;
    {
      prof::OperatorScope a(op_a);
      launched &= ok_cuda(launch_spin(2000 * kUs, s, stream), "launch");
      launches.push_back({it, "op.a", 2000 * kUs, s});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    {
      prof::OperatorScope b(op_b);
      launched &= ok_cuda(launch_spin(500 * kUs, s + 2, stream), "launch");
      launches.push_back({it, "op.b", 500 * kUs, s + 2});
      launched &= ok_cuda(launch_spin(1000 * kUs, s + 4, stream), "launch");
      launches.push_back({it, "op.b", 1000 * kUs, s + 4});
    }
    launched &= ok_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  const prof::Profile p = session.finish();
  if (!launched) return 1;
  std::vector<std::uint64_t> host(6 * kIterations);
  if (!ok_cuda(cudaMemcpy(host.data(), stamps, host.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost), "copy"))
    return 1;

  // The kernel events, in start order, and the operators they point at.
  const std::vector<prof::Event>& events = p.events.at(0);
  std::vector<const prof::Event*> kernels;
  for (const prof::Event& e : events)
    if (e.kind == prof::EventKind::kKernel && p.strings.at(e.name).find("spin_kernel") != std::string::npos)
      kernels.push_back(&e);
  std::sort(kernels.begin(), kernels.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  int failures = 0;
  if (kernels.size() != launches.size()) {
    std::printf("FAIL: %zu spin kernels in the profile, %zu launched\n", kernels.size(), launches.size());
    return 1;
  }
  auto operator_name = [&](std::uint64_t id) -> std::string {
    for (const prof::Event& e : events)
      if (e.kind == prof::EventKind::kOperator && e.id == id) return p.strings.at(e.name);
    return "(none)";
  };
  std::printf("%-4s %-5s %12s %12s %12s %10s  %s\n", "iter", "op", "requested_us", "self_us", "cupti_us", "diff_us",
              "verdict");
  std::vector<double> self_sum(kIterations, 0.0);
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    const std::size_t at = static_cast<std::size_t>(l.stamps - stamps);
    const double self = static_cast<double>(host[at + 1] - host[at]);
    const double cupti = static_cast<double>(kernels[i]->duration_ns());
    self_sum[static_cast<std::size_t>(l.iteration)] += self;
    const std::string op = operator_name(kernels[i]->parent);
    const bool ok = self >= static_cast<double>(l.requested_ns) &&
                    std::fabs(cupti - self) <= std::max(0.02 * self, 20000.0) && op == l.op &&
                    kernels[i]->iteration == l.iteration;
    failures += ok ? 0 : 1;
    std::printf("%-4d %-5s %12.1f %12.1f %12.1f %10.1f  %s%s\n", l.iteration, l.op, l.requested_ns / 1e3, self / 1e3,
                cupti / 1e3, (cupti - self) / 1e3, ok ? "ok" : "FAIL", op == l.op ? "" : (" (operator " + op + ")").c_str());
  }
  std::printf("%-4s %12s %12s %12s %12s %12s %s\n", "iter", "window_us", "kernel_us", "self_sum_us", "intra_us",
              "inter_us", "verdict");
  int rows = 0;
  for (const prof::BreakdownRow& r : p.breakdown) {
    if (r.rank != 0 || r.iteration < 0 || r.iteration >= kIterations) continue;
    ++rows;
    const double want = self_sum[static_cast<std::size_t>(r.iteration)];
    const bool ok = r.identity_ok != 0 &&
                    r.kernel_ns + r.intra_ns + r.inter_ns + r.comm_ns == r.window_ns &&
                    std::fabs(static_cast<double>(r.kernel_ns) - want) <= 0.05 * want;
    failures += ok ? 0 : 1;
    std::printf("%-4d %12.1f %12.1f %12.1f %12.1f %12.1f %s\n", r.iteration, r.window_ns / 1e3, r.kernel_ns / 1e3,
                want / 1e3, r.intra_ns / 1e3, r.inter_ns / 1e3, ok ? "ok" : "FAIL");
  }
  if (rows != kIterations) {
    std::printf("FAIL: %d breakdown rows, %d iterations\n", rows, kIterations);
    ++failures;
  }
  cudaFree(stamps);
  cudaStreamDestroy(stream);
  std::printf("%s: %d failure(s)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ngpu = 0;
  const cudaError_t e = cudaGetDeviceCount(&ngpu);
  int rc = 77;
  if (e != cudaSuccess || ngpu == 0)
    std::printf("SKIP: no usable GPU (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
  else
    rc = run(argc > 1 ? argv[1] : "");
  MPI_Finalize();
  return rc;
}
