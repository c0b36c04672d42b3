// The schema names: the doctor writes commscope.doctor/1 (the one form of schemas.hpp), the report
// reads it and a file written with the earlier name commscope-doctor/1, and the bench reader
// sends either doctor file to the right command.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "commscope/analysis/inputs.hpp"
#include "commscope/common/schemas.hpp"
#include "commscope/common/temp_folder.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "commscope/h5/h5.hpp"

namespace fs = std::filesystem;
using namespace commscope;

namespace {

std::string doctor_file(const std::string& name, const std::string& schema = "") {
  const std::string path = commscope::temp_file("commscope-schemas", name);
  {
    formats::doctor::File f(path, 2, 1);
    formats::doctor::RankRow r;
    r.rank = 1;
    f.add(std::vector<formats::doctor::RankRow>{r});
    f.finish("complete");
  }
  if (!schema.empty()) {
    h5::File f = h5::File::open_rw(path);
    f.open_group("meta").set_attr("schema", schema);
  }
  return path;
}

}  // namespace

TEST(Schemas, OneForm) {
  for (const std::string_view name : {schemas::kBench, schemas::kProfile, schemas::kDoctor})
    EXPECT_TRUE(name.starts_with("commscope.") && name.find('/') != std::string_view::npos) << name;
  EXPECT_TRUE(schemas::is_doctor(schemas::kDoctorBefore));
  EXPECT_FALSE(schemas::is_doctor(schemas::kBench));
}

TEST(Schemas, TheDoctorWritesTheOneForm) {
  const analysis::DoctorFile d = analysis::read_doctor_file(doctor_file("new.h5"));
  EXPECT_EQ(d.meta_value("schema"), "commscope.doctor/1");
  EXPECT_EQ(d.nranks, 2);
  ASSERT_EQ(d.ranks.size(), 1u);
}

TEST(Schemas, AnOldDoctorFileStillReads) {
  const analysis::DoctorFile d = analysis::read_doctor_file(doctor_file("old.h5", "commscope-doctor/1"));
  EXPECT_EQ(d.meta_value("schema"), "commscope-doctor/1");
  EXPECT_EQ(d.nranks, 2);
  ASSERT_EQ(d.ranks.size(), 1u);
}

TEST(Schemas, ABenchReaderSendsEitherDoctorFileToTheDoctor) {
  for (const std::string schema : {"commscope.doctor/1", "commscope-doctor/1"}) {
    try {
      (void)analysis::read_bench_file(doctor_file("as-bench.h5", schema));
      ADD_FAILURE() << "read as a bench file: " << schema;
    } catch (const analysis::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("use 'commscope-report doctor'"), std::string::npos) << e.what();
    }
  }
}

TEST(Schemas, AnotherDoctorVersionIsRefused) {
  EXPECT_THROW((void)analysis::read_doctor_file(doctor_file("v9.h5", "commscope.doctor/9")), analysis::InputError);
}
