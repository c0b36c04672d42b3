// A predicted step against a measured one, part by part (prediction_parts.hpp): made-up parts
// whose misses cancel, add up, or are small.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "commscope/analysis/prediction_parts.hpp"

namespace ca = commscope::analysis;

namespace {

// Times in ms.
ca::PredictedPart part(const char* name, double measured, double predicted, bool comm = false) {
  return {name, measured / 1e3, predicted / 1e3, comm, false};
}
ca::PredictedPart rest(double measured) {
  return {"the rest of the step", measured / 1e3, 0, false, true};
}

}  // namespace

TEST(PredictionParts, PartError) {
  EXPECT_DOUBLE_EQ(ca::part_error(2, 3), 0.5);
  EXPECT_DOUBLE_EQ(ca::part_error(4, 1), -0.75);
  EXPECT_TRUE(std::isnan(ca::part_error(0, 1)));
}

// The scaling report's case: communication predicted 32x low (tp 5.2 against 225 ms, dp 2.7
// against 30.6 ms), compute 1.9x high; the total within 5.9%. The rest of the step (10 ms, 1.9%)
// misses by less than 5% and is not named.
TEST(PredictionParts, CancellingMissesAreNamed) {
  const std::vector<ca::PredictedPart> parts{part("compute", 250, 477.3), part("tp", 225, 5.2, true),
                                             part("pp", 0, 0, true), part("dp", 30.6, 2.7, true), rest(10)};
  const std::string text = ca::cancelling_parts(parts);
  EXPECT_NE(text.find("the total is within 5.9% only because the parts' errors cancel"), std::string::npos) << text;
  EXPECT_NE(text.find("communication is predicted 32x low (7.9 against 256 ms: tp 5.2 against 225 ms, dp 2.7 against "
                      "30.6 ms)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("compute is predicted 1.9x high (477 against 250 ms)"), std::string::npos) << text;
  EXPECT_LT(text.find("communication"), text.find("compute is"));  // the largest miss first
  EXPECT_EQ(text.find("rest"), std::string::npos) << text;
}

// Misses in one direction add up: the total is as wrong as its parts, nothing cancels.
TEST(PredictionParts, MissesInOneDirectionDoNotCancel) {
  const std::vector<ca::PredictedPart> parts{part("compute", 300, 200), part("tp", 225, 5.2, true),
                                             part("dp", 30.6, 2.7, true), rest(10)};
  EXPECT_EQ(ca::cancelling_parts(parts), "");
}

// Every part close: nothing to say.
TEST(PredictionParts, SmallMissesAreNotCancelling) {
  const std::vector<ca::PredictedPart> parts{part("compute", 100, 108), part("dp", 20, 14, true), rest(2)};
  EXPECT_EQ(ca::cancelling_parts(parts), "");
}

// Communication groups missing in opposite directions are named one by one, and the time
// nothing predicts is named when it is large.
TEST(PredictionParts, GroupsMissingBothWaysAreNamedApart) {
  const std::vector<ca::PredictedPart> parts{part("compute", 100, 100), part("tp", 80, 10, true),
                                             part("pp", 20, 120, true), rest(30)};
  const std::string text = ca::cancelling_parts(parts);
  EXPECT_NE(text.find("pp is predicted 6x high (120 against 20 ms)"), std::string::npos) << text;
  EXPECT_NE(text.find("tp is predicted 8x low (10 against 80 ms)"), std::string::npos) << text;
  EXPECT_NE(text.find("the rest of the step (30 ms) is not predicted"), std::string::npos) << text;
  EXPECT_EQ(text.find("communication is"), std::string::npos) << text;
  EXPECT_EQ(text.find("compute"), std::string::npos) << text;  // exact: not named
}
