// What recording costs (a benchmark, not a test): build/bin/commscope-profiler-overhead.
// Each iteration records one event (or two for the nested case); ns_per_event is the figure
// the profiler's budget (< 50 ns per event) is about. Buffers are sized for the run up front.

#include <benchmark/benchmark.h>

#include "../src/registry.hpp"
#include "commscope/profiler/clock.hpp"
#include "commscope/profiler/recorder.hpp"

namespace cp = commscope::profiler;

namespace {

// Recording on with room for `events` events, for the duration of a benchmark run.
class Recording {
 public:
  explicit Recording(std::size_t events) {
    cp::detail::configure_buffers(std::size_t{1} << 16, events + (std::size_t{1} << 17), events);
    clock_.start();
    cp::detail::g_recording.store(true);
  }
  ~Recording() {
    cp::detail::g_recording.store(false);
    std::int64_t dropped = 0;
    benchmark::DoNotOptimize(cp::detail::collect_events(0, dropped).size());
    cp::detail::configure_buffers(std::size_t{1} << 16, std::size_t{1} << 16, 0);  // give the memory back
  }

 private:
  cp::TickConverter clock_;
};

void per_event(benchmark::State& state, double events_per_iteration) {
  const double events = static_cast<double>(state.iterations()) * events_per_iteration;
  state.counters["ns_per_event"] =
      benchmark::Counter(events, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}

void BM_KernelScope(benchmark::State& state) {
  Recording rec(static_cast<std::size_t>(state.max_iterations));
  const auto name = cp::name_id("kernel");
  for (auto _ : state) {
    cp::KernelScope k(name);
    benchmark::ClobberMemory();
  }
  per_event(state, 1);
}

void BM_OperatorWithKernel(benchmark::State& state) {
  Recording rec(2 * static_cast<std::size_t>(state.max_iterations));
  const auto op = cp::name_id("op"), kernel = cp::name_id("kernel");
  for (auto _ : state) {
    cp::OperatorScope o(op);
    cp::KernelScope k(kernel);
    benchmark::ClobberMemory();
  }
  per_event(state, 2);
}

void BM_CommScope(benchmark::State& state) {
  Recording rec(static_cast<std::size_t>(state.max_iterations));
  const auto coll = cp::name_id("allreduce"), algo = cp::name_id("ring");
  for (auto _ : state) {
    cp::CommScope c(coll, algo, 1024);
    benchmark::ClobberMemory();
  }
  per_event(state, 1);
}

// The macro form (name interned once through a function-local static).
void BM_KernelMacro(benchmark::State& state) {
  Recording rec(static_cast<std::size_t>(state.max_iterations));
  for (auto _ : state) {
    COMMSCOPE_PROFILE_KERNEL("macro-kernel");
    benchmark::ClobberMemory();
  }
  per_event(state, 1);
}

// No session recording: what instrumented code costs when the profiler is off.
void BM_KernelScopeDisabled(benchmark::State& state) {
  cp::detail::g_recording.store(false);
  const auto name = cp::name_id("kernel");
  for (auto _ : state) {
    cp::KernelScope k(name);
    benchmark::ClobberMemory();
  }
  per_event(state, 1);
}

void BM_Ticks(benchmark::State& state) {
  cp::TickConverter clock;
  clock.start();
  for (auto _ : state) benchmark::DoNotOptimize(cp::ticks());
  state.SetLabel(clock.source());
}

void BM_MonotonicClock(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(cp::mono_ns());
}

}  // namespace

// One million events per run, as the budget is stated.
BENCHMARK(BM_KernelScope)->Iterations(1'000'000)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_OperatorWithKernel)->Iterations(500'000)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_CommScope)->Iterations(1'000'000)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_KernelMacro)->Iterations(1'000'000)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_KernelScopeDisabled)->Iterations(1'000'000)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_Ticks);
BENCHMARK(BM_MonotonicClock);

BENCHMARK_MAIN();
