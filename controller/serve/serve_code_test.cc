// spacectl serve's code out, apply and apply-state routes and its metrics, against the recording
// fake `docker` (testing/serve_fixture.h); a real repository stands in for the user's.
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/process.h"
#include "controller/serve/testing/serve_fixture.h"
#include "policy/number.h"

namespace controller::serve {
namespace {

using nlohmann::json;
using serve::testing::Answer;
using serve::testing::at_path;
using serve::testing::kId;
using serve::testing::ServeTest;

// Code out, apply and apply-state through the API: the same refusals as the CLI, the long ones
// as operations with progress events, and an apply as a branch that lands in a real repository.
TEST_F(ServeTest, CodeOutApplyAndApplyStateAnswerLikeTheCli) {
  start();
  // No code in recorded: code out refuses in its operation, apply-state at once, apply in its
  // operation.
  Answer a = call("POST", at_path("/v1/spaces/{id}/code/out", kId), R"({"timeout_seconds":30})");
  ASSERT_EQ(a.status, 202) << a.body;
  json d = finished(a.doc["operation"]);
  EXPECT_EQ(d["state"], "failed") << d.dump();
  EXPECT_EQ(d["kind"], "code-out");
  EXPECT_EQ(d["failure"]["code"], "space_start_missing") << d.dump();
  EXPECT_EQ(
      call("POST", at_path("/v1/spaces/{id}/code/out", kId), R"({"timeout_seconds":0})").status,
      400);
  EXPECT_EQ(call("POST", at_path("/v1/spaces/{id}/code/out", kId), R"({"deadline":5})").status,
            400);
  a = call("GET", at_path("/v1/spaces/{id}/apply-state", kId));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(code_of(a), "invalid_argument");
  for (const char* bad :
       {R"({"as":"branch"})", R"({"as":"tree","branch":"x"})", R"({"as":"changes","branch":"x"})",
        R"({"as":"branch","branch":"x","remove_afterwards":true})",
        R"({"as":"changes","remove_afterwards":"yes"})"}) {
    EXPECT_EQ(call("POST", at_path("/v1/spaces/{id}/apply", kId), bad).status, 400) << bad;
  }

  // A repository whose result ref holds the space's work, as code out promotes it.
  const std::string repo = dir_ + "/repo";
  auto git = [&](std::vector<std::string> args) {
    ProcessRequest r;
    r.argv = {"git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", repo};
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    const ProcessOutcome o = run_process(r);
    EXPECT_TRUE(o.succeeded()) << o.describe();
    std::string out = o.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  ASSERT_EQ(mkdir(repo.c_str(), 0700), 0);
  git({"init", "-q"});
  std::ofstream(repo + "/a.txt") << "one\n";
  git({"add", "."});
  git({"commit", "-qm", "first"});
  const std::string start_commit = git({"rev-parse", "HEAD"});
  git({"update-ref", "refs/openchamber/spaces/" + std::string(kId) + "/start", start_commit});
  std::ofstream(repo + "/a.txt") << "one\ntwo (agent)\n";
  git({"commit", "-qam", "agent work"});
  const std::string result = git({"rev-parse", "HEAD"});
  git({"update-ref", "refs/openchamber/spaces/" + std::string(kId) + "/result", result});
  git({"reset", "-q", "--hard", start_commit});
  const json record = {{"version", 1},
                       {"mode", "allowlist"},
                       {"domains", json::array()},
                       {"grants", json::array()},
                       {"code",
                        {{"repository", repo},
                         {"space_path", "/spaces/" + std::string(kId) + "/repo"},
                         {"project_path", "/spaces/" + std::string(kId) + "/repo"},
                         {"base", start_commit},
                         {"history", "sent"}}}};
  const std::string record_path = dir_ + "/state/spaces/" + kId + ".json";
  mkdir((dir_ + "/state/spaces").c_str(), 0700);
  std::ofstream(record_path) << record.dump() << "\n";
  chmod(record_path.c_str(), 0600);

  a = call("GET", at_path("/v1/spaces/{id}/apply-state", kId));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["changes_route"], "open") << a.body;
  EXPECT_EQ(a.doc["result"], result) << a.body;
  a = call("POST", at_path("/v1/spaces/{id}/apply", kId), R"({"as":"branch","branch":"work"})");
  ASSERT_EQ(a.status, 202) << a.body;
  const std::string op = a.doc["operation"];
  d = finished(op);
  EXPECT_EQ(d["state"], "done") << d.dump();
  EXPECT_EQ(d["kind"], "apply");
  EXPECT_EQ(d["result"]["branch"], "refs/heads/work") << d.dump();
  EXPECT_EQ(git({"rev-parse", "refs/heads/work"}), result);
  const Answer events = call("GET", at_path("/v1/operations/{op}/events", "", op));
  EXPECT_NE(events.body.find("applying as branch work"), std::string::npos) << events.body;
  // The same name again: the CLI's refusal, in the operation's failure.
  a = call("POST", at_path("/v1/spaces/{id}/apply", kId), R"({"as":"branch","branch":"work"})");
  ASSERT_EQ(a.status, 202) << a.body;
  d = finished(a.doc["operation"]);
  EXPECT_EQ(d["failure"]["code"], "branch_exists") << d.dump();
  // With the record, code out gets as far as the space (the fake's exec answers no result).
  a = call("POST", at_path("/v1/spaces/{id}/code/out", kId));
  ASSERT_EQ(a.status, 202) << a.body;
  d = finished(a.doc["operation"]);
  EXPECT_EQ(d["state"], "failed") << d.dump();
  EXPECT_NE(d["failure"]["code"], "space_start_missing") << d.dump();
}

// Serve's own Prometheus metrics, parsed as the exposition format (0.0.4): every sample line is
// `name{label="value",...} number` of a family announced by # TYPE before it; the figures follow
// what was done: a failed code in, a dispatcher refusal, API answers, spaces by state.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};
std::vector<Sample> parse_exposition(const std::string& text, std::string& problem) {
  std::vector<Sample> out;
  std::set<std::string> typed;
  const std::regex type_line(
      R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  const std::regex sample_line(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (-?[0-9.eE+-]+|\+Inf|NaN))");
  const std::regex label_pair(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)\"(,|$))");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      if (!std::regex_match(line, m, type_line)) {
        problem += "bad TYPE line: " + line + "\n";
      } else {
        typed.insert(m[1].str());
      }
      continue;
    }
    if (!std::regex_match(line, m, sample_line)) {
      problem += "bad sample line: " + line + "\n";
      continue;
    }
    Sample smp;
    smp.name = m[1].str();
    // The exposition format's own words for the two values a number cannot spell.
    const std::optional<double> value = m[4] == "+Inf"  ? std::numeric_limits<double>::infinity()
                                        : m[4] == "NaN" ? std::numeric_limits<double>::quiet_NaN()
                                                        : policy::parse_number<double>(m[4].str());
    if (!value) {
      problem += "bad sample value: " + line + "\n";
      continue;
    }
    smp.value = *value;
    std::string family = smp.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (!typed.count(family) && family.size() > std::strlen(suffix) &&
          family.compare(family.size() - std::strlen(suffix), std::string::npos, suffix) == 0) {
        family = family.substr(0, family.size() - std::strlen(suffix));
      }
    }
    if (!typed.count(family)) problem += "sample before its TYPE: " + line + "\n";
    const std::string labels = m[3].str();
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label_pair);
         it != std::sregex_iterator(); ++it) {
      smp.labels[(*it)[1].str()] = (*it)[2].str();
    }
    out.push_back(std::move(smp));
  }
  return out;
}

