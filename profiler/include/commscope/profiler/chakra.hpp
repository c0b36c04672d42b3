#pragma once
// Chakra execution traces (MLCommons Chakra; PARAM and ASTRA-sim read and write them) to and from
// commscope profiles, docs/chakra.md:
//   export_chakra: a profile's communication, per rank, as one .et file (PREFIX.N.et): collectives
//     as COMM_COLL_NODE (comm_type, comm_size, pg_name = the communicator's label), messages as
//     COMM_SEND_NODE / COMM_RECV_NODE (comm_src, comm_dst, comm_tag where the profile names the
//     peer), the gaps between them as COMP_NODE of their duration, each node a data dependency of
//     the next (rank order);
//   import_chakra: Chakra traces (one file per rank) as a commscope.profile/1 profile of their
//     communication and compute nodes, with synthetic times where the trace has none.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/formats/profile.hpp"

namespace commscope::profiler {

// A trace that is not Chakra's, truncated or damaged, or a profile that cannot be exported: what()
// is one line naming the file.
class ChakraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "PREFIX.N.et", Chakra's per-rank naming (chakra_trace_link, ASTRA-sim's workload prefix).
std::string chakra_rank_file(const std::string& prefix, int rank);

struct ChakraExportRank {
  std::string path;
  std::int64_t collectives = 0, sends = 0, recvs = 0, compute = 0;  // nodes written
  std::map<std::string, std::int64_t> left_out;                     // communication Chakra has no node for, by name
};

// Writes PREFIX.N.et for every rank of `profile` (its events must be loaded), once every rank's
// nodes are made. ChakraError, before any file is written, when a rank has neither iterations nor
// communication or a message on a link that is none of its rank's; ChakraError when a file cannot
// be written (the files written before it stay).
std::vector<ChakraExportRank> export_chakra(const Profile& profile, const std::string& prefix);

struct ChakraImportOptions {
  std::vector<std::string> files;  // one per rank, by rank
  std::string command_line;        // stored as the profile's command line
};

struct ChakraImportRank {
  std::string path;
  std::string version;                           // GlobalMetadata.version
  std::int64_t nodes = 0;                        // in the file
  bool exported = false;                         // written by export_chakra (its commscope.* attributes used)
  std::map<std::string, std::int64_t> imported;  // events made, by kind
  std::map<std::string, std::int64_t> left_out;  // nodes not imported, by why
};

struct ChakraImport {
  Profile profile;
  std::vector<ChakraImportRank> ranks;
  bool synthetic_times = false;  // no start times in some trace: times made from durations
  std::vector<std::string> warnings;
};

// Reads the files and builds the profile (not written). ChakraError on a file that is not a
// Chakra execution trace, truncated or damaged, a node id twice, or no communication at all.
ChakraImport import_chakra(const ChakraImportOptions& options);

// The files of a prefix: PREFIX.0.et, PREFIX.1.et, ... up to the first missing one; or the
// argument itself when it is a file. ChakraError when there are none.
std::vector<std::string> chakra_files_of(const std::string& prefix_or_file);

}  // namespace commscope::profiler
