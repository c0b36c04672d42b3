// One rank started without a launcher (an Open MPI singleton, as the trainer's and the replay's
// one-rank runs are): prints the session directory MPI runs in, and fails unless it is this
// process's own and exists while MPI runs. The test starts several at once and checks that
// no two share one and that none is left behind (collectives/tests/CMakeLists.txt).
//
//   singleton_session [SECONDS]     (holds MPI that long before MPI_Finalize)
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "commscope/collectives/communicator.hpp"

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  const double hold_s = argc > 1 ? std::atof(argv[1]) : 0.0;
  const char* dir = std::getenv("OMPI_MCA_orte_jobfam_session_dir");
  if (dir == nullptr) {
    std::fprintf(stderr, "singleton_session: no session directory of its own (all singletons share jf.0)\n");
    return 1;
  }
  struct stat st {};
  if (::stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "singleton_session: %s is not a directory while MPI runs\n", dir);
    return 1;
  }
  const std::string own = "/singleton." + std::to_string(getpid()) + ".";
  const std::string path = dir;
  const std::size_t at = path.rfind('/');
  if (at == std::string::npos || path.compare(at, own.size(), own) != 0 || path.size() == at + own.size()) {
    std::fprintf(stderr, "singleton_session: %s is not .../singleton.%d.TAG\n", dir, static_cast<int>(getpid()));
    return 1;
  }
  std::printf("%s\n", dir);
  std::this_thread::sleep_for(std::chrono::duration<double>(hold_s));
  return 0;
}
