// spacectl serve end to end against the recording fake `docker`: every route of the router table
// (routes.cc) is called here or in serve_code_test.cc with its pattern written out, and API.md
// documents each one (the last two tests hold both to the table). The real spacectl runs `serve` on
// a unix socket in a fresh state directory; requests go over that socket (and over TCP with a
// bearer token).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/serve/testing/serve_fixture.h"
#include "policy/number.h"

namespace controller::serve {
namespace {

using nlohmann::json;
using serve::testing::Answer;
using serve::testing::at_path;
using serve::testing::connect_unix;
using serve::testing::http_exchange;
using serve::testing::kId;
using serve::testing::read_file;
using serve::testing::request_text;
using serve::testing::ServeTest;

TEST_F(ServeTest, HealthAnswersOnTheUnixSocketWhichOnlyTheUserCanOpen) {
  start();
  const Answer a = call("GET", "/v1/health");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["ok"], true);
  EXPECT_NE(a.head.find("X-Content-Type-Options: nosniff"), std::string::npos);
  struct stat st{};
  ASSERT_EQ(lstat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ServeTest, RefusesToStartWhenTheSocketPathIsNotAStaleSocketOfOurs) {
  ASSERT_EQ(mkdir((dir_ + "/state").c_str(), 0700), 0);
  std::ofstream(socket_) << "not a socket";
  start();
  EXPECT_EQ(pid_, -1) << "serve started over a regular file";
  EXPECT_NE(read_file(stderr_path_).find("is not a socket of this user"), std::string::npos) << read_file(stderr_path_);
  EXPECT_EQ(read_file(socket_), "not a socket");
}

TEST_F(ServeTest, ReplacesTheStaleSocketOfADeadServeButNotALiveOne) {
  start();
  ASSERT_GT(pid_, 0);
  kill(pid_, SIGKILL);  // leaves its socket behind
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  start();
  ASSERT_GT(pid_, 0) << read_file(stderr_path_);
  EXPECT_EQ(call("GET", "/v1/health").status, 200);
  const pid_t first = pid_;
  pid_ = -1;
  start();  // a second serve on the same socket
  EXPECT_EQ(pid_, -1);
  EXPECT_NE(read_file(stderr_path_).find("another spacectl serve answers"), std::string::npos) << read_file(stderr_path_);
  pid_ = first;
}

TEST_F(ServeTest, TcpNeedsTheBearerTokenFromAPrivateFile) {
  const std::string token_file = dir_ + "/token";
  const std::string token(40, 'k');
  std::ofstream(token_file) << token << "\n";
  chmod(token_file.c_str(), 0644);
  start({"--listen", "127.0.0.1:0", "--token-file", token_file});
  EXPECT_EQ(pid_, -1) << "a token file others can read was taken";
  chmod(token_file.c_str(), 0600);
  start({"--listen", "127.0.0.1:0", "--token-file", token_file});
  ASSERT_GT(pid_, 0) << read_file(stderr_path_);
  const std::string err = read_file(stderr_path_);
  const std::size_t at = err.find("127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << err;
  const std::size_t digits = err.find_first_not_of("0123456789", at + 10);
  const int port =
      policy::parse_number<int>(
          err.substr(at + 10, digits == std::string::npos ? std::string::npos : digits - (at + 10)))
          .value_or(0);
  auto tcp = [&](const std::string& extra) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return http_exchange(fd, request_text("GET", "/v1/health", "", extra));
  };
  EXPECT_EQ(tcp("").status, 401);
  EXPECT_EQ(tcp("Authorization: Bearer " + std::string(40, 'x') + "\r\n").status, 401);
  EXPECT_EQ(tcp("Authorization: Bearer " + token + "\r\n").status, 200);
}

TEST_F(ServeTest, UnknownRoutesWrongMethodsBadIdsAndBadRequestsAreRefusedWithStableCodes) {
  start();
  Answer a = call("GET", "/v1/nothing");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(code_of(a), "route_not_found");
  a = call("PATCH", "/v1/spaces");
  EXPECT_EQ(a.status, 405);
  a = call("GET", "/v1/spaces/NOT-AN-ID");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(code_of(a), "space_not_found");
  a = call("POST", "/v1/spaces", std::string(70000, ' '));
  EXPECT_EQ(a.status, 413);
  // Content-Length and Transfer-Encoding together: a smuggling shape, unreadable.
  a = call("POST", "/v1/spaces", "", "Transfer-Encoding: chunked\r\n");
  EXPECT_EQ(a.status, 400);
  a = http_exchange(connect_unix(socket_), "POST /v1/spaces HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(a.status, 411);
  EXPECT_EQ(code_of(a), "length_required");
  const int fd = connect_unix(socket_);
  a = http_exchange(fd, "GET /v1/health HTTP/9.9\r\n\r\n");
  EXPECT_EQ(a.status, 400);
  a = call("PUT", at_path("/v1/spaces/{id}/network", kId), "[1]");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(code_of(a), "invalid_argument");
}

TEST_F(ServeTest, ARequestForASpacesInnerServerGoesToTheDispatcher) {
  start();
  const Answer a = call("GET", "/api/spaces/0123456789ab/session");
  // The dispatcher's own answer (the fake lists no space), in serve's error shape, never
  // serve's route_not_found.
  EXPECT_EQ(a.status, 404) << a.body;
  EXPECT_EQ(code_of(a), "space_not_found") << a.body;
}

TEST_F(ServeTest, ListShowVerifyStartStopAnswerLikeTheCli) {
  start();
  Answer a = call("GET", "/v1/spaces");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(a.doc["spaces"].is_array());
  a = call("GET", at_path("/v1/spaces/{id}", kId));
  EXPECT_EQ(a.status, 404) << a.body;  // the fake lists nothing
  EXPECT_EQ(code_of(a), "space_not_found");
  a = call("POST", at_path("/v1/spaces/{id}/verify", kId));
  EXPECT_TRUE(a.status == 200 || (a.status == 409 && code_of(a) == "verify_failed" && a.doc["result"]["differences"].is_array()))
      << a.status << " " << a.body;
  a = call("POST", at_path("/v1/spaces/{id}/stop", kId));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["state"], "stopped");
  a = call("POST", at_path("/v1/spaces/{id}/start", kId));
  EXPECT_TRUE(a.status == 200 || a.status == 409 || a.status == 502) << a.status << " " << a.body;
  EXPECT_TRUE(a.doc.contains("id") || a.doc.contains("error")) << a.body;
  a = call("GET", "/v1/place/check");
  EXPECT_TRUE((a.status == 200 && a.doc.contains("usable")) || (a.status >= 400 && !code_of(a).empty())) << a.body;
}

TEST_F(ServeTest, NetworkGrantsWindowKeyJournalPolicyGoThroughTheGatekeeper) {
  const std::string env_secret = "sk-serve-env-secret-91c2";
  setenv("SPACECTL_SERVE_TEST_KEY", env_secret.c_str(),
         1);  // serve's environment is the env source
  start();
  unsetenv("SPACECTL_SERVE_TEST_KEY");
  Answer a = call("PUT", at_path("/v1/spaces/{id}/network", kId), R"({"mode":"open"})");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["mode"], "open");
  const std::string secret = "sk-serve-test-secret-3f7a9c";
  a = call("POST", at_path("/v1/spaces/{id}/grants", kId),
           R"({"id":"model","upstream":"https://api.example.com/v1","header":"x-api-key","secret":")" + secret + "\"}");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.body.find(secret), std::string::npos);
  bool in_stdin = false;
  for (const Call& c : calls()) {
    for (const std::string& arg : c.argv) EXPECT_EQ(arg.find(secret), std::string::npos) << "the secret in an argv";
    in_stdin = in_stdin || c.stdin_bytes.find(secret) != std::string::npos;
  }
  EXPECT_TRUE(in_stdin) << "the secret never reached the gatekeeper's stdin";
  EXPECT_EQ(read_file(dir_ + "/state/spaces/0123456789ab.json").find(secret), std::string::npos);
  a = call("POST", at_path("/v1/spaces/{id}/grants", kId), R"({"id":"model","upstream":"https://api.example.com/v1","secret":"x"})");
  EXPECT_EQ(a.status, 400) << "a secret without its header";
  // A preset and an env source: the value reaches only the gatekeeper's stdin; refresh reads it
  // again.
  a = call("POST", at_path("/v1/spaces/{id}/grants", kId),
           R"({"provider":"openai","source":{"kind":"env","name":"SPACECTL_SERVE_TEST_KEY"}})");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["grant"], "openai");
  EXPECT_EQ(a.doc["source"], "env");
  EXPECT_EQ(a.doc["upstream"], "https://api.openai.com/v1");
  a = call("POST", at_path("/v1/spaces/{id}/grants/refresh", kId), R"({"grant":"openai"})");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["refreshed"][0]["id"], "openai") << a.body;
  std::size_t env_deliveries = 0;
  for (const Call& c : calls()) {
    for (const std::string& arg : c.argv) {
      EXPECT_EQ(arg.find(env_secret), std::string::npos) << "the env secret in an argv";
    }
    env_deliveries += c.stdin_bytes.find(env_secret) != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(env_deliveries, 2u);
  EXPECT_EQ(read_file(dir_ + "/state/spaces/0123456789ab.json").find(env_secret),
            std::string::npos);
  a = call("POST", at_path("/v1/spaces/{id}/grants", kId),
           R"({"provider":"amazon-bedrock","source":{"kind":"env","name":"X"}})");
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(code_of(a), "provider_not_supported");
  a = call("POST", at_path("/v1/spaces/{id}/grants", kId),
           R"({"provider":"openai","source":{"kind":"env","name":"SPACECTL_UNSET_X"}})");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(code_of(a), "secret_source_missing");
  a = call("POST", at_path("/v1/spaces/{id}/window-key", kId));
  EXPECT_EQ(a.status, 404) << a.body;  // the window URL comes from the list, and the fake lists nothing
  EXPECT_EQ(code_of(a), "space_not_found");
  a = call("GET", at_path("/v1/spaces/{id}/journal", kId));
  EXPECT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(a.doc["records"].size(), 1u) << a.body;
  EXPECT_EQ(a.doc["records"][0]["decision"], "allow") << a.body;
  a = call("GET", at_path("/v1/spaces/{id}/policy", kId));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["mode"], "allowlist") << a.body;
  // The record's grants beside the gatekeeper's ids: their sources, never a value.
  ASSERT_EQ(a.doc["grant_sources"].size(), 2u) << a.body;
  EXPECT_EQ(a.doc["grant_sources"][1]["source"], "env") << a.body;
  EXPECT_EQ(a.body.find(secret), std::string::npos);
  EXPECT_EQ(a.body.find(env_secret), std::string::npos);
}

// The same strict reading as the CLI's: an answer that is not the gatekeeper's journal or policy
// is 502 gatekeeper_refused, and nothing of it reaches the client.
TEST_F(ServeTest, AGarbledJournalOrPolicyIs502AndNeverPassedOn) {
  const std::string answer = dir_ + "/answer";
  std::ofstream(answer) << R"({"records":[],"dropped":0,"since":"x","OBEY":1})";
  start({}, {"FAKE_DOCKER_EXEC_OUT=" + answer});
  for (const char* route : {"/v1/spaces/{id}/journal", "/v1/spaces/{id}/policy"}) {
    const Answer a = call("GET", at_path(route, kId));
    EXPECT_EQ(a.status, 502) << route << ": " << a.body;
    EXPECT_EQ(code_of(a), "gatekeeper_refused") << a.body;
    EXPECT_EQ(a.body.find("OBEY"), std::string::npos) << a.body;
  }
}

TEST_F(ServeTest, AnActionOnASpaceAnotherProcessHoldsIsSpaceBusyAt409) {
  start();
  const std::string state = dir_ + "/gk-state";
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  std::thread cli([&] {
    (void)spacectl({"network", "set", kId, "--mode", "open"}, {},
                   {"env", "FAKE_DOCKER_STATE=" + state, "FAKE_DOCKER_EXEC_DELAY_BEFORE_MS=0", "FAKE_DOCKER_EXEC_DELAY_AFTER_MS=2500"});
  });
  usleep(700000);
  const Answer a = call("POST", at_path("/v1/spaces/{id}/stop", kId));
  cli.join();
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(code_of(a), "space_busy");
}

TEST_F(ServeTest, IdleStopSettingsPerSpaceAndDefaultAreChecked) {
  start();
  Answer a = call("GET", "/v1/idle-stop");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc, json({{"enabled", true}, {"hours", 4}}));
  for (const char* bad : {R"({"enabled":true,"hours":0})", R"({"enabled":true,"hours":169})", R"({"enabled":1,"hours":2})",
                          R"({"enabled":true,"hours":2,"x":1})", R"({"enabled":true,"hours":1.5})"}) {
    a = call("PUT", "/v1/idle-stop", bad);
    EXPECT_EQ(a.status, 400) << bad;
    EXPECT_EQ(code_of(a), "invalid_idle_stop") << bad;
    a = call("PUT", at_path("/v1/spaces/{id}/idle-stop", kId), bad);
    EXPECT_EQ(a.status, 400) << bad;
  }
  a = call("PUT", "/v1/idle-stop", R"({"enabled":false,"hours":168})");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(call("GET", "/v1/idle-stop").doc["hours"], 168);
  a = call("GET", at_path("/v1/spaces/{id}/idle-stop", kId));
  EXPECT_EQ(a.doc["default"], true);
  EXPECT_EQ(a.doc["enabled"], false);
  a = call("PUT", at_path("/v1/spaces/{id}/idle-stop", kId), R"({"enabled":true,"hours":1})");
  EXPECT_EQ(a.status, 200) << a.body;
  a = call("GET", at_path("/v1/spaces/{id}/idle-stop", kId));
  EXPECT_EQ(a.doc["default"], false);
  EXPECT_EQ(a.doc["hours"], 1);
}

