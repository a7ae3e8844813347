// The window from the space's side: the base URL the runner passes (--window-base
// http://host[:port]/k/<key>), one request to it, the positive control (the runner's grant
// answers with the key) and the shared judgement of a refusal. Used by cases_corridor.cc and
// cases_window.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "escape-suite/case.h"
#include "escape-suite/net.h"

namespace escape {

struct WindowBase {
  std::string host;
  std::uint16_t port = 80;
  std::string prefix;  // "/k/<key>"
};

bool parse_window_base(const std::string& url, WindowBase& out);
// The address of the window named by the base URL (nullopt when it cannot be found).
std::optional<Addr> window_addr(Context& ctx, const WindowBase& base);
HttpReply window_send(Context& ctx, const WindowBase& base, const std::string& request);
HttpReply window_get(Context& ctx, const WindowBase& base, const std::string& path);
// The runner's upstream marks a 200 it gave to a request that carried the grant's key (its header
// and body both hold this word).
inline constexpr std::string_view kUpstreamKeySeen = "key-seen";
// With the right key, the grant the runner created answers 200 from the upstream that saw the key.
Control window_control(Context& ctx, const WindowBase& base);
bool window_control_answer_works(const HttpReply& reply);
// `path_of(base, grant)` builds the hostile target; the answer must be 403, 400 or 404, and the
// control must work in the same run (else INCONCLUSIVE).
Outcome window_refuses(Context& ctx, std::string (*path_of)(const WindowBase&, const std::string&));

}  // namespace escape
