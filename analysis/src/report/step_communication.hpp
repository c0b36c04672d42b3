#pragma once
// The in-training gap (docs/report.md, "Communication in the step"): every collective of a
// profiled step set against the same call alone (a bench file's rows) and the machine's limit (the
// bench file's machine model, else the one the profile records), with the step's excess over
// alone split into waiting for the last member, contention with the rank's own compute and the
// rest. Measured figures only: what the profile, the bench rows and the model do not give stays
// unknown and is said so.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/formats/profile.hpp"
#include "commscope/model/machine_model.hpp"

namespace commscope::analysis {

// A call's share of its rank's window counts as overlapped by compute when compute ran during at
// least this part of its transfer (the rest of it: the transfer alone).
inline constexpr double kOverlappedShare = 0.1;

// One kind of call of the step: its communicator, what it is and its size.
struct StepCallKey {
  std::string group;      // the communicator's label ("world", "tp[0,1]", "pp[0>2]")
  std::string call;       // the collective as the bench names it ("allreduce"), else the event's name
  std::string algorithm;  // the event's algorithm ("mpi", "ring"); "" where it names none
  std::int64_t bytes = 0;
  int group_size = 0;  // members (0: not known from the label)
  bool collective = false;
  bool link = false;  // a message between two ranks ("pp[0>1]": rank 0's sends, rank 1's receives)
  auto operator<=>(const StepCallKey&) const = default;
};

// A figure per call with where it came from, or why there is none.
struct PerCall {
  std::optional<double> us;
  std::string basis;  // "measured at 4 MiB", "fit of 1 KiB to 64 KiB", or the reason it is missing
};

struct StepCallRow {
  StepCallKey key;
  // Sums over the profile's (rank, iteration) rows, in ns: the calls' shares of the communication
  // (in_step = wait + transfer), and of the transfer the part with compute running.
  double calls = 0;
  double in_step_ns = 0, wait_ns = 0, transfer_ns = 0;
  PerCall alone, expected;
  // Where alone is known: the calls whose transfer compute overlapped (kOverlappedShare), their
  // transfer beyond alone (never below 0) = contention; rest = in_step - alone - wait - contention.
  double overlapped_calls = 0, overlapped_transfer_ns = 0, contention_ns = 0;
  std::map<int, double> waited_for;  // the wait_ns by the member that arrived last
  double alone_ns() const { return alone.us ? *alone.us * 1e3 * calls : 0; }
  double rest_ns() const { return in_step_ns - alone_ns() - wait_ns - contention_ns; }
};

// Who the waiting was for: per rank and kind of call, the instances it arrived last at. A message
// (a link's instance: a send and the receive that takes it) has one other member, the one that
// waited: per (late rank, waiting rank) and the waiting member's call, so a receive that waited
// is set against its sender ("pp.recv" on "pp[0>1]", rank 0 late, rank 1 waiting) and a send
// that waited against its receiver.
struct LateRank {
  int rank = 0;
  StepCallKey key;        // a message: the waiting member's call
  int waiting_rank = -1;  // a message: the member that waited; -1: a collective's other members
  int stage = -1;         // the pipeline stages of the two (the profile's run: pp > 1), else -1
  int waiting_stage = -1;
  double waiting_steps = 0;  // a message: the waiting rank's (rank, iteration) rows
  double instances = 0;      // instances (one per call across its members) it arrived last at
  double of_instances = 0;   // the key's instances matched across two members or more
  double waited = 0;         // of `instances`, those where some member waited
  double caused_ns = 0;      // the other members' waiting in those calls (their shares' wait)
  double late_ns = 0;        // summed: its arrival minus the first member's
  // The compute it ran most of meanwhile, and its time in it against the mean of the other ranks
  // that run it, step by step, the median step's (1.14: 14% longer); "" where no other rank runs it.
  std::pair<std::string, double> compute{"", 0.0};
  std::map<std::string, double> doing_ns;  // what it ran meanwhile: compute by operator (or kernel) name, its
                                           // earlier calls as "NAME (communication)"
};

struct StepCommunication {
  std::vector<StepCallRow> rows;         // by key
  std::vector<LateRank> late;            // by caused_ns, largest first
  double steps = 0;                      // the profile's (rank, iteration) rows: the table's figures are per row
  double comm_ns = 0, comm_wait_ns = 0;  // the breakdown's sums, which the rows' must equal
  bool identity_holds() const;
  std::vector<std::string> verdicts;  // per collective row with alone and expected: the bench's verdict line
  std::string model_note;             // the expectation's basis ("" without a model)
};

// The figures of --machine FILE and --link-rate HOST=RATE: the expectation's model is the first
// bench file's with them applied, else the profile's recorded model with them applied, else the
// profile's hosts with them alone.
struct MachineFigures {
  std::string source;  // where they come from ("m.txt", "--link-rate host2=100mbit"); "" for none
  std::vector<MachineEntry> entries;
  std::vector<std::string> origins;  // each entry's ("m.txt line 3", "--link-rate host2=100mbit")
};

// What times the calls alone, and what prices them.
struct AloneSources {
  std::span<const BenchFile> bench;           // any number: each serves the groups of its rank count
  const profiler::Profile* replay = nullptr;  // a replay of the profile with --gaps none (its mean call
                                              // per kind, where no bench row has the call)
  MachineFigures machine;
  // The profile's own machine model (its machine_model attribute: commscope-train --machine-probe),
  // the expectation's model where no bench file gives one, completed by `machine`; null for none.
  const MachineModel* recorded = nullptr;
};

// The join, from a profile read with its events.
StepCommunication step_communication(const profiler::Profile& profile, const AloneSources& sources);

// The summary paragraph: the step's communication, what its calls with a bench row take alone and
// against the machine, what the step adds to them (waiting, contention, the rest: a transfer faster
// than alone said in words, never as a negative time), the calls without a row, who the waiting is for
// (a message's: the sender a receive waited for, the receiver a send waited for, with their stages).
std::string step_communication_summary(const StepCommunication& s);

// The section "Communication in the step": the summary paragraph, the table per call
// (step_communication.csv), who the waiting was for (waiting_for.csv) and the stacked bars per
// communicator.
class ReportWriter;
void write_step_communication(ReportWriter& w, const StepCommunication& s);

}  // namespace commscope::analysis
