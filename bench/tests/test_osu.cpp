// OSU's point-to-point tests: their flags (parse_osu_options), OSU 7.4's counts and sizes, and
// the exact output layout that scripts written for OSU read.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "osu/osu_coll.hpp"
#include "osu/osu_options.hpp"
#include "osu/osu_pt2pt.hpp"
#include "osu/osu_report.hpp"

namespace commscope::bench {
namespace {

OsuParse parse(OsuTest t, std::vector<const char*> args) {
  args.insert(args.begin(), "osu");
  return parse_osu_options(t, static_cast<int>(args.size()), args.data());
}

TEST(OsuOptions, NamesAreOsusBinaries) {
  EXPECT_EQ(osu_test_named("osu_latency"), OsuTest::latency);
  EXPECT_EQ(osu_test_named("/usr/local/bin/osu_bw"), OsuTest::bw);
  EXPECT_EQ(osu_test_named("osu_bibw"), OsuTest::bibw);
  EXPECT_EQ(osu_test_named("osu_mbw_mr"), OsuTest::mbw_mr);
  EXPECT_FALSE(osu_test_named("osu_bw_perf"));
  EXPECT_FALSE(osu_test_named("commscope-bench"));
}

TEST(OsuOptions, OsusFlags) {
  const OsuParse r = parse(OsuTest::bw, {"-m", "8:1048576", "-i", "100", "-x", "10", "-W", "32", "-f"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  EXPECT_EQ(r.options.min_bytes, 8u);
  EXPECT_EQ(r.options.max_bytes, 1048576u);
  EXPECT_EQ(r.options.iterations(1 << 20), 100);
  EXPECT_EQ(r.options.warmup(1 << 20), 10);
  EXPECT_EQ(r.options.window, 32);
  EXPECT_TRUE(r.options.full);
  const OsuParse longs = parse(OsuTest::mbw_mr, {"--message-size", "2:", "--num-pairs", "2", "--print-rate", "0"});
  ASSERT_EQ(longs.exit_code, -1) << longs.message;
  EXPECT_EQ(longs.options.min_bytes, 2u);
  EXPECT_EQ(longs.options.max_bytes, 4u << 20);
  EXPECT_EQ(longs.options.pairs, 2);
  EXPECT_FALSE(longs.options.print_rate);
}

// OSU 7.4: -m MAX keeps the default MIN (0 B for latency, 1 B for the others), ":MAX" too.
TEST(OsuOptions, SizesAsOsuDoublesThem) {
  const OsuParse lat = parse(OsuTest::latency, {"-m", "128"});
  ASSERT_EQ(lat.exit_code, -1) << lat.message;
  EXPECT_EQ(lat.options.sizes(), (std::vector<std::size_t>{0, 1, 2, 4, 8, 16, 32, 64, 128}));
  const OsuParse bw = parse(OsuTest::bw, {"-m", ":16"});
  ASSERT_EQ(bw.exit_code, -1) << bw.message;
  EXPECT_EQ(bw.options.sizes(), (std::vector<std::size_t>{1, 2, 4, 8, 16}));
  const OsuParse odd = parse(OsuTest::bibw, {"-m", "3:100"});
  EXPECT_EQ(odd.options.sizes(), (std::vector<std::size_t>{3, 6, 12, 24, 48, 96}));
  const OsuParse all = parse(OsuTest::latency, {});
  EXPECT_EQ(all.options.sizes().size(), 24u);  // 0, 1 .. 4 MiB
  EXPECT_EQ(all.options.sizes().back(), 4u << 20);
}

// OSU 7.4's counts: latency 10000 timed after 100 (1000 after 10 above 8 KiB); the windowed
// tests 100 after 10 (20 after 2), with a window of 64.
TEST(OsuOptions, OsusDefaultCounts) {
  const OsuOptions lat = parse(OsuTest::latency, {}).options;
  EXPECT_EQ(lat.iterations(8192), 10000);
  EXPECT_EQ(lat.warmup(8192), 100);
  EXPECT_EQ(lat.iterations(8193), 1000);
  EXPECT_EQ(lat.warmup(8193), 10);
  const OsuOptions bw = parse(OsuTest::bw, {}).options;
  EXPECT_EQ(bw.iterations(8192), 100);
  EXPECT_EQ(bw.warmup(8192), 10);
  EXPECT_EQ(bw.iterations(8193), 20);
  EXPECT_EQ(bw.warmup(8193), 2);
  EXPECT_EQ(bw.window, 64);
}

TEST(OsuOptions, BadInputIsOneLineAndStatus2) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> bad = {
      {{"-i", "0"}, "-i must be >= 1"},
      {{"-x", "-1"}, "-x must be >= 0"},
      {{"-m", "64:8"}, "MIN is larger than MAX"},
      {{"-m", "1:2:3"}, "bad -m '1:2:3'"},
      {{"-m", "8X"}, "bad size '8X'"},
      {{"-m", "2G"}, "at most 1G"},
      {{"-W", "0"}, "-W must be >= 1"},
      {{"-d", "rocm"}, "only cuda buffers"},
      {{"D", "D"}, "need -d cuda"},
      {{"-q"}, "-q"},
  };
  for (const auto& [args, want] : bad) {
    const OsuParse r = parse(OsuTest::bw, args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_NE(r.message.find(want), std::string::npos) << r.message;
    EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
    EXPECT_EQ(r.message.rfind("osu_bw: ", 0), 0u) << r.message;
  }
  EXPECT_NE(parse(OsuTest::latency, {"-W", "8"}).message.find("one message at a time"), std::string::npos);
  EXPECT_EQ(parse(OsuTest::mbw_mr, {"-R", "2"}).exit_code, 2);
  EXPECT_EQ(parse(OsuTest::mbw_mr, {"-p", "0"}).exit_code, 2);
  EXPECT_EQ(parse(OsuTest::latency, {"-h"}).exit_code, 0);
}

// -d cuda: device buffers where SRC DST say D (refused in a build without CUDA, with a line
// that says so).
TEST(OsuOptions, DeviceBuffers) {
  const OsuParse r = parse(OsuTest::latency, {"-d", "cuda", "H", "D"});
  if (r.exit_code == 2) {
    EXPECT_NE(r.message.find("no CUDA"), std::string::npos) << r.message;
    return;
  }
  ASSERT_EQ(r.exit_code, -1) << r.message;
  EXPECT_TRUE(r.options.device);
  EXPECT_EQ(r.options.src, 'H');
  EXPECT_EQ(r.options.dst, 'D');
  // -d cuda alone keeps both buffers on the host, as OSU 7.4's -d cuda without SRC DST.
  const OsuOptions alone = parse(OsuTest::latency, {"-d", "cuda"}).options;
  EXPECT_EQ(alone.src, 'H');
  EXPECT_EQ(alone.dst, 'H');
}

std::string printed(auto print) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print(out);
  std::fclose(out);
  std::string s(text, size);
  std::free(text);
  return s;
}

// Byte for byte as OSU 7.4 prints (configured: FIELD_WIDTH 18, 2 decimals).
TEST(OsuReport, OsusLayout) {
  OsuOptions lat = parse(OsuTest::latency, {}).options;
  const std::string head = printed([&](std::FILE* f) {
    print_osu_header(f, lat, 2, 1);
    print_osu_columns(f, lat, OsuType::mpi_char);
  });
  EXPECT_EQ(head.rfind("\n# OSU MPI Latency Test v7.4\n", 0), 0u) << head;
  EXPECT_NE(head.find("\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"), std::string::npos) << head;
  EXPECT_EQ(printed([&](std::FILE* f) { print_osu_line(f, lat, {.bytes = 1, .value = 0.5}); }),
            "1                       0.50\n");
  lat.full = true;
  EXPECT_EQ(printed([&](std::FILE* f) {
              print_osu_line(f, lat, {.bytes = 4096, .iterations = 10000, .value = 1.25, .min = 1, .max = 12.5});
            }),
            "4096                    1.25              1.00             12.50       10000\n");

  const OsuOptions bw = parse(OsuTest::bibw, {}).options;
  const std::string bw_head = printed([&](std::FILE* f) {
    print_osu_header(f, bw, 2, 1);
    print_osu_columns(f, bw, OsuType::mpi_char);
  });
  EXPECT_EQ(bw_head.rfind("\n# OSU MPI Bi-Directional Bandwidth Test v7.4\n", 0), 0u) << bw_head;
  EXPECT_NE(bw_head.find("\n# Size      Bandwidth (MB/s)\n"), std::string::npos) << bw_head;

  const OsuOptions mr = parse(OsuTest::mbw_mr, {}).options;
  const std::string mr_head = printed([&](std::FILE* f) {
    print_osu_header(f, mr, 4, 2);
    print_osu_columns(f, mr, OsuType::mpi_char);
  });
  EXPECT_EQ(
      mr_head.rfind("# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\n# [ pairs: 2 ] [ window size: 64 ]\n", 0),
      0u)
      << mr_head;
  EXPECT_NE(mr_head.find("\n# Size                  MB/s        Messages/s\n"), std::string::npos) << mr_head;
  EXPECT_EQ(
      printed([&](std::FILE* f) { print_osu_line(f, mr, {.bytes = 8, .value = 50.01, .messages_per_s = 6251807.16}); }),
      "8                      50.01        6251807.16\n");
}

// -T and -c, which OSU users type on the point-to-point tests as on the collectives (both were
// "not expected"): OSU's names in any case, repeated -T add up, `all` is the three; -u bounds.
TEST(OsuOptions, TypesAndValidation) {
  const OsuParse r = parse(OsuTest::latency, {"-T", "mpi_float", "-c", "-m", "1:64"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  EXPECT_EQ(r.options.types, std::vector<OsuType>{OsuType::mpi_float});
  EXPECT_TRUE(r.options.validate);
  EXPECT_EQ(r.options.validation_warmup, 5);  // OSU's default with -c
  EXPECT_EQ(parse(OsuTest::latency, {}).options.types, std::vector<OsuType>{OsuType::mpi_char});
  EXPECT_EQ(parse(OsuTest::latency, {}).options.validation_warmup, 0);
  const OsuParse many = parse(OsuTest::bw, {"-T", "MPI_INT", "--type", "all", "-c", "-u", "0"});
  ASSERT_EQ(many.exit_code, -1) << many.message;
  EXPECT_EQ(many.options.types,
            (std::vector<OsuType>{OsuType::mpi_int, OsuType::mpi_char, OsuType::mpi_int, OsuType::mpi_float}));
  EXPECT_EQ(many.options.validation_warmup, 0);
  EXPECT_EQ(type_size(OsuType::mpi_float), 4u);
  EXPECT_EQ(library_type(OsuType::mpi_char), DataType::i8);
  for (const auto& [args, want] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"-T", "mpi_double"}, "bad -T 'mpi_double' (mpi_char, mpi_int, mpi_float or all)"},
           {{"-c", "-u", "11"}, "-u must be 0 to 10"},
           {{"--debug-corrupt"}, "needs -c"}}) {
    const OsuParse bad = parse(OsuTest::latency, args);
    EXPECT_EQ(bad.exit_code, 2) << args[0];
    EXPECT_NE(bad.message.find(want), std::string::npos) << bad.message;
  }
}

// The collective tests: OSU 7.4's names, counts (1000 after 100; 100 after 10 above 8 KiB) and
// sizes (1 B to 1 MiB), -f, -M, -k fixed:ROOT; host buffers only.
TEST(OsuOptions, CollectiveTests) {
  const std::vector<std::pair<const char*, Collective>> tests = {{"osu_allreduce", Collective::allreduce},
                                                                 {"osu_allgather", Collective::allgather},
                                                                 {"osu_alltoall", Collective::alltoall},
                                                                 {"osu_bcast", Collective::broadcast},
                                                                 {"osu_gather", Collective::gather},
                                                                 {"osu_reduce", Collective::reduce},
                                                                 {"osu_reduce_scatter", Collective::reducescatter},
                                                                 {"/opt/omb/osu_scatter", Collective::scatter}};
  for (const auto& [name, coll] : tests) {
    const std::optional<OsuTest> t = osu_test_named(name);
    ASSERT_TRUE(t) << name;
    EXPECT_TRUE(is_collective(*t));
    EXPECT_EQ(osu_collective(*t), coll) << name;
  }
  EXPECT_FALSE(is_collective(OsuTest::mbw_mr));
  const OsuOptions d = parse(OsuTest::allreduce, {}).options;
  EXPECT_EQ(d.iterations(8192), 1000);
  EXPECT_EQ(d.warmup(8192), 100);
  EXPECT_EQ(d.iterations(8193), 100);
  EXPECT_EQ(d.warmup(8193), 10);
  EXPECT_EQ(d.sizes().front(), 1u);
  EXPECT_EQ(d.sizes().back(), 1u << 20);
  const OsuParse r = parse(OsuTest::gather, {"-m", "8:1024", "-i", "10", "-x", "2", "-f", "-k", "fixed:1", "-M", "1M"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  EXPECT_EQ(r.options.sizes(), (std::vector<std::size_t>{8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(r.options.iterations(1024), 10);
  EXPECT_EQ(r.options.root, 1);
  EXPECT_EQ(r.options.mem_limit, 1u << 20);
  // OSU's -M: osu_alltoall's blocks times the ranks within the limit; the others the size.
  OsuOptions big = parse(OsuTest::alltoall, {"-m", "1:64M"}).options;
  EXPECT_EQ(osu_largest_size(big, 16), (512u << 20) / 16);
  big.test = OsuTest::allreduce;
  EXPECT_EQ(osu_largest_size(big, 16), 64u << 20);
  for (const auto& [args, want] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"-d", "cuda"}, "commscope-bench allreduce --device cuda"},
           {{"-m", "0:64"}, "start at 1 byte"},
           {{"-W", "8"}, "-W"},
           {{"-k", "fixed:1"}, "-k"}}) {  // osu_allreduce has no root
    const OsuParse bad = parse(OsuTest::allreduce, args);
    EXPECT_EQ(bad.exit_code, 2) << args[0];
    EXPECT_NE(bad.message.find(want), std::string::npos) << bad.message;
    EXPECT_EQ(bad.message.rfind("osu_allreduce: ", 0), 0u) << bad.message;
  }
  EXPECT_NE(parse(OsuTest::gather, {"-k", "fixed:x"}).message.find("bad -k"), std::string::npos);
  EXPECT_NE(parse(OsuTest::reduce, {"-k", "rotate"}).message.find("bad -k 'rotate' (fixed:ROOT"), std::string::npos);
}

// OSU's tests that are not here are refused by name, with the nearest one that is.
TEST(OsuOptions, OthersRefusedByName) {
  EXPECT_EQ(osu_refusal("osu_latency"), "");
  EXPECT_EQ(osu_refusal("all_reduce_perf"), "");
  EXPECT_EQ(osu_refusal("/usr/bin/osu_iallreduce"),
            "osu_iallreduce is non-blocking (its overlap with computation is not measured here): osu_allreduce times "
            "the blocking one");
  EXPECT_NE(osu_refusal("osu_alltoallv").find("osu_alltoall makes the same calls"), std::string::npos);
  EXPECT_NE(osu_refusal("osu_barrier").find("not barriers"), std::string::npos);
  EXPECT_NE(osu_refusal("osu_put_latency").find("OSU's tests here: osu_latency"), std::string::npos);
}

// -c's pattern: what was written reads back right; one altered element, or another
// iteration's pattern, reads wrong.
TEST(OsuPt2pt, ValidationPattern) {
  for (OsuType t : {OsuType::mpi_char, OsuType::mpi_int, OsuType::mpi_float}) {
    std::vector<unsigned char> buf(4096 * type_size(t));
    osu_fill_pattern(buf.data(), t, 4096, 7);
    EXPECT_EQ(osu_count_wrong(buf.data(), t, 4096, 7), 0u);
    EXPECT_GT(osu_count_wrong(buf.data(), t, 4096, 8), 4000u);
    buf[type_size(t) * 100] ^= 0x40;
    EXPECT_EQ(osu_count_wrong(buf.data(), t, 4096, 7), 1u);
  }
}

// Byte for byte as OSU 7.4's collectives print: the title, "# Datatype", the columns with -f
// and -c, and the lines.
TEST(OsuReport, CollectiveLayout) {
  OsuOptions o = parse(OsuTest::allreduce, {"-f", "-c"}).options;
  const std::string head = printed([&](std::FILE* f) {
    print_osu_header(f, o, 4, 0);
    print_osu_columns(f, o, OsuType::mpi_float);
  });
  EXPECT_EQ(head.rfind("\n# OSU MPI Allreduce Latency Test v7.4\n", 0), 0u) << head;
  EXPECT_NE(head.find("\n# Datatype: MPI_FLOAT.\n# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  "
                      "Iterations        Validation\n"),
            std::string::npos)
      << head;
  EXPECT_EQ(printed([&](std::FILE* f) {
              print_osu_line(f, o, {.bytes = 8, .iterations = 1000, .value = 1.5, .min = 1.25, .max = 2});
            }),
            "8                       1.50              1.25              2.00        1000              Pass\n");
  EXPECT_EQ(printed([&](std::FILE* f) { print_osu_line(f, o, {.bytes = 8, .errors = 3}); }).find("Fail"), 90u);
  o = parse(OsuTest::alltoall, {}).options;
  const std::string a2a = printed([&](std::FILE* f) {
    print_osu_header(f, o, 2, 0);
    print_osu_columns(f, o, OsuType::mpi_char);
  });
  EXPECT_EQ(a2a.rfind("\n# OSU MPI All-to-All Personalized Exchange Latency Test v7.4\n", 0), 0u) << a2a;
  EXPECT_NE(a2a.find("\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"), std::string::npos) << a2a;
}

}  // namespace
}  // namespace commscope::bench