TEST_F(ServeTest, CreateRunsInTheBackgroundWithProgressEventsAndAFailureStaysListedUntilDismissed) {
  start();
  // A missing repository: refused by the creation, after the 202.
  Answer a = call("POST", "/v1/spaces", R"({"name":"try","repo":"/nonexistent/project"})");
  ASSERT_EQ(a.status, 202) << a.body;
  const std::string op = a.doc["operation"];
  const std::string id = a.doc["id"];
  Answer events = call("GET", at_path("/v1/operations/{op}/events", "", op));
  EXPECT_EQ(events.status, 200);
  EXPECT_NE(events.head.find("text/event-stream"), std::string::npos);
  EXPECT_NE(events.body.find("event: end"), std::string::npos) << events.body;
  json d = finished(op);
  EXPECT_EQ(d["state"], "failed") << d.dump();
  EXPECT_EQ(d["failure"]["code"], "project_folder_missing") << d.dump();
  EXPECT_EQ(d["space"], id);
  // A creation the place accepts (the fake answers every step): done or failed, never lost.
  a = call("POST", "/v1/spaces", R"({"name":"second","memory_bytes":268435456})");
  ASSERT_EQ(a.status, 202) << a.body;
  const std::string op2 = a.doc["operation"], id2 = a.doc["id"];
  d = finished(op2);
  ASSERT_NE(d["state"], "running") << d.dump();
  events = call("GET", at_path("/v1/operations/{op}/events", "", op2));
  EXPECT_NE(events.body.find("resolving_images"), std::string::npos) << events.body;
  Answer list = call("GET", "/v1/spaces");
  if (d["state"] == "failed") {
    bool listed = false;
    for (const json& s : list.doc["spaces"]) {
      if (s["id"] == id2) {
        listed = true;
        EXPECT_EQ(s["state"], "failed");
        EXPECT_EQ(s["failure"]["code"], d["failure"]["code"]);
      }
    }
    EXPECT_TRUE(listed) << list.body;
    a = call("DELETE", at_path("/v1/spaces/{id}", id2));
    EXPECT_EQ(a.status, 200) << a.body;
    list = call("GET", "/v1/spaces");
    for (const json& s : list.doc["spaces"]) EXPECT_NE(s["id"], id2) << "still listed after it was dismissed";
  }
  // Operations: listed, dismissed once finished, unknown afterwards.
  a = call("GET", "/v1/operations");
  EXPECT_EQ(a.status, 200);
  EXPECT_GE(a.doc["operations"].size(), 2u);
  a = call("DELETE", at_path("/v1/operations/{op}", "", op));
  EXPECT_EQ(a.status, 200) << a.body;
  a = call("GET", at_path("/v1/operations/{op}", "", op));
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(code_of(a), "operation_not_found");
}

