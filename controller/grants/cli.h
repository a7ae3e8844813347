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

// `grant providers`: the presets and the refused providers.
GrantProviders grant_providers();
// `grant add` from its flags (cli.add parsed): the secret from stdin, the host's environment or
// a helper, never argv.
Result<GrantAdded> run_grant_add(GrantCli& cli, Manager& manager);

// The flags as one request (no secret read yet): preset, source, and the usage rules.
Result<GrantRequest> request_from_flags(const GrantCli& cli);

}  // namespace controller::grants
