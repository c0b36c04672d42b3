// The machine model's text form: rates as people write them, a round trip of every field, and a
// user's machine file (any subset, `*` for every node, refusals naming the line).
#include <gtest/gtest.h>

#include "commscope/model/machine_model.hpp"

namespace commscope {
namespace {

TEST(MachineRate, TcBitsAndSlashedBytes) {
  EXPECT_DOUBLE_EQ(parse_rate("1gbit"), 0.125);
  EXPECT_DOUBLE_EQ(parse_rate("100mbit"), 0.0125);
  EXPECT_DOUBLE_EQ(parse_rate("25Gbit"), 3.125);
  EXPECT_DOUBLE_EQ(parse_rate("200Gb/s"), 25);
  EXPECT_DOUBLE_EQ(parse_rate("12.5GB/s"), 12.5);
  EXPECT_DOUBLE_EQ(parse_rate("900MB/s"), 0.9);
  EXPECT_DOUBLE_EQ(parse_rate("1tbit"), 125);
}

TEST(MachineRate, Refusals) {
  for (const char* bad : {"", "1", "gbit", "-1gbit", "0gbit", "1gbps", "1 gbit", "1gb/s", "nangbit", "1e999gbit"})
    EXPECT_THROW(parse_rate(bad), MachineModelError) << bad;
  try {
    parse_rate("10");
    FAIL();
  } catch (const MachineModelError& e) {
    EXPECT_STREQ(e.what(), "rate '10' has no unit (a rate like 1gbit, 100mbit, 25Gb/s or 12.5GB/s)");
  }
}

TEST(MachineRate, TextReadsBackExactly) {
  for (double v : {0.125, 9.812345678901234, 1e-7, 123456.75, 1.0 / 3}) EXPECT_EQ(parse_rate(rate_text(v)), v);
  EXPECT_EQ(rate_text(12.5), "12.5GB/s");
}

MachineModel two_nodes() {
  MachineModel m;
  NodeModel a;
  a.host = "host1", a.ranks = 2, a.cpus = 4, a.gpus = 0;
  a.copy = {9.812345678901234, FigureSource::measured, "memcpy 256 MiB, best of 4"};
  a.intra = {9.812345678901234, FigureSource::measured, "shm: the copy rate"};
  a.nic = {1.25, FigureSource::system, "eth0 10000 Mb/s"};
  a.nic_measured = {0.116, FigureSource::doctor, "doctor: \"median\" = of 3 pairs # \\ best pass\nnext"};
  NodeModel b;
  b.host = "host 2";  // a blank in a name is quoted
  b.ranks = 1, b.cpus = 8, b.gpus = 2;
  b.nic = {0, FigureSource::none, "eth0 speed -1"};
  m.nodes = {a, b};
  return m;
}

void expect_same(const Rate& x, const Rate& y) {
  EXPECT_EQ(x.gbytes_per_s, y.gbytes_per_s);
  EXPECT_EQ(x.source, y.source);
  EXPECT_EQ(x.detail, y.detail);
}

TEST(MachineText, RoundTrip) {
  const MachineModel m = two_nodes();
  const std::string text = to_text(m);
  const MachineModel back = from_text(text);
  ASSERT_EQ(back.nodes.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const NodeModel &x = m.nodes[i], &y = back.nodes[i];
    EXPECT_EQ(x.host, y.host);
    EXPECT_EQ(x.ranks, y.ranks);
    EXPECT_EQ(x.cpus, y.cpus);
    EXPECT_EQ(x.gpus, y.gpus);
    expect_same(x.copy, y.copy);
    expect_same(x.intra, y.intra);
    expect_same(x.nic, y.nic);
    expect_same(x.nic_measured, y.nic_measured);
  }
  EXPECT_EQ(to_text(back), text);
  EXPECT_FALSE(back.nodes[1].nic.known());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "node host=host1 ranks=2 cpus=4 gpus=0 copy=9.812345678901234GB/s copy.source=measured "
            "copy.detail=\"memcpy 256 MiB, best of 4\" intra=9.812345678901234GB/s intra.source=measured "
            "intra.detail=\"shm: the copy rate\" nic=1.25GB/s nic.source=system nic.detail=\"eth0 10000 Mb/s\" "
            "nic_measured=0.116GB/s nic_measured.source=doctor nic_measured.detail=\"doctor: \\\"median\\\" = of 3 "
            "pairs # \\\\ best pass\\nnext\"");
  EXPECT_TRUE(from_text("").nodes.empty());
}

TEST(MachineText, LaterKeysSkippedInAHeader) {
  const MachineModel m = from_text("node host=a cpus=2 nic_lanes=4\n");
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].cpus, 2);
  EXPECT_THROW(parse_machine_entries("node host=a nic_lanes=4\n"), MachineModelError);
}

