// The main of an MPI gtest executable run under mpirun: MPI up for the whole run, every rank runs
// the tests, rank 0 alone prints them, and the exit status is the worst over all ranks.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include "commscope/collectives/communicator.hpp"

namespace commscope::testing {

inline int run_tests_on_every_rank(int argc, char** argv) {
  MpiRuntime mpi(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  const int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

}  // namespace commscope::testing