TEST_F(ServeTest, MetricsCountSpacesOperationsAndDispatcherAnswersInTheExpositionFormat) {
  start();
  Answer a =
      call("POST", at_path("/v1/spaces/{id}/code/in", kId), R"({"repo":"/nonexistent/project"})");
  ASSERT_EQ(a.status, 202) << a.body;
  EXPECT_EQ(finished(a.doc["operation"])["state"], "failed");
  EXPECT_EQ(call("GET", "/api/spaces/0123456789ab/session").status, 404);  // a dispatcher refusal
  EXPECT_EQ(call("GET", "/v1/health").status, 200);
  a = call("GET", "/v1/metrics");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.head.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << a.head;
  std::string problem;
  const std::vector<Sample> samples = parse_exposition(a.body, problem);
  EXPECT_EQ(problem, "") << a.body;
  auto value = [&](const std::string& name,
                   const std::map<std::string, std::string>& labels) -> double {
    for (const Sample& x : samples) {
      if (x.name == name && x.labels == labels) return x.value;
    }
    ADD_FAILURE() << "no sample " << name << " in\n" << a.body;
    return -1;
  };
  EXPECT_EQ(value("spacectl_place_up", {}), 1);
  EXPECT_EQ(value("spacectl_spaces", {{"state", "running"}}), 0);  // the fake lists no space
  EXPECT_EQ(value("spacectl_spaces", {{"state", "stopped-idle"}}), 0);
  EXPECT_EQ(value("spacectl_operations_total", {{"kind", "code-in"}, {"result", "failed"}}), 1);
  EXPECT_EQ(value("spacectl_operation_duration_seconds_count", {{"kind", "code-in"}}), 1);
  EXPECT_EQ(
      value("spacectl_operation_duration_seconds_bucket", {{"kind", "code-in"}, {"le", "+Inf"}}),
      1);
  double previous = 0;
  for (const char* le : {"1", "5", "15", "60", "300", "900", "3600"}) {
    const double b =
        value("spacectl_operation_duration_seconds_bucket", {{"kind", "code-in"}, {"le", le}});
    EXPECT_GE(b, previous) << "buckets are cumulative";
    previous = b;
  }
  EXPECT_EQ(value("spacectl_dispatcher_requests_total", {{"status", "404"}}), 1);
  EXPECT_GE(value("spacectl_api_requests_total", {{"status", "200"}}), 1);
  EXPECT_GE(value("spacectl_api_requests_total", {{"status", "202"}}), 1);
  EXPECT_EQ(value("spacectl_operations_running", {}), 0);
}

}  // namespace
}  // namespace controller::serve
