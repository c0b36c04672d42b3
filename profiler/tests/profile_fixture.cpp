// test_profile_fixture OUT.h5 [--per-rank]: writes a synthetic 2-rank profile (3 iterations of
// nested operators, runtime calls, kernels and copies on device streams, host and device
// communication, syncs, a second host thread) and prints its number of events on stdout.
// --per-rank writes the events into OUT.rank0000N.h5 files (the per-rank layout).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "commscope/formats/profile_file.hpp"

namespace cp = commscope::profiler;

namespace {

struct Builder {
  cp::StringTable strings;
  std::vector<cp::Event> events;
  std::uint64_t next_id = 1;
  std::uint64_t next_correlation = 100;

  cp::Event& add(cp::EventKind kind, std::int64_t start, std::int64_t end, std::string_view name, int iteration,
                 std::uint64_t parent) {
    cp::Event e;
    e.kind = kind;
    e.start_ns = start;
    e.end_ns = end;
    e.name = strings.intern(name);
    e.iteration = iteration;
    e.parent = parent;
    if (kind == cp::EventKind::kOperator || kind == cp::EventKind::kCommunication) e.id = next_id++;
    events.push_back(e);
    return events.back();
  }
  cp::Event& on_device(cp::Event& e, int device, std::uint32_t stream) {
    e.track_kind = cp::TrackKind::kDeviceStream;
    e.device = static_cast<std::int16_t>(device);
    e.track = stream;
    return e;
  }
  // A runtime call on the host launching `kind` on the device; both carry one correlation id.
  void launch(cp::EventKind kind, std::int64_t at, std::int64_t device_start, std::int64_t device_end,
              std::string_view name, int iteration, std::uint64_t parent, int device, std::uint32_t stream,
              std::int64_t bytes = 0, std::string_view detail = {}) {
    const std::uint64_t correlation = next_correlation++;
    add(cp::EventKind::kRuntime, at, at + 800, kind == cp::EventKind::kKernel ? "cudaLaunchKernel" : "cudaMemcpyAsync",
        iteration, parent)
        .correlation = correlation;
    cp::Event& e = on_device(add(kind, device_start, device_end, name, iteration, parent), device, stream);
    e.correlation = correlation;
    e.bytes = bytes;
    e.detail = strings.intern(detail);
  }
};

void build_rank(Builder& b, int rank) {
  const std::int64_t skew = rank * 1'700;
  for (int it = 0; it < 3; ++it) {
    const std::int64_t t = it * 10'000'000 + skew;
    b.add(cp::EventKind::kIteration, t, t + 9'500'000, "train_step", it, 0);
    const std::uint64_t forward = b.add(cp::EventKind::kOperator, t + 1'000, t + 4'000'000, "forward", it, 0).id;
    const std::uint64_t linear = b.add(cp::EventKind::kOperator, t + 2'000, t + 2'000'000, "linear", it, forward).id;
    b.launch(cp::EventKind::kMemcpy, t + 3'000, t + 10'000, t + 60'000, "HtoD \"batch\"", it, linear, rank, 13, 1 << 20,
             "HtoD");
    b.launch(cp::EventKind::kKernel, t + 5'000, t + 70'000, t + 1'900'000, "gemm<128,128>", it, linear, rank, 7);
    const std::uint64_t relu = b.add(cp::EventKind::kOperator, t + 2'100'000, t + 3'900'000, "relu", it, forward).id;
    b.launch(cp::EventKind::kKernel, t + 2'101'000, t + 2'200'000, t + 3'800'000, "relu_kernel", it, relu, rank, 7);
    const std::uint64_t backward = b.add(cp::EventKind::kOperator, t + 4'100'000, t + 8'000'000, "backward", it, 0).id;
    b.launch(cp::EventKind::kKernel, t + 4'101'000, t + 4'200'000, t + 6'000'000, "gemm_backward", it, backward, rank,
             7);
    cp::Event& nccl = b.on_device(
        b.add(cp::EventKind::kCommunication, t + 6'000'000, t + 7'900'000, "ncclAllReduce", it, backward), rank, 20);
    nccl.bytes = 64 << 20;
    nccl.seq = it;
    nccl.detail = b.strings.intern("ring");
    cp::Event& host_comm =
        b.add(cp::EventKind::kCommunication, t + 8'000'000, t + 8'300'000, "allreduce", it, backward);
    host_comm.bytes = 8;
    host_comm.seq = 100 + it;
    host_comm.detail = b.strings.intern("recursive doubling");
    b.on_device(b.add(cp::EventKind::kMemset, t + 8'310'000, t + 8'320'000, "memset", it, 0), rank, 13).bytes = 4096;
    b.add(cp::EventKind::kSync, t + 8'300'000, t + 9'400'000, "cudaStreamSynchronize", it, 0);
    cp::Event& loader = b.add(cp::EventKind::kOperator, t + 500'000, t + 6'500'000, "data_loader", it, 0);
    loader.track = 1;  // a second host thread
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "--per-rank")) {
    std::fprintf(stderr, "usage: test_profile_fixture OUT.h5 [--per-rank]\n");
    return 2;
  }
  const std::string path = argv[1];
  const bool per_rank = argc == 3;
  try {
    constexpr int kRanks = 2;
    Builder b;
    std::vector<std::vector<cp::Event>> events;
    for (int r = 0; r < kRanks; ++r) {
      b.events.clear();
      build_rank(b, r);
      events.push_back(b.events);
    }
    const std::vector<std::string> strings = b.strings.strings();

    cp::ProfileMeta meta;
    meta.version = "fixture";
    meta.command_line = std::string(argv[0]) + " " + path + (per_rank ? " --per-rank" : "");
    meta.clock = "steady_clock";
    meta.epoch_unix_ns = 1'700'000'000'000'000'000;
    meta.nranks = kRanks;
    meta.events_layout = per_rank ? "per-rank" : "single";
    meta.attributes = {{"model", "synthetic \"mlp\""}, {"batch", "32"}};
    std::vector<cp::RankInfo> ranks;
    std::size_t total = 0;
    for (int r = 0; r < kRanks; ++r) {
      const auto& mine = events[static_cast<std::size_t>(r)];
      ranks.push_back({r, "node-" + std::to_string(r), r == 0 ? 0 : -2'500, 120, "cupti",
                       static_cast<std::int64_t>(mine.size()), 0, std::to_string(r), 1, 8, ""});
      total += mine.size();
      if (per_rank) {
        const std::string rank_path = cp::rank_event_file_name(path, r);
        meta.event_files.push_back(std::filesystem::path(rank_path).filename().string());
        cp::write_rank_event_file(rank_path, meta, r, strings, mine);
      }
    }

    std::vector<cp::BreakdownRow> breakdown;
    std::vector<cp::OperatorTotalRow> operators;
    for (std::int32_t r = 0; r < kRanks; ++r) {
      for (std::int32_t it = 0; it < 3; ++it) {
        cp::BreakdownRow row;
        row.rank = r;
        row.iteration = it;
        row.start_ns = it * 10'000'000;
        row.window_ns = 9'500'000;
        row.kernel_ns = 5'500'000;
        row.intra_ns = 1'000'000;
        row.inter_ns = 800'000;
        row.comm_ns = 2'200'000;
        row.comm_wait_ns = 200'000;
        row.comm_transfer_ns = 2'000'000;
        row.overlap_ns = 0;
        row.kernels = 4;
        row.communications = 2;
        row.operators = 5;
        row.identity_ok = 1;
        breakdown.push_back(row);
      }
      for (const char* name : {"backward", "data_loader", "forward", "linear", "relu"}) {
        operators.push_back({r, b.strings.intern(name), 3, 9'000'000, 4'000'000, 1'900'000, 100'000});
      }
    }

    cp::ProfileWriter writer(path, meta, ranks, strings);
    if (!per_rank) {
      for (int r = 0; r < kRanks; ++r) writer.append_events(r, events[static_cast<std::size_t>(r)]);
    }
    writer.write_breakdown(breakdown);
    writer.write_operators(operators);
    writer.close();
    std::printf("%zu\n", total);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_profile_fixture: %s\n", e.what());
    return 1;
  }
}
