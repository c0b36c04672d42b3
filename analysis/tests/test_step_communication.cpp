// The summary paragraph of the step's communication (step_communication.cpp) on made-up rows: the
// step's excess over alone in words, a transfer faster than alone never as a negative time.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "step_communication.hpp"

namespace ca = commscope::analysis;

namespace {

// One allreduce of 1 MiB on world, 5 calls in one (rank, iteration) row, alone 2 ms a call.
ca::StepCommunication one_row(double in_step_ms, double wait_ms, double contention_ms) {
  ca::StepCommunication s;
  s.steps = 1;
  ca::StepCallRow r;
  r.key = {"world", "allreduce", "mpi", 1 << 20, 2, true};
  r.calls = 5;
  r.in_step_ns = in_step_ms * 1e6, r.wait_ns = wait_ms * 1e6, r.contention_ns = contention_ms * 1e6;
  r.transfer_ns = r.in_step_ns - r.wait_ns;
  r.alone.us = 2000.0;
  s.rows.push_back(r);
  s.comm_ns = r.in_step_ns, s.comm_wait_ns = r.wait_ns;
  return s;
}

// A minus sign before a digit: a negative figure.
bool has_negative(const std::string& text) { return std::regex_search(text, std::regex("(^|[ (])-[0-9]")); }

}  // namespace

TEST(StepCommunicationSummary, ARestBelowZeroIsSaidInWords) {
  // 15 ms in the step: 10 ms alone + 7 ms waiting, so the transfer beat alone by 2 ms.
  const std::string text = ca::step_communication_summary(one_row(15, 7, 0));
  EXPECT_FALSE(has_negative(text)) << text;
  EXPECT_NE(text.find("Inside the step they take 5 ms more: 7 ms waiting, 0 ms more transfer while compute "
                      "overlapped; the rest of their transfer took 2 ms less than alone."),
            std::string::npos)
      << text;
}

TEST(StepCommunicationSummary, AStepFasterThanAloneIsLessNotMinus) {
  // 8 ms in the step against 10 alone, 1 ms of it waiting: 2 ms less, the transfer 3 ms under alone.
  const std::string text = ca::step_communication_summary(one_row(8, 1, 0));
  EXPECT_FALSE(has_negative(text)) << text;
  EXPECT_NE(text.find("they take 2 ms less: 1 ms waiting"), std::string::npos) << text;
  EXPECT_NE(text.find("took 3 ms less than alone."), std::string::npos) << text;
}

TEST(StepCommunicationSummary, APositiveRestIsTheRest) {
  const std::string text = ca::step_communication_summary(one_row(20, 4, 3));
  EXPECT_NE(text.find("they take 10 ms more: 4 ms waiting, 3 ms more transfer while compute overlapped, 3 ms "
                      "the rest."),
            std::string::npos)
      << text;
}

TEST(StepCommunicationSummary, AsAloneAddsNothing) {
  const std::string text = ca::step_communication_summary(one_row(10.2, 0, 0));
  EXPECT_NE(text.find("the step adds nothing measurable to them"), std::string::npos) << text;
}
