#include "escape-suite/options.h"

#include <optional>

#include "policy/number.h"

namespace escape {
namespace {

using policy::Error;

bool parse_u64(std::string_view text, std::uint64_t& out) {
  const std::optional<std::uint64_t> n = policy::parse_number<std::uint64_t>(text);
  if (!n) return false;
  out = *n;
  return true;
}

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (const char c : s) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!hex) return false;
  }
  return true;
}

}  // namespace

std::string_view usage() {
  return "usage: escape-suite [--list] [--only GLOB[,GLOB]] [--format "
         "text|json|tap|junit|sarif|html]\n"
         "         [--output FILE] [--space-id ID] [--gatekeeper NAME_OR_ADDR]\n"
         "         [--corridor-port 3128] [--window-port 8080] [--control-port 9099]\n"
         "         [--window-base URL] [--window-grant ID] [--allowed-target HOST:443]\n"
         "         [--probe-address ADDR[:PORT]]... [--other-space ADDR[:PORT]]...\n"
         "         [--secret-sha256 HEX] [--control-sha256 HEX] [--resolver 127.0.0.11|none]\n"
         "         [--engine docker|podman]\n"
         "         [--pids-limit N] [--memory-limit BYTES] [--cpu-limit NANOCPUS] [--home-quota "
         "BYTES]\n"
         "         [--log-flood-mib 50] [--allow-exhaustion] [--seccomp-errno 95]\n"
         "         [--expect-uid 70000] [--timeout-ms 3000] [--unsafe-privileged]\n"
         "         [--gateway-unowned] [--progress]\n"
         "Runs attacks from inside a space; exit 0 only when every selected case is PASS or N/A.\n"
         "--allow-exhaustion enables the fork bomb, memory, disk and log cases: inside a space "
         "only.\n"
         "--unsafe-privileged runs even as root with capabilities (a deliberately weakened "
         "space):\n"
         "  the attempts then act on whatever this process can reach.\n"
         "--gateway-unowned: the runner proved no host address holds the inner gateway.\n"
         "--progress prints \"case <id> <VERDICT>\" on stderr as each case ends (the report stays "
         "on stdout).\n";
}

policy::Result<Options> parse_options(const std::vector<std::string_view>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view name = args[i];
    if (name == "--list") {
      o.list = true;
      continue;
    }
    if (name == "--unsafe-privileged") {
      o.unsafe_privileged = true;
      continue;
    }
    if (name == "--progress") {
      o.progress = true;
      continue;
    }
    if (name == "--allow-exhaustion") {
      o.allow_exhaustion = true;
      continue;
    }
    if (name == "--gateway-unowned") {
      o.gateway_unowned = true;
      continue;
    }
    if (i + 1 >= args.size()) return Error{"flag " + std::string(name) + ": missing value"};
    const std::string_view value = args[++i];
    const std::string bad = "flag " + std::string(name) + ": bad value '" +
                            std::string(value.substr(0, 80)) + "'";
    std::uint64_t n = 0;
    if (name == "--format") {
      if (value == "text") {
        o.format = Format::kText;
      } else if (value == "json") {
        o.format = Format::kJson;
      } else if (value == "tap") {
        o.format = Format::kTap;
      } else if (value == "junit") {
        o.format = Format::kJunit;
      } else if (value == "sarif") {
        o.format = Format::kSarif;
      } else if (value == "html") {
        o.format = Format::kHtml;
      } else {
        return Error{bad + " (text, json, tap or junit)"};
      }
    } else if (name == "--output") {
      o.output = std::string(value);
    } else if (name == "--only") {
      if (o.only.size() >= kMaxRepeatedFlag) return Error{bad + " (too many)"};
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t comma = value.find(',', start);
        const std::string_view part = value.substr(start, comma == std::string_view::npos
                                                              ? std::string_view::npos
                                                              : comma - start);
        if (!part.empty()) o.only.emplace_back(part);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    } else if (name == "--space-id") {
      // Becomes a path component: /spaces/<id>.
      if (value.empty() || value.find('/') != std::string_view::npos || value == "." ||
          value == "..") {
        return Error{bad};
      }
      o.space_id = std::string(value);
    } else if (name == "--gatekeeper") {
      o.gatekeeper = std::string(value);
    } else if (name == "--corridor-port" || name == "--window-port" || name == "--control-port") {
      if (!parse_u64(value, n) || n == 0 || n > 65535) return Error{bad};
      auto& port = name == "--corridor-port" ? o.corridor_port
                   : name == "--window-port" ? o.window_port
                                             : o.control_port;
      port = static_cast<std::uint16_t>(n);
    } else if (name == "--window-base") {
      if (value.substr(0, 7) != "http://") return Error{bad + " (http://HOST[:PORT]/PREFIX)"};
      o.window_base = std::string(value);
    } else if (name == "--window-grant") {
      if (value.empty() || value.size() > 64 || value.find('/') != std::string_view::npos) return Error{bad};
      o.window_grant = std::string(value);
    } else if (name == "--allowed-target") {
      if (value.find(':') == std::string_view::npos) return Error{bad + " (HOST:PORT)"};
      o.allowed_target = std::string(value);
    } else if (name == "--probe-address" || name == "--other-space") {
      auto& list = name == "--probe-address" ? o.probe_addresses : o.other_space_addresses;
      if (list.size() >= kMaxRepeatedFlag) return Error{bad + " (too many)"};
      list.emplace_back(value);
    } else if (name == "--secret-sha256" || name == "--control-sha256") {
      if (!is_hex64(value)) return Error{bad + " (64 lower-case hex digits)"};
      (name == "--secret-sha256" ? o.secret_sha256 : o.control_sha256) = std::string(value);
    } else if (name == "--resolver") {
      o.resolver = std::string(value);
    } else if (name == "--engine") {
      if (value == "docker") {
        o.engine = Engine::kDocker;
      } else if (value == "podman") {
        o.engine = Engine::kPodman;
      } else {
        return Error{bad + " (docker or podman)"};
      }
    } else if (name == "--cpu-limit") {
      if (!parse_u64(value, n) || n < 10000000 || n > 1024000000000ull) return Error{bad + " (nano CPUs)"};
      o.cpu_limit = n;
    } else if (name == "--pids-limit" || name == "--memory-limit" || name == "--home-quota" ||
               name == "--log-flood-mib") {
      if (!parse_u64(value, n) || n == 0) return Error{bad};
      if (name == "--pids-limit") {
        o.pids_limit = n;
      } else if (name == "--memory-limit") {
        o.memory_limit = n;
      } else if (name == "--home-quota") {
        o.home_quota = n;
      } else {
        o.log_flood_mib = n;
      }
    } else if (name == "--seccomp-errno") {
      if (!parse_u64(value, n) || n == 0 || n > 4095) return Error{bad};
      o.seccomp_errno = static_cast<int>(n);
    } else if (name == "--expect-uid") {
      if (!parse_u64(value, n) || n == 0 || n > 0xFFFFFFFEu) return Error{bad + " (not 0)"};
      o.expect_uid = static_cast<std::uint32_t>(n);
    } else if (name == "--timeout-ms") {
      if (!parse_u64(value, n) || n < 50 || n > 60000) return Error{bad + " (50..60000)"};
      o.timeout_ms = static_cast<int>(n);
    } else {
      return Error{"unknown flag " + std::string(name.substr(0, 80))};
    }
  }
  return o;
}

}  // namespace escape
