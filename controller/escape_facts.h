// The host facts section of an escape report: what the run stood on and what the boundary still
// lets through. Read from the engine (`docker info`, `docker inspect`) and the host's own /proc;
// a value that cannot be read says so rather than disappearing.
#pragma once

#include <string>
#include <vector>

#include "controller/docker_cli.h"
#include "escape-suite/report.h"

namespace controller {

// `space` and `gatekeeper` are container names of the space under test.
std::vector<escape::Fact> collect_host_facts(const DockerCli& cli, const std::string& space,
                                             const std::string& gatekeeper);

// The residuals: what an allowed path can still do, by design or because a limit is missing.
std::vector<escape::Fact> residual_facts();

// "a|b|c" split on '|' into at most `n` fields (missing ones empty).
std::vector<std::string> split_fields(const std::string& text, std::size_t n);

}  // namespace controller
