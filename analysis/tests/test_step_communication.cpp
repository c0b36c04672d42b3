// The summary paragraph of the step's communication (step_communication.cpp) on made-up rows: the
// step's excess over alone in words, a transfer faster than alone never as a negative time; who the
// waiting is for; which machine model prices the calls (a bench file's, else the profile's own).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/profiler/breakdown.hpp"
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
bool has_negative(const std::string& text) {
  return std::regex_search(text, std::regex("(^|[ (])-[0-9]"));
}

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
  EXPECT_NE(text.find("Inside the step they take 1.02 times as long as alone: the step adds nothing measurable to them."),
            std::string::npos)
      << text;
  // A ratio within a part in a thousand: still a ratio ("1 of alone" read as a count).
  const std::string same = ca::step_communication_summary(one_row(10.01, 0, 0));
  EXPECT_NE(same.find("they take 1.00 times as long as alone"), std::string::npos) << same;
}

// alone/expected as the bench's of_expected: below 1.05 "0.93 of what the machine allows"; above
// it the call beat the model (a figure of the model is too low), said as how many times faster,
// not as "59 of what the machine allows".
TEST(StepCommunicationSummary, AloneAgainstTheMachineInWords) {
  ca::StepCommunication good = one_row(10, 0, 0);
  good.rows[0].expected.us = 1860.0;  // 2 ms alone: 0.93
  std::string text = ca::step_communication_summary(good);
  EXPECT_NE(text.find("Alone it takes 10 ms, 0.93 of what the machine allows: good."), std::string::npos) << text;
  ca::StepCommunication beaten = one_row(10, 0, 0);
  beaten.rows[0].expected.us = 118000.0;  // a model 59 times too slow
  text = ca::step_communication_summary(beaten);
  EXPECT_NE(text.find("Alone it takes 10 ms, 59 times faster than the machine model allows: above the model"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("59 of what"), std::string::npos) << text;
}

// --- who the waiting is for, on a made-up pipeline of 2 stages (rank 0: stage 0, rank 1: stage 1)

namespace {

namespace prof = commscope::profiler;
constexpr std::int64_t kMs = 1000000;

// String ids of the made-up profile.
enum Name : std::uint32_t { kNone, kStep, kSend, kRecv, kLink, kMpi, kFwd0, kFwd1, kBwd1, kNames };

prof::Event event(prof::EventKind kind, std::uint32_t name, std::int64_t from_ms, std::int64_t to_ms,
                  std::uint64_t id = 0, std::uint64_t parent = 0) {
  prof::Event e;
  e.kind = kind, e.name = name, e.start_ns = from_ms * kMs, e.end_ns = to_ms * kMs, e.id = id, e.parent = parent;
  e.iteration = 0;
  return e;
}

// A message of 8 KiB on the link pp[0>1], its seq-th.
prof::Event message(std::uint32_t name, std::int64_t from_ms, std::int64_t to_ms, std::uint64_t id, std::int64_t seq) {
  prof::Event e = event(prof::EventKind::kCommunication, name, from_ms, to_ms, id);
  e.communicator = kLink, e.detail = kMpi, e.bytes = 8192, e.seq = seq;
  return e;
}

// An operator and its compute, [from, to).
void op(std::vector<prof::Event>& events, std::uint32_t name, std::int64_t from_ms, std::int64_t to_ms,
        std::uint64_t id) {
  events.push_back(event(prof::EventKind::kOperator, name, from_ms, to_ms, id));
  events.push_back(event(prof::EventKind::kKernel, name, from_ms, to_ms, 0, id));
}

// One step of 100 ms. Message 0: stage 0 runs its forward for 30 ms and sends at 30; stage 1
// posted its receive at 0 and waits 30 ms for it. Message 1: stage 0 sends at 40 while stage 1
// runs its backward (35-70) and receives at 70: the send waits for the receiver.
prof::Profile pipeline_of_two() {
  prof::Profile p;
  p.meta.nranks = 2;
  p.meta.attributes = {{"tool", "commscope-train"}, {"pp", "2"}, {"micro_batches", "2"}};
  p.strings = {"",    "step",           "pp.send",        "pp.recv",       "pp[0>1]",
               "mpi", "block0.mlp.fwd", "block1.mlp.fwd", "block1.mlp.bwd"};
  for (int r = 0; r < 2; ++r) {
    p.ranks.emplace_back();
    p.ranks.back().rank = r, p.ranks.back().host = "host", p.ranks.back().backend = "host";
  }
  p.events.resize(2);
  std::vector<prof::Event>& s0 = p.events[0];
  s0.push_back(event(prof::EventKind::kIteration, kStep, 0, 100));
  op(s0, kFwd0, 0, 30, 1);
  s0.push_back(message(kSend, 30, 31, 2, 0));
  s0.push_back(message(kSend, 40, 71, 3, 1));
  std::vector<prof::Event>& s1 = p.events[1];
  s1.push_back(event(prof::EventKind::kIteration, kStep, 0, 100));
  s1.push_back(message(kRecv, 0, 31, 1, 0));
  op(s1, kFwd1, 31, 35, 2);
  op(s1, kBwd1, 35, 70, 3);
  s1.push_back(message(kRecv, 70, 71, 4, 1));
  const std::vector<std::int64_t> offsets{0, 0};
  const auto ranks = prof::analyze_ranks(p.events, offsets, prof::Timeline::kHost);
  for (const prof::RankBreakdown& b : ranks) p.breakdown.insert(p.breakdown.end(), b.rows.begin(), b.rows.end());
  return p;
}

const ca::LateRank* late_of(const ca::StepCommunication& s, int rank) {
  for (const ca::LateRank& l : s.late)
    if (l.rank == rank) return &l;
  return nullptr;
}

}  // namespace

TEST(StepCommunicationWaiting, AReceiveWaitsForTheSendingStage) {
  const prof::Profile p = pipeline_of_two();
  const ca::StepCommunication s = ca::step_communication(p, ca::AloneSources{});
  ASSERT_TRUE(s.identity_holds());
  // Stage 1's receive of message 0 waited 30 ms for rank 0, which ran its forward meanwhile.
  const ca::LateRank* sender = late_of(s, 0);
  ASSERT_NE(sender, nullptr);
  EXPECT_EQ(sender->key.call, "pp.recv");
  EXPECT_EQ(sender->key.group, "pp[0>1]");
  EXPECT_DOUBLE_EQ(sender->caused_ns, 30.0 * kMs);
  EXPECT_DOUBLE_EQ(sender->waited, 1);
  EXPECT_DOUBLE_EQ(sender->of_instances, 2);
  ASSERT_EQ(sender->doing_ns.size(), 1u);
  EXPECT_DOUBLE_EQ(sender->doing_ns.at("block0.mlp.fwd"), 30.0 * kMs);
  EXPECT_EQ(sender->waiting_rank, 1);
  EXPECT_EQ(sender->stage, 0);
  EXPECT_EQ(sender->waiting_stage, 1);
  // Stage 0's send of message 1 waited 30 ms for rank 1 to receive it, which ran its backward.
  const ca::LateRank* receiver = late_of(s, 1);
  ASSERT_NE(receiver, nullptr);
  EXPECT_EQ(receiver->key.call, "pp.send");
  EXPECT_DOUBLE_EQ(receiver->caused_ns, 30.0 * kMs);
  EXPECT_DOUBLE_EQ(receiver->doing_ns.at("block1.mlp.bwd"), 30.0 * kMs);
  EXPECT_EQ(receiver->waiting_rank, 0);
  // Both in the summary's words, per step of the waiting rank.
  const std::string text = ca::step_communication_summary(s);
  EXPECT_NE(text.find("rank 1 (stage 1) waits 30 ms a step in pp.recv on pp[0>1] for rank 0 (stage 0) (50% of all "
                      "the waiting; at 1 of the 2 messages, 30 ms a message), which ran its forward 100% "
                      "(block0.mlp.fwd 100%) meanwhile"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 0 (stage 0) waits 30 ms a step in pp.send on pp[0>1] for rank 1 (stage 1)"),
            std::string::npos)
      << text;
}

TEST(StepCommunicationWaiting, NoStagesWithoutAPipeline) {
  prof::Profile p = pipeline_of_two();
  p.meta.attributes.clear();  // another program's messages: ranks, no stages
  const ca::StepCommunication s = ca::step_communication(p, ca::AloneSources{});
  const ca::LateRank* sender = late_of(s, 0);
  ASSERT_NE(sender, nullptr);
  EXPECT_EQ(sender->stage, -1);
  EXPECT_EQ(sender->waiting_stage, -1);
  const std::string text = ca::step_communication_summary(s);
  EXPECT_NE(text.find("rank 1 waits 30 ms a step in pp.recv on pp[0>1] for rank 0 (50%"), std::string::npos) << text;
}

// The model the profile records (commscope-train --machine-probe: /meta/attributes machine_model)
// prices the calls where no bench file gives one, and the note says whose it is.
TEST(StepCommunicationModel, TheProfilesOwnModelWhereNoBenchFileGivesOne) {
  prof::Profile p = pipeline_of_two();
  EXPECT_FALSE(ca::machine_model_of(p, "p.h5"));
  const ca::StepCommunication none = ca::step_communication(p, ca::AloneSources{});
  EXPECT_NE(none.model_note.find("nor does the profile"), std::string::npos) << none.model_note;
  p.meta.attributes.emplace_back("machine_model",
                                 "node host=host ranks=2 cpus=2 gpus=0 copy=10GB/s copy.source=measured\n"
                                 "machine latency_us=0.5 latency.source=measured\n");
  const std::optional<commscope::MachineModel> m = ca::machine_model_of(p, "p.h5");
  ASSERT_TRUE(m);
  ca::AloneSources sources;
  sources.recorded = &*m;
  const ca::StepCommunication s = ca::step_communication(p, sources);
  EXPECT_EQ(s.model_note.rfind("expected: the profile's machine model, measured by commscope-train at start-up", 0), 0u)
      << s.model_note;
  EXPECT_NE(s.model_note.find("Latency per message: 0.5 us"), std::string::npos) << s.model_note;
  // Completed by the user's figures, which the note names.
  sources.machine.source = "--link-rate host=10gbit";
  EXPECT_NE(ca::step_communication(p, sources).model_note.find(", completed by --link-rate host=10gbit."),
            std::string::npos);
}

// A damaged model in the profile: one line naming the file and the attribute.
TEST(StepCommunicationModel, ADamagedRecordedModelNamesTheFile) {
  prof::Profile p = pipeline_of_two();
  p.meta.attributes.emplace_back("machine_model", "node host=host ranks=2 copy=fast\n");
  try {
    (void)ca::machine_model_of(p, "p.h5");
    FAIL() << "a damaged model was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("p.h5: /meta/attributes machine_model: ", 0), 0u) << e.what();
  }
}
