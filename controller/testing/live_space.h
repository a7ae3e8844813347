// What every live Docker test (LABEL docker) of the controller needs around its spaces: an owner
// made for the test (labels scope everything spacectl lists and removes, so nothing of another
// test or of the user is touched), a private state directory, spacectl run with this build's
// pinned images and seccomp profiles, and at the end the proof that nothing labelled with the
// owner is left (containers, networks, volumes). Beside it: the same settings as PlaceOptions
// for a place (or a manager) the test makes itself, `spacectl serve` in the background, and the
// leftover check alone for tests whose state lives elsewhere. Every child on the host is an argv;
// no shell. Header-only: each test target defines SPACECTL, GK_BINARY_DIR and GK_SOURCE_DIR.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "controller/ids.h"
#include "controller/place.h"
#include "controller/process.h"
#include "controller/testing/leftovers.h"
#include "tests/support/environment.h"

namespace controller::testing {

inline const std::string kLiveBin = std::string(GK_BINARY_DIR) + "/bin";
// The pins spacectl reads by default, and the TEST-ONLY gatekeeper's (198.18.0.0/15 counts as
// public there, so a test's own upstream on such a bridge can be reached).
inline constexpr const char* kReleasePin = "gatekeeper-image.id";
inline constexpr const char* kTestPin = "gatekeeper-test-image.id";

inline bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// `docker ARGS` on the host, two minutes at most.
inline ProcessOutcome docker(std::vector<std::string> args) {
  ProcessRequest r;
  r.argv = {"docker"};
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.timeout = std::chrono::minutes(2);
  return run_process(r);
}

// The pinned images come from `cmake --build <dir> --target images` (image/CMakeLists.txt):
// built here when a pin is missing.
inline bool ensure_images(const std::string& gatekeeper_pin) {
  const auto have = [&] {
    return readable(kLiveBin + "/" + gatekeeper_pin) && readable(kLiveBin + "/space-image.id");
  };
  if (have()) return true;
  ProcessRequest r;
  r.argv = {"cmake", "--build", GK_BINARY_DIR, "--target", "images"};
  r.timeout = std::chrono::minutes(15);
  (void)run_process(r);
  return have();
}

// A seccomp profile of this build (bin/seccomp/), else of the source tree; empty when neither.
inline std::string profile(const std::string& name) {
  for (const std::string& p :
       {kLiveBin + "/seccomp/" + name, std::string(GK_SOURCE_DIR) + "/seccomp-profiles/" + name}) {
    if (readable(p)) return p;
  }
  return {};
}

// A local Docker place of this build for `owner`: the pins in bin/ (`gatekeeper_pin` the
// gatekeeper's), the profiles, spacectl-bridge, and `subnet_pool` when not empty.
inline PlaceOptions live_place_options(const std::string& owner,
                                       const std::string& gatekeeper_pin = kReleasePin,
                                       const std::string& subnet_pool = {}) {
  PlaceOptions o;
  o.owner = owner;
  o.gatekeeper_image_file = kLiveBin + "/" + gatekeeper_pin;
  o.space_image_file = kLiveBin + "/space-image.id";
  o.seccomp_space = profile("space.json");
  o.seccomp_gatekeeper = profile("gatekeeper.json");
  o.bridge_binary = kLiveBin + "/spacectl-bridge";
  if (!subnet_pool.empty()) o.subnet_pool = subnet_pool;
  return o;
}

struct LiveSpaceOptions {
  std::string owner_prefix;                  // the owner is this and 12 random hex digits
  std::string gatekeeper_pin = kReleasePin;  // a file in bin/
  std::chrono::milliseconds timeout = std::chrono::minutes(5);  // each spacectl run
  std::size_t output_cap = 0;                                   // 0: run_process's default
  // SPACECTL_UNDER_TEST=<path>: the same tests against another spacectl build (the binary from
  // before a fix shows the fix is needed).
  bool binary_from_environment = false;
};

class LiveSpace {
 public:
  explicit LiveSpace(LiveSpaceOptions options)
      : options_(std::move(options)), owner_(options_.owner_prefix + random_hex(6)) {
    char tmpl[] = "/tmp/spacectl-live-XXXXXX";
    const char* made = mkdtemp(tmpl);
    EXPECT_NE(made, nullptr) << "mkdtemp";
    dir_ = made != nullptr ? made : "";
    state_ = dir_ + "/state";
    EXPECT_EQ(mkdir(state_.c_str(), 0700), 0) << "mkdir " << state_;
  }
  ~LiveSpace() {
    stop_serve();
    if (gk_test::docker_engine_answers()) expect_nothing_left(owner_);
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  LiveSpace(const LiveSpace&) = delete;
  LiveSpace& operator=(const LiveSpace&) = delete;

  // An engine that answers, the pinned images and both profiles: else the test skips (or fails
  // under CI=true through GK_REQUIRE).
  [[nodiscard]] bool ready() const {
    return gk_test::docker_engine_answers() && ensure_images(options_.gatekeeper_pin) &&
           !profile("space.json").empty() && !profile("gatekeeper.json").empty();
  }
  [[nodiscard]] std::string binary() const {
    const char* other =
        options_.binary_from_environment ? std::getenv("SPACECTL_UNDER_TEST") : nullptr;
    return other != nullptr && other[0] != '\0' ? std::string(other) : std::string(SPACECTL);
  }
  // spacectl's argv up to the command: the owner, the state directory, the pins and profiles.
  [[nodiscard]] std::vector<std::string> base(bool as_json = true) const {
    std::vector<std::string> argv = {binary(),
                                     "--owner",
                                     owner_,
                                     "--state-dir",
                                     state_,
                                     "--gatekeeper-image-file",
                                     kLiveBin + "/" + gatekeeper_pin_(),
                                     "--space-image-file",
                                     kLiveBin + "/space-image.id",
                                     "--seccomp-space",
                                     profile("space.json"),
                                     "--seccomp-gatekeeper",
                                     profile("gatekeeper.json")};
    if (!subnet_pool_.empty()) argv.insert(argv.end(), {"--subnet-pool", subnet_pool_});
    if (as_json) argv.push_back("--json");
    return argv;
  }
  [[nodiscard]] ProcessOutcome spacectl(const std::vector<std::string>& args,
                                        const std::string& stdin_bytes = {},
                                        bool as_json = true) const {
    ProcessRequest r;
    r.argv = base(as_json);
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    r.stdin_bytes = stdin_bytes;
    r.timeout = options_.timeout;
    if (options_.output_cap != 0) r.output_cap = options_.output_cap;
    return run_process(r);
  }
  // The same owner, pins, profiles and pool for a Place made in the test process (a place's own
  // operations, or the manager's over it), with this build's spacectl-bridge for `connect`.
  [[nodiscard]] PlaceOptions place_options() const {
    return live_place_options(owner_, gatekeeper_pin_(), subnet_pool_);
  }
  // A command in the space as its user, its own output (not JSON).
  [[nodiscard]] ProcessOutcome inside(const std::string& id, const std::vector<std::string>& argv,
                                      const std::string& stdin_bytes = {}) const {
    std::vector<std::string> args = {"space", "exec", id, "--"};
    args.insert(args.end(), argv.begin(), argv.end());
    return spacectl(args, stdin_bytes, false);
  }

  // `spacectl serve --no-sweep` (this fixture's argv) in the background on serve_socket(), its
  // output appended to <dir>/serve.err and `env` ("NAME=value") added to its environment. True
  // once the socket is there (10 s at most). stop_serve() ends it; the destructor does at the
  // latest, before it looks for leftovers.
  bool start_serve(const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = base(false);
    argv.insert(argv.end(), {"serve", "--no-sweep"});
    std::vector<std::string> environment = env;
    std::vector<char*> cargv, cenv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (std::string& e : environment) cenv.push_back(e.data());
    const std::string err_path = dir_ + "/serve.err";
    serve_pid_ = fork();
    if (serve_pid_ == 0) {
      const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (err >= 0) {
        dup2(err, 1);
        dup2(err, 2);
      }
      for (char* e : cenv) putenv(e);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    const std::string socket = serve_socket();
    for (int i = 0; i < 200 && serve_pid_ > 0 && !std::filesystem::exists(socket); ++i) {
      usleep(50000);
    }
    return serve_pid_ > 0 && std::filesystem::exists(socket);
  }
  void stop_serve() {
    if (serve_pid_ <= 0) return;
    kill(serve_pid_, SIGTERM);
    waitpid(serve_pid_, nullptr, 0);
    serve_pid_ = -1;
  }
  [[nodiscard]] std::string serve_socket() const { return state_ + "/serve.sock"; }

  [[nodiscard]] const std::string& owner() const { return owner_; }
  [[nodiscard]] const std::string& state() const { return state_; }
  // A private directory for the test's own files (the state directory is inside it).
  [[nodiscard]] const std::string& dir() const { return dir_; }
  // The gatekeeper pin of the next spacectl run (a test may point it at another file in bin/).
  void set_gatekeeper_pin(std::string pin) { pin_override_ = std::move(pin); }
  // spacectl --subnet-pool for every run (tests/support/docker_pools.h); unset: its default pool.
  void set_subnet_pool(std::string pool) { subnet_pool_ = std::move(pool); }

 private:
  [[nodiscard]] const std::string& gatekeeper_pin_() const {
    return pin_override_.empty() ? options_.gatekeeper_pin : pin_override_;
  }

  LiveSpaceOptions options_;
  std::string owner_, dir_, state_, pin_override_, subnet_pool_;
  pid_t serve_pid_ = -1;
};

}  // namespace controller::testing