// The latency on the `machine` line: written after the nodes, read back exactly, absent from a
// header written before it (no latency then), given by a user's file (the user's, the line its
// detail) and refused when it is not a positive number of microseconds.
TEST(MachineText, TheLatencyLine) {
  MachineModel m = two_nodes();
  EXPECT_EQ(to_text(m).find("machine"), std::string::npos);
  EXPECT_FALSE(from_text(to_text(m)).latency_known());
  m.latency_us = 47.123456789;
  m.latency_source = FigureSource::doctor;
  m.latency_detail = "d.h5: 8 B half round trip, the largest of 6 pairs (host1-host2)";
  const std::string text = to_text(m);
  EXPECT_EQ(text.substr(text.rfind("machine")),
            "machine latency_us=47.123456789 latency.source=doctor latency.detail=\"d.h5: 8 B half round trip, the "
            "largest of 6 pairs (host1-host2)\"\n");
  const MachineModel back = from_text(text);
  EXPECT_EQ(back.latency_us, m.latency_us);
  EXPECT_EQ(back.latency_source, FigureSource::doctor);
  EXPECT_EQ(back.latency_detail, m.latency_detail);
  EXPECT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(to_text(back), text);
  EXPECT_EQ(from_text("machine latency_us=3 later_key=1\n").latency_us, 3);

  const std::vector<MachineEntry> entries = parse_machine_entries("node host=* nic=1gbit\nmachine latency_us=12.5\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_TRUE(entries[1].machine);
  EXPECT_FALSE(entry_names(entries[1], "host1"));
  MachineModel given;
  apply_machine_entry(given, entries[1], "--machine f line 2");
  EXPECT_EQ(given.latency_us, 12.5);
  EXPECT_EQ(given.latency_source, FigureSource::user);
  EXPECT_EQ(given.latency_detail, "--machine f line 2");
  for (const char* bad : {"machine latency_us=0\n", "machine latency_us=-2\n", "machine latency_us=3us\n",
                          "machine latency_us=1 latency.source=guess\n"})
    EXPECT_THROW(apply_machine_entry(given, parse_machine_entries(bad).at(0), ""), MachineModelError) << bad;
}

TEST(MachineFile, AnySubsetStarAndUsersRates) {
  const char* file =
      "# the cluster\n"
      "\n"
      "node host=* nic=1gbit   # every node\n"
      "  node host=host2.cluster nic=100mbit nic.detail=\"shaped by tc\"\n"
      "node host=host3 copy=5GB/s copy.source=measured cpus=16\n";
  const std::vector<MachineEntry> entries = parse_machine_entries(file);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[1].line, 4);
  MachineModel m = two_nodes();
  NodeModel h2;
  h2.host = "host2";
  m.nodes.push_back(h2);
  for (NodeModel& n : m.nodes)
    for (const MachineEntry& e : entries)
      if (entry_names(e, n.host)) apply_entry(n, e, "--machine f line " + std::to_string(e.line));
  EXPECT_DOUBLE_EQ(m.nodes[0].nic.gbytes_per_s, 0.125);
  EXPECT_EQ(m.nodes[0].nic.source, FigureSource::user);
  EXPECT_EQ(m.nodes[0].nic.detail, "--machine f line 3");
  EXPECT_EQ(m.nodes[0].cpus, 4);  // not given: as detected
  EXPECT_EQ(m.nodes[0].copy.source, FigureSource::measured);
  EXPECT_DOUBLE_EQ(m.nodes[2].nic.gbytes_per_s, 0.0125);  // the host's line after the `*` line
  EXPECT_EQ(m.nodes[2].nic.detail, "shaped by tc");
  EXPECT_FALSE(entry_names(entries[2], "host2"));
  EXPECT_TRUE(entry_names(entries[1], "host2"));
}

