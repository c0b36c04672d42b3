// commscope-microbench: the local (on-host) reduction loops that the CPU transports run
// between messages, measured with Google Benchmark per datatype and reduction operation,
// beside memcpy on the same buffers. No MPI: one process, one thread.
//
// Benchmarks (registered at run time), the last component is the buffer size in bytes; one
// buffer size for every type, so count = bytes / type_size:
//   reduce/<type>/<op>/<bytes>   dst = a op b over the whole buffer (commscope::reduce_host)
//   memcpy/<bytes>               std::memcpy(dst, a, bytes)
//
// Bandwidth convention (the bytes_per_second column):
//   reduce counts 3 streams of `bytes` per iteration: read a, read b, write dst.
//   memcpy counts 2 streams of `bytes` per iteration: read src, write dst.
// elems_per_s (reductions only) is elements combined per second. The console prints
// bytes_per_second in binary units (G/s = 2^30 B/s); the JSON output holds plain bytes/s.
//
// Filter with --benchmark_filter, e.g. --benchmark_filter='reduce/f32/.*|memcpy/.*'.
//
// `commscope-microbench harness [--bytes 8] [--calls N] [--rounds R]` (under mpirun or alone)
// measures instead what commscope's harness adds to an MPI_Allreduce call: harness_overhead.cpp.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "commscope/collectives/half.hpp"
#include "harness_overhead.hpp"
#include "commscope/collectives/reduce.hpp"
#include "commscope/collectives/types.hpp"

namespace {

using commscope::DataType;
using commscope::ReduceOp;

// Default buffer sizes: 4 KiB (L1), 256 KiB (L2), 4 MiB (LLC), 64 MiB (memory).
constexpr std::int64_t kSizes[] = {std::int64_t{4} << 10, std::int64_t{256} << 10, std::int64_t{4} << 20,
                                   std::int64_t{64} << 20};
constexpr std::size_t kAlignment = 64;

const char kDescription[] =
    "commscope-microbench: local reduction loops (dst = a op b) per datatype and op, beside memcpy.\n"
    "  reduce/<type>/<op>/<bytes>: bytes_per_second counts 3 streams of <bytes> per iteration\n"
    "                              (read a, read b, write dst); elems_per_s = elements combined per second.\n"
    "  memcpy/<bytes>:             bytes_per_second counts 2 streams of <bytes> per iteration\n"
    "                              (read src, write dst).\n"
    "  The console prints bytes_per_second in binary units (G/s = 2^30 B/s); JSON holds bytes/s.\n"
    "  Default sizes: 4096, 262144, 4194304, 67108864 bytes. Select with --benchmark_filter=<regex>.\n";

struct FreeDeleter {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};
using Block = std::unique_ptr<std::byte, FreeDeleter>;

// The three buffers every benchmark works on, grown to the largest size asked for so far and
// shared by all benchmarks (so memcpy and the reductions run on the same memory).
class Workspace {
 public:
  static Workspace& get() {
    static Workspace w;
    return w;
  }
  // Make room for `bytes` in each buffer. Throws std::bad_alloc when memory runs out.
  void reserve(std::size_t bytes) {
    if (bytes <= capacity_) return;
    const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    a_ = allocate(rounded);
    b_ = allocate(rounded);
    dst_ = allocate(rounded);
    capacity_ = rounded;
  }
  std::byte* a() const { return a_.get(); }
  std::byte* b() const { return b_.get(); }
  std::byte* dst() const { return dst_.get(); }

