#pragma once
// NCCL's own record of what it ran: with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=TUNING, rank 0 of a
// communicator logs one line per collective it enqueues,
//   NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}
// (NCCL 2.19-2.28; later fields vary and are ignored). The bench turns the log on for a cuda run
// where the user has not set NCCL_DEBUG, into a file of its own, and records the choices per
// collective and size in /meta nccl_choices and its '#' lines.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commscope::bench {

struct NcclChoice {
  std::string collective;  // NCCL's name: "AllReduce"
  std::uint64_t bytes = 0;  // as NCCL logs it: count x the type's size
  std::string algorithm, protocol;  // "RING", "SIMPLE"
};

// One log line's choice; nullopt for any other line.
std::optional<NcclChoice> parse_nccl_tuning_line(std::string_view line);

// The choices per collective in words, sizes in runs of the same algorithm and protocol:
// "AllReduce: RING/LL 8 B to 64 KiB, RING/SIMPLE from 128 KiB; AllGather: ...". A size logged
// with several choices (NCCL may split a call) lists them joined by '+'. "" for none.
std::string summarize_nccl_choices(std::span<const NcclChoice> choices);

// The log of this process: started before NCCL's first communicator (NCCL reads NCCL_DEBUG once).
class NcclTuningLog {
 public:
  // Sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING and NCCL_DEBUG_FILE=DIR/commscope-nccl-PID.log
  // where NCCL_DEBUG and NCCL_DEBUG_FILE are unset; else records why not (note()).
  void start(const std::string& dir);
  // The choices logged so far (the file is removed by the destructor).
  std::vector<NcclChoice> read() const;
  // Why the log was not read ("" when it was started).
  const std::string& note() const { return note_; }
  ~NcclTuningLog();

 private:
  std::string path_, note_ = "not started";
};

}  // namespace commscope::bench
