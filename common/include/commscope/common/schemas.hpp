// The names of commscope's file formats, in one form, "commscope.<format>/<version>", written in
// /meta's schema attribute: the bench's results (formats/src/bench_results.cpp), the profile
// (formats/src/profile_file.cpp) and the doctor's file (formats/src/doctor_file.cpp). The
// readers (analysis/src/inputs/inputs.cpp) also accept the names written before the one form.
#pragma once

#include <string_view>

namespace commscope::schemas {

inline constexpr std::string_view kBench = "commscope.bench/1";
inline constexpr std::string_view kProfile = "commscope.profile/1";
inline constexpr std::string_view kDoctor = "commscope.doctor/1";
// The doctor's name before the one form (files written until 2026-11), still read.
inline constexpr std::string_view kDoctorBefore = "commscope-doctor/1";

// Any version of a format.
constexpr bool is_bench(std::string_view schema) {
  return schema.starts_with("commscope.bench/");
}
constexpr bool is_profile(std::string_view schema) {
  return schema.starts_with("commscope.profile/");
}
constexpr bool is_doctor(std::string_view schema) {
  return schema.starts_with("commscope.doctor/") || schema.starts_with("commscope-doctor/");
}

}  // namespace commscope::schemas
