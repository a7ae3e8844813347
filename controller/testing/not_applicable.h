// The explicit list of escape cases allowed to report N/A on a place and image
// (escape-suite/not-applicable.txt), and the check of a report against it: N/A is not a pass by
// default. Header-only, standard library only; used by the live escape test and its unit test.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace controller::testing {

struct AllowedNotApplicable {
  std::string place, image, case_id, reason;
};

struct ReportedCase {
  std::string id, verdict, evidence;  // verdict as in the JSON report: PASS, FAIL, N/A, INCONCLUSIVE
};

// Parses the list; a line without place, image, case and reason is an error (its text in *error).
inline std::vector<AllowedNotApplicable> parse_not_applicable(const std::string& text, std::string* error) {
  std::vector<AllowedNotApplicable> out;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    AllowedNotApplicable entry;
    if (!(words >> entry.place)) continue;  // blank or comment
    words >> entry.image >> entry.case_id;
    std::getline(words >> std::ws, entry.reason);
    if (entry.image.empty() || entry.case_id.empty() || entry.reason.empty()) {
      *error = "line " + std::to_string(number) + ": want <place> <image> <case> <reason>: " + line;
      return {};
    }
    out.push_back(entry);
  }
  return out;
}

// One line per problem: an N/A that is not listed for this place and image, an N/A without
// evidence, and a listed case that did not report N/A (or is missing from the report).
inline std::vector<std::string> not_applicable_problems(const std::vector<AllowedNotApplicable>& allowed,
                                                        const std::string& place, const std::string& image,
                                                        const std::vector<ReportedCase>& report) {
  std::vector<std::string> problems;
  auto listed = [&](const std::string& id) {
    for (const AllowedNotApplicable& a : allowed) {
      if (a.place == place && a.image == image && a.case_id == id) return true;
    }
    return false;
  };
  for (const ReportedCase& c : report) {
    if (c.verdict != "N/A") continue;
    if (!listed(c.id)) {
      problems.push_back(c.id + " is N/A (" + c.evidence + ") but not listed for " + place + "/" + image);
    } else if (c.evidence.empty()) {
      problems.push_back(c.id + " is N/A without evidence");
    }
  }
  for (const AllowedNotApplicable& a : allowed) {
    if (a.place != place || a.image != image) continue;
    std::string verdict = "absent from the report";
    for (const ReportedCase& c : report) {
      if (c.id == a.case_id) verdict = c.verdict;
    }
    if (verdict != "N/A") {
      problems.push_back(a.case_id + " is listed as N/A for " + place + "/" + image + " but is " + verdict +
                         ": remove the line");
    }
  }
  return problems;
}

}  // namespace controller::testing
