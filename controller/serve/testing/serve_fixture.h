// The fixture of serve's tests: the real spacectl runs `serve` against the recording fake
// `docker` (../../testing/fake_docker_fixture.h) on a unix socket in a fresh state directory.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/serve/testing/serve_client.h"
#include "controller/testing/fake_docker_fixture.h"

namespace controller::serve::testing {

using nlohmann::json;

inline constexpr const char* kId = "0123456789ab";  // the canned inspect answers' space

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string at_path(std::string pattern, const std::string& id, const std::string& op = {}) {
  if (auto at = pattern.find("{id}"); at != std::string::npos) pattern.replace(at, 4, id);
  if (auto at = pattern.find("{op}"); at != std::string::npos) pattern.replace(at, 4, op);
  return pattern;
}

class ServeTest : public FakeDockerTest {
 protected:
  void SetUp() override {
    FakeDockerTest::SetUp();
    socket_ = dir_ + "/state/serve.sock";
  }
  void TearDown() override {
    stop();
    FakeDockerTest::TearDown();
  }

  void start(std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {spacectl_path(),
                                     "--owner",
                                     "testowner",
                                     "--state-dir",
                                     dir_ + "/state",
                                     "--gatekeeper-image-file",
                                     dir_ + "/gk.id",
                                     "--space-image-file",
                                     dir_ + "/space.id",
                                     "--seccomp-space",
                                     std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
                                     "--seccomp-gatekeeper",
                                     std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
                                     "serve",
                                     "--no-sweep"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    stderr_path_ = dir_ + "/serve.err";
    unlink(stderr_path_.c_str());  // never read the last serve's "listening on"
    pid_ = fork();
    if (pid_ == 0) {
      const int err = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2(err, 2);
      for (const std::string& e : env) putenv(strdup(e.c_str()));
      std::vector<char*> a;
      for (std::string& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (read_file(stderr_path_).find("listening on") != std::string::npos) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = status;
        pid_ = -1;
        return;
      }
      usleep(50000);
    }
  }
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  Answer call(const std::string& method, const std::string& path, const std::string& body = {},
              const std::string& extra = {}) {
    const int fd = connect_unix(socket_);
    EXPECT_GE(fd, 0) << "connect " << socket_ << ": " << read_file(stderr_path_);
    if (fd < 0) return {};
    return http_exchange(fd, request_text(method, path, body, extra));
  }
  // Polls an operation until it is no longer running.
  json finished(const std::string& op) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    json d;
    while (std::chrono::steady_clock::now() < deadline) {
      d = call("GET", at_path("/v1/operations/{op}", "", op)).doc;
      if (d.is_object() && d.value("state", "") != "running") return d;
      usleep(100000);
    }
    return d;
  }
  static std::string code_of(const Answer& a) {
    return a.doc.is_object() && a.doc.contains("error") ? a.doc["error"].value("code", "") : "";
  }

  std::string socket_, stderr_path_;
  pid_t pid_ = -1;
  int exited_ = -1;
};

}  // namespace controller::serve::testing
