#include "commscope/analysis/prediction_parts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "commscope/model/format.hpp"

namespace commscope::analysis {

namespace {

std::string ms(double s) {
  return format_number(s * 1e3, 3);
}

// "predicted 11x low", "not predicted", "predicted where none was measured".
std::string direction(double measured, double predicted) {
  if (predicted <= 0) return "not predicted";
  if (measured <= 0) return "predicted where none was measured";
  const bool low = predicted < measured;
  return "predicted " + format_number(low ? measured / predicted : predicted / measured, 2) + "x " +
         (low ? "low" : "high");
}
std::string against(double measured, double predicted) {
  return ms(predicted) + " against " + ms(measured) + " ms";
}

struct Item {
  double d;  // predicted - measured
  std::string text;
};

}  // namespace

double part_error(double measured_s, double predicted_s) {
  return measured_s > 0 ? predicted_s / measured_s - 1 : std::numeric_limits<double>::quiet_NaN();
}

std::string cancelling_parts(std::span<const PredictedPart> parts) {
  double measured = 0, predicted = 0, gross = 0;
  for (const PredictedPart& p : parts) {
    measured += p.measured_s, predicted += p.predicted_s;
    gross += std::abs(p.predicted_s - p.measured_s);
  }
  const double net = std::abs(predicted - measured);
  if (!(measured > 0) || gross < 2 * net || gross < kCancelShare * measured) return "";
  const double named = kNamedShare * measured;

  // Communication together where its groups miss the same way (each named in parentheses),
  // else group by group.
  std::vector<Item> items;
  std::vector<const PredictedPart*> comm;
  double comm_measured = 0, comm_predicted = 0;
  bool comm_low = false, comm_high = false;
  for (const PredictedPart& p : parts) {
    const double d = p.predicted_s - p.measured_s;
    if (!p.communication) {
      if (std::abs(d) < named) continue;
      items.push_back({d, p.unpredicted ? p.name + " (" + ms(p.measured_s) + " ms) is not predicted"
                                        : p.name + " is " + direction(p.measured_s, p.predicted_s) + " (" +
                                              against(p.measured_s, p.predicted_s) + ")"});
      continue;
    }
    comm_measured += p.measured_s, comm_predicted += p.predicted_s;
    if (std::abs(d) < named) continue;
    comm.push_back(&p);
    (d < 0 ? comm_low : comm_high) = true;
  }
  std::sort(comm.begin(), comm.end(), [](const PredictedPart* a, const PredictedPart* b) {
    return std::abs(a->predicted_s - a->measured_s) > std::abs(b->predicted_s - b->measured_s);
  });
  if (comm_low != comm_high) {  // all the named groups one way
    std::string groups;
    for (const PredictedPart* p : comm)
      groups += (groups.empty() ? "" : ", ") + p->name + " " + against(p->measured_s, p->predicted_s);
    items.push_back({comm_predicted - comm_measured, "communication is " + direction(comm_measured, comm_predicted) +
                                                         " (" + against(comm_measured, comm_predicted) + ": " + groups +
                                                         ")"});
  } else {
    for (const PredictedPart* p : comm)
      items.push_back({p->predicted_s - p->measured_s, p->name + " is " + direction(p->measured_s, p->predicted_s) +
                                                           " (" + against(p->measured_s, p->predicted_s) + ")"});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return std::abs(a.d) > std::abs(b.d); });
  std::string out =
      "the total is within " + format_number(100 * net / measured, 2) + "% only because the parts' errors cancel: ";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "; " : "") + items[i].text;
  return out;
}

}  // namespace commscope::analysis
