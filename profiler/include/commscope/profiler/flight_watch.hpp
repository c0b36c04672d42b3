// The flight recorder (flight.hpp) in commscope's own tools (commscope-bench, -train, -replay):
// started once MPI is, with every world rank's host, and a Communicator's calls recorded in a ring
// of their own (collectives/communicator.hpp's CallWatch), so that `commscope-report hang`
// reads a hung tool's ranks as it reads an MPI program's under libcommscope-mpiprof.so.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>
#include <vector>

#include "commscope/profiler/flight.hpp"  // dump, on: the tools' other triggers

namespace commscope {
class Communicator;
}

namespace commscope::profiler::flight {

// Every world rank's host as MPI_Get_processor_name gives it, gathered over MPI_COMM_WORLD
// (collective), or this rank's alone where the gather fails: the record names the hosts of ranks
// that write none. The library inside another program passes the PMPI entry points (its own calls
// are not the program's).
using AllgatherCall = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
using ProcessorNameCall = int (*)(char*, int*);
std::vector<std::string> world_hosts(AllgatherCall allgather = MPI_Allgather,
                                     ProcessorNameCall processor_name = MPI_Get_processor_name);

// At a tool's start-up, after MPI_Init; collective over MPI_COMM_WORLD (it gathers the hosts).
// The recorder's settings as the library's (COMMSCOPE_FLIGHT_CALLS, COMMSCOPE_FLIGHT_DIR,
// COMMSCOPE_HANG_TIMEOUT, COMMSCOPE_HANG_EXIT; a bad one said on stderr), its record beside
// `output` (the tool's file; "" for none: TOOL.flight here), and SIGUSR1 (watch_sigusr1). Under
// libcommscope-mpiprof.so the library's recorder, which sees every MPI call, serves instead:
// the tool's stays off. Returns whether it is on.
bool start_tool(const char* tool, const std::string& output);

// `comm`'s later calls in a ring labelled `label`, which every member gives alike (the profile's
// communicator labels: "dp[0:4]", "tp[0,1]"; "": the world's ring, for a duplicate of
// MPI_COMM_WORLD); nothing while the recorder is off. One watch per ring.
void watch(Communicator& comm, std::string_view label);

}  // namespace commscope::profiler::flight
