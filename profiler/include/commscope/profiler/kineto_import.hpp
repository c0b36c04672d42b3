#pragma once
// PyTorch profiler (Kineto) traces -> a commscope profile (docs/profiler.md, "Importing PyTorch
// profiler traces"). Each input is one rank's Chrome-trace JSON, plain or gzip, read as a stream
// (json_stream.hpp): what is kept per rank is the compact Event list, never the document.
//
//   kernel / gpu_memcpy / gpu_memset      -> device kernel, memcpy, memset (NCCL kernels: communication)
//   cpu_op / user_annotation / python_function -> operators, nested by time on their thread
//   ProfilerStep#N                        -> iteration N (or one window over the whole trace)
//   cuda_runtime / cuda_driver / cuda_sync -> runtime / sync events
//   record_param_comms, nccl:*            -> host communication (collective, bytes, process group)
// A device activity's operator is the innermost operator around the runtime call with the same
// correlation id (the ac2g flow), else the operator with its External id. Collective instances
// are matched across ranks (process group and sequence number; else, on a shared clock, the
// instances of one collective whose device intervals overlap; else by order), then the
// breakdown is the one the live profiler computes (analyze_ranks).

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/formats/profile.hpp"

namespace commscope::profiler {

// A trace that cannot be imported: what() is one line, "FILE: reason (byte N)" where a byte
// offset (in the decompressed text) is known.
class KinetoImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class KinetoWindow : std::uint8_t {
  kSteps,  // one window per ProfilerStep#N (a rank without steps gets one window over its trace)
  kTrace,  // one window per rank: its first to its last device activity
};

enum class KinetoClock : std::uint8_t {
  kAuto,    // shared when every file has wall-clock (Unix epoch) times, else aligned
  kShared,  // the files' times are on one clock: offsets 0
  kAlign,   // offsets from matched collective ends
};

struct KinetoImportOptions {
  std::vector<std::string> files;  // one trace per rank
  KinetoWindow window = KinetoWindow::kSteps;
  KinetoClock clock = KinetoClock::kAuto;
  // Device activities rounded to whole us as HTA does by default (start up, end down, in doubles, in the
  // trace's own time base), to compare with its figures; off: exact ns.
  bool hta_rounding = false;
  std::string command_line;  // stored in /meta command_line
};

// The figures Holistic Trace Analysis reports (temporal breakdown, communication-computation
// overlap) in terms of the breakdown, per rank over its windows. The breakdown counts
// communication first and memcpy/memset as kernel time; HTA counts compute kernels first and
// memcpy/memset as non-compute, so two more unions are measured to translate (docs/profiler.md):
//   HTA idle        = intra + inter
//   HTA compute     = kernel - memory_only + compute_comm   (= |compute kernels|)
//   HTA non-compute = comm - compute_comm + memory_only
//   HTA overlap %   = 100 compute_comm / comm
struct HtaView {
  std::int64_t window_ns = 0;  // summed windows (HTA's "kernel_time" for --window trace)
  std::int64_t kernel_ns = 0;  // breakdown sums over the windows
  std::int64_t intra_ns = 0;
  std::int64_t inter_ns = 0;
  std::int64_t comm_ns = 0;
  std::int64_t compute_comm_ns = 0;  // |compute kernels and communication|
  std::int64_t memory_only_ns = 0;   // |memcpy, memset minus compute kernels and communication|

  std::int64_t idle_ns() const noexcept { return intra_ns + inter_ns; }
  std::int64_t compute_ns() const noexcept { return kernel_ns - memory_only_ns + compute_comm_ns; }
  std::int64_t non_compute_ns() const noexcept { return comm_ns - compute_comm_ns + memory_only_ns; }
  double overlap_pct() const noexcept {
    return comm_ns > 0 ? 100.0 * static_cast<double>(compute_comm_ns) / static_cast<double>(comm_ns) : 0.0;
  }
};

// What the import did with one file (one profile rank).
struct KinetoRankReport {
  std::string path;
  int original_rank = -1;  // distributedInfo.rank; -1 when absent
  int world_size = 0;      // distributedInfo.world_size; 0 when absent
  std::int64_t trace_events = 0;
  std::map<std::string, std::int64_t> imported;  // by category
  std::map<std::string, std::int64_t> skipped;   // understood, left out on purpose (metadata, flows, spans)
  std::map<std::string, std::int64_t> unknown;   // not understood, by "ph/cat" (never silently dropped)
  std::int64_t unlinked_device = 0;              // device activities whose launching operator was not found
  std::int64_t host_comm_without_kernel = 0;     // collective calls with no NCCL kernel in the trace
  std::int64_t collectives = 0;                  // collective instances on this rank
  std::int64_t collectives_matched = 0;          // of them, with a partner on another rank
  bool steps_fallback = false;                   // --window steps on a rank without ProfilerStep#N
  HtaView hta;
};

struct KinetoImport {
  Profile profile;                      // ready to write: meta, ranks, strings, events, breakdown, operators
  std::vector<KinetoRankReport> ranks;  // by profile rank
  std::string clock_method;             // "shared", "aligned from N collective ends", ...
  std::string matching;                 // how collective instances were matched
  std::vector<std::string> warnings;    // one line each, for stderr (a rank's clock left unknown)
};

// Reads the traces and computes the breakdown. Throws KinetoImportError.
KinetoImport import_kineto(const KinetoImportOptions& options);

// The traces in a folder: its *.json and *.json.gz files, sorted by name.
std::vector<std::string> kineto_files_in(const std::string& dir);

}  // namespace commscope::profiler
