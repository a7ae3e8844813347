// spacectl's grant commands, registered here so main.cc only wires them in:
//   grant add ID [GRANT] (--provider P | --upstream URL [--header NAME])
//             [--secret-stdin | --secret-env NAME | --secret-helper 'PROGRAM ARG…']
//             [--unsafe-private-upstream]
//   grant refresh ID [GRANT]
//   grant providers
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "controller/manager.h"

namespace controller::grants {

struct GrantCli {
  CLI::App* add = nullptr;
  CLI::App* refresh = nullptr;
  CLI::App* providers = nullptr;
  std::string space, grant, upstream, header, provider, env, helper;
  bool secret_stdin = false, unsafe_private_upstream = false;
};

void add_grant_cli(CLI::App& app, GrantCli& cli);

// The grant command that was parsed, if one of ours; nullopt otherwise.
std::optional<Result<nlohmann::json>> run_grant_cli(GrantCli& cli, Manager& manager);

// The flags as one request (no secret read yet): preset, source, and the usage rules.
Result<GrantRequest> request_from_flags(const GrantCli& cli);

}  // namespace controller::grants
