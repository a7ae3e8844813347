// `gatekeeper serve`: binds corridor, window and control (control last), prints the ready line,
// runs the loop until SIGTERM/SIGINT, then stops accepting, closes every tunnel and exits 0 once
// no handle is left (uv_loop_close succeeds). Start-up problems: one line, exit 2.
#pragma once

#include <string>
#include <vector>

namespace appliance::serve {

// args: everything after "serve". Returns the process exit code.
int run_serve(const std::vector<std::string>& args);

}  // namespace appliance::serve