TEST(MachineFile, RefusalsNameTheLine) {
  auto message = [](const char* text) {
    try {
      (void)parse_machine_entries(text);
    } catch (const MachineModelError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("node host=a\nnode nic=1gbit\n"), "line 2: no host= (a host name, or * for every node)");
  EXPECT_EQ(message("host=a\n"), "line 1: expected 'node host=NAME key=value ...' or 'machine key=value ...'");
  EXPECT_EQ(message("nodes host=a\n"), "line 1: expected 'node host=NAME key=value ...' or 'machine key=value ...'");
  EXPECT_EQ(message("machine latency=3us\n"),
            "line 1: unknown key 'latency' of a machine line (latency_us, latency.source, latency.detail, "
            "latency.spread, latency.moved)");
  EXPECT_EQ(message("node host=a nics=1gbit\n"),
            "line 1: unknown key 'nics' (host ranks cpus gpus, copy copy_in copy_out reduce reduce_slot intra "
            "intra_one self_exchange nic "
            "nic_measured and their .source, .detail and .spread, .bytes, .curve, load.seconds load.others_cpus "
            "load.loadavg_start load.loadavg_end load.ranks_cpus load.ranks_queued load.ranks_yield)");
  EXPECT_EQ(message("node host=a nic\n"), "line 1: 'nic': expected key=value");
  EXPECT_EQ(message("node host=a nic.detail=\"open\n"), "line 1: nic.detail: unterminated quote");
  NodeModel n;
  const MachineEntry bad_rate = parse_machine_entries("\nnode host=a nic=1gbps\n").at(0);
  try {
    apply_entry(n, bad_rate, "");
    FAIL();
  } catch (const MachineModelError& e) {
    EXPECT_EQ(std::string(e.what()),
              "line 2: nic=1gbps: rate '1gbps': unknown unit 'gbps' (a rate like 1gbit, 100mbit, 25Gb/s or 12.5GB/s)");
  }
  for (const char* text : {"node host=a cpus=-1\n", "node host=a gpus=two\n", "node host=a nic.source=guess\n"})
    EXPECT_THROW(apply_entry(n, parse_machine_entries(text).at(0), ""), MachineModelError) << text;
}

// The probes' spread and the load during the run travel in the text (a header written at the end
// of the run), read back exactly; a header without them reads as spread 0 and an unknown load; a
// given rate has no spread. contention() and describe_load() over the recorded load.
TEST(MachineText, SpreadAndLoadRoundTrip) {
  MachineModel m = two_nodes();
  m.nodes[0].copy.spread = 0.125;
  m.nodes[0].load = {12.5, 1.25, 0.5, 2.75};
  m.latency_us = 3, m.latency_source = FigureSource::measured, m.latency_spread = 0.375;
  const std::string text = to_text(m);
  EXPECT_NE(text.find(" copy.spread=0.125 "), std::string::npos) << text;
  EXPECT_NE(text.find(" load.seconds=12.5 load.others_cpus=1.25 load.loadavg_start=0.5 load.loadavg_end=2.75 "
                      "load.ranks_cpus=-1 load.ranks_queued=-1 load.ranks_yield=-1\n"),
            std::string::npos)
      << text;
  const MachineModel back = from_text(text);
  EXPECT_EQ(back.nodes[0].copy.spread, 0.125);
  EXPECT_EQ(back.nodes[0].load.others_cpus, 1.25);
  EXPECT_EQ(back.nodes[0].load.loadavg_end, 2.75);
  EXPECT_EQ(back.latency_spread, 0.375);
  EXPECT_EQ(to_text(back), text);
  EXPECT_FALSE(back.nodes[1].load.known());
  EXPECT_EQ(back.nodes[1].intra.spread, 0);
  // 2 ranks and 1.25 other CPUs on 4 CPUs: not contended; on 2 CPUs: 1.625.
  EXPECT_EQ(contention(back.nodes[0]), 1);
  NodeModel small = back.nodes[0];
  small.cpus = 2;
  EXPECT_EQ(contention(small), 1.625);
  EXPECT_EQ(describe_load(small), "2 ranks and other processes' 1.2 CPUs on 2 CPUs");
  small.load.others_cpus = 0.01;
  EXPECT_EQ(describe_load(small), "2 ranks on 2 CPUs");
  EXPECT_EQ(contention(back.nodes[1]), 1);  // not recorded
  // 2 ranks beside 2 busy processes on 2 CPUs: the others had 1 CPU and the ranks 1 between them,
  // so they ran at half speed: 2, where (ranks + others) / CPUs says 1.5.
  small.load.others_cpus = 1, small.load.ranks_cpus = 1;
  EXPECT_EQ(contention(small), 2);
  EXPECT_EQ(describe_load(small), "2 ranks (which had 1 CPU) and other processes' 1 CPU on 2 CPUs");
  small.load.others_cpus = 0;  // nobody else ran: ranks that waited without polling are not short of CPU
  EXPECT_EQ(contention(small), 1);
  // 1 rank that waited on a slow link had 0.15 CPUs beside others' 0.43 on 2 CPUs: 1.4 CPUs were
  // idle, so it had what it wanted (the ratio ranks / their CPU read 6.7, and a slow link's "far
  // below" became "not decided: 8.5% to 57%").
  small.ranks = 1, small.load.ranks_cpus = 0.15, small.load.others_cpus = 0.43;
  EXPECT_EQ(contention(small), 1);
  EXPECT_EQ(describe_load(small), "1 rank and other processes' 0.43 CPUs on 2 CPUs");
  // 2 ranks that had 0.5 CPUs between them while others took 1.8 of 2: short of CPU by 4.
  small.ranks = 2, small.load.ranks_cpus = 0.5, small.load.others_cpus = 1.8;
  EXPECT_EQ(contention(small), 4);
  // Where the ranks' run delay was recorded it says how long they waited for a CPU: the same
  // 2 ranks, which waited 0.25 s a second, ran at 0.5 / 0.75 of their speed; a rank that had 0.14
  // CPUs beside others' 1.9 on 2 CPUs and waited for none slept on its link: 1 (the ratio of
  // CPUs read 7.1, and the slow link's verdict not decided).
  small.load.ranks_queued = 0.25;
  EXPECT_EQ(contention(small), 1.5);
  EXPECT_EQ(describe_load(small),
            "2 ranks (which had 0.5 CPUs of the 0.75 they were ready to use) and other "
            "processes' 1.8 CPUs on 2 CPUs");
  small.ranks = 1, small.load.ranks_cpus = 0.14, small.load.others_cpus = 1.9, small.load.ranks_queued = 0.002;
  EXPECT_NEAR(contention(small), 1.014, 0.001);
  EXPECT_EQ(describe_load(small), "1 rank and other processes' 1.9 CPUs on 2 CPUs");
  // Where the ranks yield when idle (Open MPI's mpi_yield_when_idle) their run delay counts their
  // waits for messages too, as a yielding thread stays ready: a rank left 0.12 CPUs of the 1 it was
  // ready to use beside others' 1.9 on 2 CPUs has its share of them, (1 + 1.9) / 2 (its run delay
  // read 8.3, and a slow link's far below "not decided: 5.9% to 48%").
  small.load.ranks_cpus = 0.12, small.load.ranks_queued = 0.88, small.load.ranks_yield = 1;
  EXPECT_NEAR(contention(small), 1.45, 1e-9);
  EXPECT_EQ(describe_load(small),
            "1 rank (which had 0.12 CPUs, yielding the CPU while idle) and other processes' 1.9 CPUs on 2 CPUs");
  small.load.others_cpus = 0.5;  // a yielding rank beside idle CPUs: not short of any
  EXPECT_EQ(contention(small), 1);
  EXPECT_EQ(describe_load(small), "1 rank and other processes' 0.5 CPUs on 2 CPUs");
  MachineModel one;
  one.nodes = {small};
  EXPECT_EQ(from_text(to_text(one)).nodes.at(0).load.ranks_queued, 0.88);
  EXPECT_EQ(from_text(to_text(one)).nodes.at(0).load.ranks_yield, 1);
  // A user's rate replaces a measured one and its spread.
  NodeModel given = back.nodes[0];
  apply_entry(given, parse_machine_entries("node host=host1 copy=5GB/s\n").at(0), "--machine f");
  EXPECT_EQ(given.copy.spread, 0);
  for (const char* bad : {"node host=a copy.spread=1\n", "node host=a copy.spread=-0.1\n",
                          "node host=a load.others_cpus=x\n", "machine latency.spread=2\n"})
    EXPECT_THROW(
        {
          const auto e = parse_machine_entries(bad).at(0);
          NodeModel n;
          MachineModel mm;
          if (e.machine)
            apply_machine_entry(mm, e, "");
          else
            apply_entry(n, e, "");
        },
        MachineModelError)
        << bad;
}

// A rate's curve: its text form and back, the rate between and beyond its points, refusals, and
// a user's rate replacing it.
TEST(MachineText, RateCurve) {
  MachineModel m = two_nodes();
  m.nodes[0].copy.curve = {{16384, 36.5}, {1048576, 24}, {134217728, 8.5}};
  m.nodes[0].copy.at_bytes = 134217728;
  m.nodes[0].intra.curve = {{32768, 5}, {134217728, 3.25}};
  m.nodes[0].reduce_slot = {6.5,       FigureSource::measured,         "f32 sums of the previous rank's slot", 0,
                            134217728, {{16384, 18}, {134217728, 6.5}}};
  const std::string text = to_text(m);
  EXPECT_NE(text.find(" copy.bytes=134217728 copy.curve=16384:36.5,1048576:24,134217728:8.5 "), std::string::npos)
      << text;
  EXPECT_NE(text.find(" intra.curve=32768:5,134217728:3.25 "), std::string::npos) << text;
  const MachineModel back = from_text(text);
  ASSERT_EQ(back.nodes[0].copy.curve.size(), 3u);
  EXPECT_EQ(back.nodes[0].copy.curve[1].bytes, 1048576);
  EXPECT_EQ(back.nodes[0].copy.at_bytes, 134217728);
  EXPECT_EQ(back.nodes[0].intra.curve.size(), 2u);
  EXPECT_NE(text.find(" reduce_slot=6.5GB/s reduce_slot.source=measured "), std::string::npos) << text;
  EXPECT_EQ(back.nodes[0].reduce_slot.curve.size(), 2u);
  EXPECT_EQ(back.nodes[0].reduce_slot.detail, "f32 sums of the previous rank's slot");
  EXPECT_EQ(to_text(back), text);
  const Rate& c = back.nodes[0].copy;
  EXPECT_EQ(rate_at(c, 1024), 36.5);                // below the first point: the first
  EXPECT_EQ(rate_at(c, 1e12), 8.5);                 // past the last: the last
  EXPECT_DOUBLE_EQ(rate_at(c, 131072), 30.25);      // 2^17, half way in log2 from 2^14 to 2^20
  EXPECT_EQ(rate_at(back.nodes[1].copy, 1024), 0);  // no curve: its one figure
  for (const char* bad : {"x", "16384", "16384:0", "16384:1,8192:2", "16384:1,,32768:2", "a:1", "16384:1:1",
                          "16384:1:-0.1", "16384:1:", "16384:1:0.5:0.5"})
    EXPECT_THROW(parse_curve(bad), MachineModelError) << bad;
  EXPECT_EQ(moved_at(c, 131072), 0);  // measured once
  NodeModel given = back.nodes[0];
  apply_entry(given, parse_machine_entries("node host=host1 copy=5GB/s\n").at(0), "--machine f");
  EXPECT_TRUE(given.copy.curve.empty());
  EXPECT_EQ(rate_at(given.copy, 1024), 5);
  EXPECT_EQ(given.intra.curve.size(), 2u);  // another rate keeps its own
}

// A rate measured again at the end of a run: each point its faster figure and how far it moved
// between the two moments (each size its own: a machine whose cache-sized transfers slowed 4x while
// its memory-sized ones did not moved at the small sizes alone), the spread the larger of the two
// moments'; a curve of other sizes, or none, is not taken in.
TEST(MachineRate, KeepFasterOfTwoMoments) {
  Rate r{3.0, FigureSource::measured, "ring exchange", 0.02, 134217728, {{16384, 2.0}, {134217728, 3.0}}};
  Rate again{4.0, FigureSource::measured, "ring exchange", 0.01, 134217728, {{16384, 2.5}, {134217728, 4.0}}};
  ASSERT_TRUE(keep_faster(r, again));
  EXPECT_EQ(r.curve[0].gbytes_per_s, 2.5);
  EXPECT_EQ(r.curve[1].gbytes_per_s, 4.0);
  EXPECT_EQ(r.gbytes_per_s, 4.0);
  EXPECT_DOUBLE_EQ(r.curve[0].moved, 0.2);   // 1 - 2 / 2.5
  EXPECT_DOUBLE_EQ(r.curve[1].moved, 0.25);  // 1 - 3 / 4
  EXPECT_DOUBLE_EQ(r.spread, 0.02);          // the repeats' spread: the larger of the two moments'
  Rate slower = again;
  slower.curve = {{16384, 1.0}, {134217728, 3.6}};
  slower.gbytes_per_s = 3.6, slower.spread = 0;
  ASSERT_TRUE(keep_faster(r, slower));  // the faster points stay; what moved does not shrink
  EXPECT_EQ(r.curve[1].gbytes_per_s, 4.0);
  EXPECT_DOUBLE_EQ(r.curve[0].moved, 0.6);  // 1 - 1 / 2.5
  EXPECT_DOUBLE_EQ(r.curve[1].moved, 0.25);
  EXPECT_DOUBLE_EQ(moved_at(r, 16384), 0.6);
  EXPECT_DOUBLE_EQ(moved_at(r, 1048576), 0.6);  // between two points: the larger
  EXPECT_DOUBLE_EQ(moved_at(r, 134217728), 0.25);
  EXPECT_DOUBLE_EQ(moved_at(r, 1e12), 0.25);
  EXPECT_EQ(curve_text(r.curve), "16384:2.5:0.6,134217728:4:0.25");
  EXPECT_DOUBLE_EQ(parse_curve(curve_text(r.curve))[0].moved, 0.6);
  Rate copy{5.0, FigureSource::measured, "memcpy", 0, 268435456, {{16384, 30}, {134217728, 4}}};
  Rate copy_again{};
  copy_again.curve = {{16384, 20}, {134217728, 5}};
  ASSERT_TRUE(keep_faster(copy, copy_again));
  EXPECT_EQ(copy.gbytes_per_s, 5.0);  // its one figure was not measured again
  EXPECT_DOUBLE_EQ(copy.curve[1].moved, 0.2);
  EXPECT_DOUBLE_EQ(copy.curve[0].moved, 1 - 20.0 / 30);
  Rate other_sizes = again;
  other_sizes.curve = {{16384, 9}, {67108864, 9}};
  EXPECT_FALSE(keep_faster(r, other_sizes));
  EXPECT_EQ(r.curve[1].gbytes_per_s, 4.0);
  Rate flat{5.0, FigureSource::user, "given", 0, 0, {}};
  EXPECT_FALSE(keep_faster(flat, again));
  EXPECT_EQ(flat.gbytes_per_s, 5.0);
}

// A node's rates measured again: each with a curve takes the other moment in and says so; a rate
// without one (the NIC's) is left as it was.
TEST(MachineRate, KeepFasterOfANode) {
  NodeModel n, again;
  n.copy_out = {5.0, FigureSource::measured, "memcpy", 0, 268435456, {{16384, 30}, {134217728, 4}}};
  again.copy_out.curve = {{16384, 20}, {134217728, 5}};
  n.intra_one = {2.0, FigureSource::measured, "ping-pong", 0, 134217728, {{16384, 1.0}, {134217728, 2.0}}};
  again.intra_one.curve = {{16384, 1.5}, {134217728, 1.0}};
  n.nic = {1.25, FigureSource::system, "eth0 10000 Mb/s", 0, 0, {}};
  again.nic = {9.0, FigureSource::system, "eth0", 0, 0, {}};
  keep_faster(n, again, "; again");
  EXPECT_EQ(n.copy_out.curve[1].gbytes_per_s, 5.0);
  EXPECT_EQ(n.copy_out.detail, "memcpy; again");
  EXPECT_EQ(n.intra_one.curve[0].gbytes_per_s, 1.5);
  EXPECT_EQ(n.intra_one.curve[1].gbytes_per_s, 2.0);
  EXPECT_EQ(n.intra_one.detail, "ping-pong; again");
  EXPECT_EQ(n.nic.gbytes_per_s, 1.25);
  EXPECT_EQ(n.nic.detail, "eth0 10000 Mb/s");
  EXPECT_EQ(n.copy.detail, "");  // no curve on either side
  EXPECT_EQ(describe_moved(n),
            "intra_one moved up to 50% (at 128.0 MiB a rank, 2 GB/s at its faster moment), copy_out 33% (at 16.0 KiB "
            "a rank, 30 GB/s)");
  EXPECT_EQ(describe_moved(NodeModel{}), "");
}

// The latency measured again: the faster of two measured figures, how far they moved apart, the
// larger spread, and the note; a given latency, or none measured again, is left as it is. Its
// movement goes through the text form.
TEST(MachineRate, KeepFasterLatency) {
  MachineModel m, again;
  m.latency_us = 0.345, m.latency_source = FigureSource::measured, m.latency_detail = "8 B ping-pong";
  m.latency_spread = 0.035;
  again.latency_us = 0.125, again.latency_source = FigureSource::measured, again.latency_spread = 0.077;
  ASSERT_TRUE(keep_faster_latency(m, again, "; again"));
  EXPECT_EQ(m.latency_us, 0.125);
  EXPECT_DOUBLE_EQ(m.latency_moved, 1 - 0.125 / 0.345);
  EXPECT_EQ(m.latency_spread, 0.077);
  EXPECT_EQ(m.latency_detail, "8 B ping-pong; again");
  const MachineModel back = from_text(to_text(m));
  EXPECT_DOUBLE_EQ(back.latency_moved, m.latency_moved);
  EXPECT_NE(to_text(m).find(" latency.moved=0.637"), std::string::npos) << to_text(m);
  EXPECT_FALSE(keep_faster_latency(m, MachineModel{}, "; again"));
  MachineModel given;
  given.latency_us = 2, given.latency_source = FigureSource::user;
  EXPECT_FALSE(keep_faster_latency(given, again, "; again"));
  EXPECT_EQ(given.latency_us, 2);
}

}  // namespace
}  // namespace commscope