 private:
  static Block allocate(std::size_t bytes) {
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return Block(static_cast<std::byte*>(p));
  }
  Block a_, b_, dst_;
  std::size_t capacity_ = 0;
};

// Element i of an input: small values that keep every op in range and away from denormals
// (prod of two of them is at most 4; exact in f16 and bf16). seed varies a against b.
double input_value(std::size_t i, unsigned seed) {
  return 1.0 + static_cast<double>((i + seed) % 8) * 0.125;
}
std::int64_t input_int(std::size_t i, unsigned seed) {
  return 1 + static_cast<std::int64_t>((i + seed) % 7);
}

template <typename T>
void fill_as(std::byte* buf, std::size_t count, T (*make)(std::size_t, unsigned), unsigned seed) {
  T* p = reinterpret_cast<T*>(buf);
  for (std::size_t i = 0; i < count; ++i) p[i] = make(i, seed);
}

// Write every element of buf (first touch happens here, outside the timed loop).
void fill(std::byte* buf, std::size_t count, DataType type, unsigned seed) {
  switch (type) {
    case DataType::f32:
      fill_as<float>(
          buf, count, [](std::size_t i, unsigned s) { return static_cast<float>(input_value(i, s)); }, seed);
      break;
    case DataType::f64:
      fill_as<double>(
          buf, count, [](std::size_t i, unsigned s) { return input_value(i, s); }, seed);
      break;
    case DataType::f16:
      fill_as<std::uint16_t>(
          buf, count,
          [](std::size_t i, unsigned s) { return commscope::f32_to_f16(static_cast<float>(input_value(i, s))); }, seed);
      break;
    case DataType::bf16:
      fill_as<std::uint16_t>(
          buf, count,
          [](std::size_t i, unsigned s) { return commscope::f32_to_bf16(static_cast<float>(input_value(i, s))); },
          seed);
      break;
    case DataType::i32:
      fill_as<std::int32_t>(
          buf, count, [](std::size_t i, unsigned s) { return static_cast<std::int32_t>(input_int(i, s)); }, seed);
      break;
    case DataType::i64:
      fill_as<std::int64_t>(
          buf, count, [](std::size_t i, unsigned s) { return input_int(i, s); }, seed);
      break;
    case DataType::u8:
      fill_as<std::uint8_t>(
          buf, count, [](std::size_t i, unsigned s) { return static_cast<std::uint8_t>(input_int(i, s)); }, seed);
      break;
    case DataType::i8:
      fill_as<std::int8_t>(
          buf, count, [](std::size_t i, unsigned s) { return static_cast<std::int8_t>(input_int(i, s)); }, seed);
      break;
    case DataType::u32:
      fill_as<std::uint32_t>(
          buf, count, [](std::size_t i, unsigned s) { return static_cast<std::uint32_t>(input_int(i, s)); }, seed);
      break;
    case DataType::u64:
      fill_as<std::uint64_t>(
          buf, count, [](std::size_t i, unsigned s) { return static_cast<std::uint64_t>(input_int(i, s)); }, seed);
      break;
  }
}

void bench_reduce(benchmark::State& state, DataType type, ReduceOp op) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / commscope::type_size(type);
  Workspace& ws = Workspace::get();
  ws.reserve(bytes);
  fill(ws.a(), count, type, 0);
  fill(ws.b(), count, type, 3);
  std::memset(ws.dst(), 0, bytes);
  std::byte* dst = ws.dst();
  const std::byte* a = ws.a();
  const std::byte* b = ws.b();
  for (auto _ : state) {
    commscope::reduce_host(dst, a, b, count, type, op);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  const auto iters = static_cast<std::int64_t>(state.iterations());
  // 3 streams per iteration: read a, read b, write dst.
  state.SetBytesProcessed(iters * 3 * static_cast<std::int64_t>(count * commscope::type_size(type)));
  state.counters["elems_per_s"] =
      benchmark::Counter(static_cast<double>(iters) * static_cast<double>(count), benchmark::Counter::kIsRate);
}

void bench_memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Workspace& ws = Workspace::get();
  ws.reserve(bytes);
  fill(ws.a(), bytes, DataType::u8, 0);
  std::memset(ws.dst(), 0, bytes);
  std::byte* dst = ws.dst();
  const std::byte* src = ws.a();
  for (auto _ : state) {
    std::memcpy(dst, src, bytes);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  // 2 streams per iteration: read src, write dst.
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * static_cast<std::int64_t>(bytes));
}

void with_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t s : kSizes) b->Arg(s);
}

void register_benchmarks() {
  with_sizes(benchmark::RegisterBenchmark("memcpy", bench_memcpy));
  for (DataType type : commscope::kAllDataTypes) {
    for (ReduceOp op : commscope::kAllReduceOps) {
      const std::string name =
          "reduce/" + std::string(commscope::to_string(type)) + "/" + std::string(commscope::to_string(op));
      with_sizes(
          benchmark::RegisterBenchmark(name.c_str(), [type, op](benchmark::State& st) { bench_reduce(st, type, op); }));
    }
  }
}

void print_help() {
  std::fputs(kDescription, stdout);
  std::fputs("\n", stdout);
  benchmark::PrintDefaultHelp();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "harness") return commscope::bench::harness_main(argc - 1, argv + 1);
  benchmark::Initialize(&argc, argv, print_help);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("bandwidth",
                              "reduce: 3 streams (read a, read b, write dst); memcpy: 2 streams (read src, write dst)");
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
