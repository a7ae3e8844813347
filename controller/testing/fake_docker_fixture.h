// The fake-docker fixture: runs the real spacectl with testing/fake_docker.cc first in PATH as
// `docker` and reads back every call it made (argv and stdin).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/process.h"

namespace controller {

// Runs the real spacectl with the fake docker first in PATH; returns every recorded call.
struct Call {
  std::vector<std::string> argv;
  std::string stdin_bytes;
};

// SPACECTL_UNDER_TEST=<path> runs these tests against another spacectl build (how a fix is
// shown to be needed: the same tests against the binary from before it).
inline std::string spacectl_path() {
  const char* other = std::getenv("SPACECTL_UNDER_TEST");
  return other != nullptr && other[0] != '\0' ? other : SPACECTL;
}

class FakeDockerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-fake-XXXXXX";
    dir_ = mkdtemp(tmpl);
    ASSERT_EQ(symlink(FAKE_DOCKER, (dir_ + "/docker").c_str()), 0) << "symlink " << dir_ << "/docker";
    setenv("PATH", (dir_ + ":" + std::getenv("PATH")).c_str(), 1);
    setenv("FAKE_DOCKER_LOG", (dir_ + "/log").c_str(), 1);
    setenv("FAKE_DOCKER_ANSWERS", CONTROLLER_TESTDATA, 1);
    std::ofstream(dir_ + "/gk.id") << "sha256:" << std::string(64, 'b') << "\n";
    std::ofstream(dir_ + "/space.id") << "sha256:" << std::string(64, 'a') << "\n";
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // env_prefix: e.g. {"env", "-u", "HOME"} or {"env", "FAKE_DOCKER_EXEC_EXIT=7"} before spacectl.
  ProcessOutcome spacectl(std::vector<std::string> args, std::string stdin_bytes = {},
                          std::vector<std::string> env_prefix = {}) {
    ProcessRequest r;
    r.argv = env_prefix;
    const std::vector<std::string> base = {spacectl_path(), "--json", "--owner", "testowner", "--state-dir", dir_ + "/state",
              "--gatekeeper-image-file", dir_ + "/gk.id", "--space-image-file", dir_ + "/space.id",
              "--seccomp-space", std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
              "--seccomp-gatekeeper", std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
              "--disk-dir", dir_ + "/disks"};
    r.argv.insert(r.argv.end(), base.begin(), base.end());
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    r.stdin_bytes = std::move(stdin_bytes);
    r.timeout = std::chrono::milliseconds(20000);
    return run_process(r);
  }

  std::vector<Call> calls() {
    std::ifstream in(dir_ + "/log", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<Call> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t rs = text.find('\x1e', pos), gs = text.find('\x1d', rs);
      if (rs == std::string::npos || gs == std::string::npos) break;
      Call c;
      std::string args = text.substr(pos, rs - pos);
      for (std::size_t s = 0;;) {
        const std::size_t us = args.find('\x1f', s);
        c.argv.push_back(args.substr(s, us - s));
        if (us == std::string::npos) break;
        s = us + 1;
      }
      c.stdin_bytes = text.substr(rs + 1, gs - rs - 1);
      out.push_back(c);
      pos = gs + 2;
    }
    return out;
  }

  std::string dir_;
};

}  // namespace controller
