// IMB-MPI1's habits (Intel MPI Benchmarks 2021): its benchmark names as the collective
// (Allreduce, Bcast, Reduce_scatter, ..., case-insensitive where ours are not spelt alike) and its
// single-dash word flags, which CLI11 would read as short flags with a value (-npmin as -n pmin):
//   -msglog [MIN:]MAX  sizes 2^MIN .. 2^MAX bytes doubling (MIN 0 when left out; IMB's 0-byte
//                      line is not timed), in place of -b/-e/-f;
//   -npmin P           IMB runs on P, 2P, 4P, ... ranks and all of them; here every run takes
//                      all ranks, so P must be at least the rank count;
//   -iter N            N timed iterations at every size (IMB's -iter_policy off), in place of -n;
//   -iter_policy off, -zero_size 0  (what the bench does anyway).
// IMB's other flags and benchmarks are refused with one line naming what to use instead.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commscope/bench/options.hpp"

// CLI11's App, declared only: CLI11 is the heaviest header of the build (7-16 s a translation
// unit), read by the files that parse, not by every one that names a flag's result.
namespace CLI {
class App;
}  // namespace CLI

namespace commscope::bench {

// The values of IMB's word flags, as typed ("" where not given).
struct ImbFlags {
  std::string msglog, npmin, iter;
};

// Takes IMB-MPI1's word flags and their values out of `args` (args[0] is the program) into `f`.
// Throws InvalidArgument for one IMB has and the bench has not (-time, -off_cache, ...), naming
// it and what to use, and for a word flag without its value.
void take_imb_flags(std::vector<const char*>& args, ImbFlags& f);

// Checks the values against the rest of the command line (parsed into `app` and `o`) and
// stores them in `o`. Throws InvalidArgument.
void apply_imb_flags(const ImbFlags& f, const CLI::App& app, Options& o);

// Our collective for an IMB-MPI1 benchmark name (case-insensitive), nullopt for any other
// name; InvalidArgument for IMB's benchmarks that have none here (PingPong, Barrier, ...),
// naming the command that measures the nearest thing.
std::optional<Collective> imb_collective(std::string_view name);

// "" when a run on `nranks` ranks is what IMB-MPI1 runs with -npmin `npmin`; else why not
// (IMB would also run on fewer ranks), with the launch that does.
std::string imb_npmin_problem(int npmin, int nranks);

}  // namespace commscope::bench