TEST_F(ServeTest, CodeRoutesAnswerWithTheCodeInRefusals) {
  start();
  Answer a = call("POST", at_path("/v1/spaces/{id}/code/in", kId), R"({"repo":"/nonexistent/project"})");
  ASSERT_EQ(a.status, 202) << a.body;
  json d = finished(a.doc["operation"]);
  EXPECT_EQ(d["state"], "failed");
  EXPECT_EQ(d["failure"]["code"], "project_folder_missing") << d.dump();
  a = call("POST", at_path("/v1/spaces/{id}/code/in", kId), R"({"repo":"relative"})");
  EXPECT_EQ(a.status, 400);
  a = call("POST", at_path("/v1/spaces/{id}/code/history", kId));
  ASSERT_EQ(a.status, 202) << a.body;
  d = finished(a.doc["operation"]);
  EXPECT_EQ(d["failure"]["code"], "invalid_argument") << d.dump();  // no code in recorded
  a = call("POST", at_path("/v1/spaces/{id}/code/forget", kId));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.doc["refs_removed"], json::array());
  a = call("POST", "/v1/code/files", R"({"repo":"/nonexistent/project"})");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(code_of(a), "project_folder_missing");
  a = call("POST", at_path("/v1/spaces/{id}/escape-test", kId), R"({"only":["fs.*"],"exhaustion":false})");
  ASSERT_EQ(a.status, 202) << a.body;
  d = finished(a.doc["operation"]);
  EXPECT_NE(d["state"], "running");
  a = call("POST", at_path("/v1/spaces/{id}/escape-test", kId), R"({"only":"fs.*"})");
  EXPECT_EQ(a.status, 400);
}

