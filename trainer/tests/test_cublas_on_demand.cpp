// cuBLAS opened at its first call (machine/src/cublas_on_demand.cpp), on a machine without a GPU:
// nothing of it is mapped before the first call; the first call opens both libraries, whose every
// function the trainer and the doctor call is found; a call goes through to cuBLAS's own.
#include <gtest/gtest.h>

#include <cublas_v2.h>

#include <fstream>
#include <string>

#include "commscope/machine/cublas_on_demand.hpp"

namespace {

bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

TEST(CublasOnDemand, OpenedAtTheFirstCallWithEveryFunction) {
  EXPECT_FALSE(mapped("libcublasLt.so")) << "cuBLASLt loaded at the program's start";
  EXPECT_FALSE(mapped("libcublas.so")) << "cuBLAS loaded at the program's start";
  // Through the stub to cuBLAS's own (a pure function, no GPU needed), which names each status
  // apart; the stub's own answer, where cuBLAS could not be opened, is one text for every status.
  const std::string success = cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
  EXPECT_NE(success, cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED));
  EXPECT_EQ(success.find("could not be loaded"), std::string::npos) << success;
  EXPECT_TRUE(mapped("libcublasLt.so"));
  EXPECT_TRUE(mapped("libcublas.so"));
  EXPECT_EQ(commscope::machine::cublas_load_error(), "");
  EXPECT_TRUE(commscope::machine::cublas_missing_functions().empty());
}

}  // namespace
