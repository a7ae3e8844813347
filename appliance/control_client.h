// `gatekeeper control METHOD PATH [--port N]`: the host's only way to the control channel (through
// the place's exec; the image has no curl). An optional JSON body is read from stdin (secrets
// travel on stdin only, never argv); the answer body is printed on stdout.
#pragma once

#include <string>
#include <vector>

namespace appliance {

// Exit codes: distinct for "the channel did not answer" and "it answered with an HTTP error".
inline constexpr int kControlOk = 0;               // 2xx
inline constexpr int kControlUsage = 2;            // bad arguments or stdin too large
inline constexpr int kControlUnreachable = 3;      // connect/send/receive failed, or no HTTP answer
inline constexpr int kControlHttpError = 4;        // the channel answered with a non-2xx status

// args: everything after "control".
int run_control_client(const std::vector<std::string>& args);

}  // namespace appliance