TEST_F(ServeTest, SweepRunsThroughTheApi) {
  start();
  const Answer a = call("POST", "/v1/sweep", R"({"grace_seconds":0})");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(a.doc["removed"].is_array());
  EXPECT_TRUE(a.doc["temp_dirs_removed"].is_array());
}

// The router table, API.md and this file agree: every route is documented and called here.
std::vector<std::string> routes_in_table() {
  const std::string text = read_file(std::string(GK_SOURCE_DIR) + "/controller/serve/routes.cc");
  std::vector<std::string> out;
  const std::regex row("\\{\"(GET|POST|PUT|DELETE)\", \"(/v1/[^\"]*)\"\\}");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str() + " " + (*it)[2].str());
  }
  return out;
}

TEST(ServeApiDoc, EveryRouteOfTheTableIsDocumentedInApiMd) {
  const std::vector<std::string> routes = routes_in_table();
  ASSERT_GE(routes.size(), 20u);
  const std::string doc = read_file(std::string(GK_SOURCE_DIR) + "/controller/API.md");
  for (const std::string& r : routes) EXPECT_NE(doc.find("### `" + r + "`"), std::string::npos) << r << " is not in controller/API.md";
}

TEST(ServeApiDoc, EveryRouteOfTheTableIsCalledByATest) {
  const std::string tests =
      read_file(std::string(GK_SOURCE_DIR) + "/controller/serve/serve_test.cc") +
      read_file(std::string(GK_SOURCE_DIR) + "/controller/serve/serve_code_test.cc");
  for (const std::string& r : routes_in_table()) {
    const std::string method = r.substr(0, r.find(' ')), pattern = r.substr(r.find(' ') + 1);
    const bool templated = pattern.find('{') != std::string::npos;
    const std::string needle = templated ? "\"" + method + "\", at_path(\"" + pattern + "\"" : "\"" + method + "\", \"" + pattern + "\"";
    EXPECT_NE(tests.find(needle), std::string::npos) << r << " has no test calling it";
  }
}

}  // namespace
}  // namespace controller::serve
