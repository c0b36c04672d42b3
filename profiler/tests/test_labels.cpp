// Communicator and link labels (events.hpp): what communicator_label, intercommunicator_label
// and link_label write, parse_label reads back; labels written before the instance suffix read
// as before; anything else is refused with its reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commscope/profiler/events.hpp"

namespace cp = commscope::profiler;

namespace {

cp::ParsedLabel parsed(const std::string& label) {
  std::string why;
  const auto p = cp::parse_label(label, &why);
  EXPECT_TRUE(p.has_value()) << label << ": " << why;
  return p.value_or(cp::ParsedLabel{});
}

}  // namespace

TEST(Labels, CommunicatorsWithTheSameMembersDifferByTheirInstance) {
  EXPECT_EQ(cp::communicator_label("mpi", {1, 0}), "mpi[0,1]");
  EXPECT_EQ(cp::communicator_label("mpi", {1, 0}, 0), "mpi[0,1]");
  EXPECT_EQ(cp::communicator_label("mpi", {1, 0}, 1), "mpi[0,1]#1");
  EXPECT_EQ(cp::communicator_label("dp", {0, 2, 4, 6, 8}, 12), "dp[0:8:2]#12");
  const cp::ParsedLabel second = parsed("mpi[0,1]#1");
  EXPECT_EQ(second.kind, "mpi");
  EXPECT_EQ(second.members, (std::vector<int>{0, 1}));
  EXPECT_EQ(second.instance, 1);
  EXPECT_FALSE(second.link);
  EXPECT_FALSE(second.inter);
  EXPECT_EQ(parsed("dp[0:8:2]#12").members, (std::vector<int>{0, 2, 4, 6, 8}));
  EXPECT_EQ(parsed("dp[0:8:2]#12").instance, 12);
}

TEST(Labels, OlderLabelsReadAsBefore) {
  const cp::ParsedLabel tp = parsed("tp[0,1]");
  EXPECT_EQ(tp.kind, "tp");
  EXPECT_EQ(tp.members, (std::vector<int>{0, 1}));
  EXPECT_EQ(tp.instance, 0);
  EXPECT_EQ(parsed("dp[0:62:2]").members.size(), 32u);
  EXPECT_EQ(parsed("pg_0[3,1,2]").members, (std::vector<int>{1, 2, 3}));
  const cp::ParsedLabel link = parsed("pp[2>0]");
  EXPECT_TRUE(link.link);
  EXPECT_EQ(link.members, (std::vector<int>{2, 0}));  // from, to
  EXPECT_EQ(parsed(cp::link_label("p2p", 5, 7)).members, (std::vector<int>{5, 7}));
}

TEST(Labels, IntercommunicatorsNameBothGroupsAlikeOnEitherSide) {
  EXPECT_EQ(cp::intercommunicator_label("mpi", {3, 2}, {1, 0}), "mpi[0,1|2,3]");
  EXPECT_EQ(cp::intercommunicator_label("mpi", {0, 1}, {2, 3}), "mpi[0,1|2,3]");
  EXPECT_EQ(cp::intercommunicator_label("mpi", {0, 2, 4, 6, 8}, {1}, 2), "mpi[0:8:2|1]#2");
  const cp::ParsedLabel inter = parsed("mpi[0:8:2|1]#2");
  EXPECT_TRUE(inter.inter);
  EXPECT_EQ(inter.members, (std::vector<int>{0, 1, 2, 4, 6, 8}));
  EXPECT_EQ(inter.instance, 2);
}

TEST(Labels, AnythingElseIsRefusedWithItsReason) {
  const auto refused = [](const std::string& label, const std::string& reason) {
    std::string why;
    EXPECT_FALSE(cp::parse_label(label, &why).has_value()) << label;
    EXPECT_NE(why.find(reason), std::string::npos) << label << ": " << why;
  };
  refused("", "not a label");
  refused("tp0,1", "not a label");
  refused("[0,1]", "not a label");
  refused("t p[0]", "is not a word");
  refused("tp[0,x]", "'x' is not a rank");
  refused("tp[1,1]", "named twice");
  refused("dp[4:0:2]", "empty range");
  refused("dp[0:2000000000:1]", "more than");
  refused("mpi[0,1]#0", "#k");
  refused("mpi[0,1]#", "#k");
  refused("mpi[0,1]x", "#k");
  refused("mpi[0,1|1,2]", "named twice");
  refused("pp[0>1]#1", "a link has no instance");
  refused("pp[0>-1]", "is not a rank");
}
