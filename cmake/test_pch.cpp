// The target that precompiles gtest.h once for the test programs of a first build
// (cmake/CommscopeTesting.cmake, commscope_tests_optimised_less).
