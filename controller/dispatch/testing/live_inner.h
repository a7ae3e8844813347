// Test-only, for the dispatcher's Docker tests: this build's dispatch-inner-server
// (inner_server.cc) written into a live space by the space user and started there in the
// background, and the wait for its first line. Header-only, next to controller/testing/live_space.h
// (which names bin/).
#pragma once

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "controller/docker_place.h"
#include "controller/place.h"
#include "controller/testing/live_space.h"

namespace controller::dispatch::testing {

// This build's spacectl-bridge (the place's connect) and dispatch-inner-server are there.
inline bool inner_programs_built() {
  return controller::testing::readable(controller::testing::kLiveBin + "/spacectl-bridge") &&
         controller::testing::readable(controller::testing::kLiveBin + "/dispatch-inner-server");
}

// `args` is the server's command line after its name ("raw <port>", "http <port> <token file>").
// Success once its "listening" line is in /tmp/inner.log; it waits on that line up to 20 s, since
// a neighbouring test may hold the other core.
inline ::testing::AssertionResult start_inner_server(Place& place, const std::string& id,
                                                     const std::string& args) {
  const std::string program = controller::testing::kLiveBin + "/dispatch-inner-server";
  Result<std::string> server = read_small_file(program, 16u << 20);
  if (!server) return ::testing::AssertionFailure() << server.error().message;
  Result<ExecOutput> w =
      place.exec(id, ExecTarget::kSpace, {"sh", "-c", "cat > /tmp/inner && chmod 755 /tmp/inner"},
                 *server, std::chrono::seconds(60));
  if (!w) return ::testing::AssertionFailure() << "write /tmp/inner: " << w.error().message;
  if (w->exit_code != 0) {
    return ::testing::AssertionFailure()
           << "write /tmp/inner: exit " << w->exit_code << ": " << w->err;
  }
  Result<ExecOutput> run =
      place.exec(id, ExecTarget::kSpace,
                 {"sh", "-c",
                  "(/tmp/inner " + args +
                      " >/tmp/inner.log 2>&1 &) && i=0; while [ $i -lt 100 ]; do grep -q listening "
                      "/tmp/inner.log && exit 0; sleep 0.2; i=$((i+1)); done; exit 1"},
                 {}, std::chrono::seconds(30));
  if (!run)
    return ::testing::AssertionFailure() << "/tmp/inner " << args << ": " << run.error().message;
  if (run->exit_code != 0) {
    return ::testing::AssertionFailure() << "/tmp/inner " << args << ": no listening line in 20 s"
                                         << " (exit " << run->exit_code << "): " << run->err;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace controller::dispatch::testing
