#pragma once
// Where the replay completes each posted call (docs/replay.md, "Nonblocking calls"). No MPI: made
// the same way on every replay rank from the same plan.

#include "commscope/replay/plan.hpp"

namespace commscope::replay {

// Called by make_plan once the messages are paired (pair_messages). A rank that recorded
// completions (an MPI program's MPI_Wait*, MPI_Test*): each posted op is completed by the first of
// its completions after it that ended after the op's other side had begun (a message's matched
// send or receive, a collective's last member to post it, on rank 0's clock): the completion that
// can have been the one, as it ended after the op could complete; kWait::completes names it. One
// that none can have completed (a broadcast's root done before the others posted) is completed at
// the end of the replay: completing it later than the program did never waits for what comes
// after, completing it sooner could. A rank that recorded none (the trainer): its posted ops at
// their iteration's end (ReplayIteration::completes_at_end). An MPI_Sendrecv's send is completed
// by its receive (make_plan), by none of these.
void assign_completions(ReplayPlan& plan);

}  // namespace commscope::replay
