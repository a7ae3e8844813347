// What the subnet allocation needs of the Docker place (controller/engine_networks.h): the IDs of
// every network the engine has, ours or anyone's, and the subnets of the ones spacectl has not
// read before, each in one engine call.
#include "controller/docker_place.h"
#include "controller/inspect_json.h"
#include "controller/podman_inspect.h"

namespace controller {

Result<std::vector<std::string>> DockerPlace::network_ids() {
  // `--format {{.ID}}`, not `--quiet`: Podman's `--quiet` prints network names, Docker's IDs.
  Result<std::string> ids =
      cli_.run({"network", "ls", "--no-trunc", "--format", "{{.ID}}"}, "(all networks)");
  if (!ids) {
    if (ids.error().code == Code::kCommandFailed) {
      return fail(Code::kPlaceUnreachable, ids.error().message);
    }
    return ids.error();
  }
  return parse_network_ids(*ids, cli_.program() + " network ls (all networks)");
}

Result<std::vector<NetworkSubnets>> DockerPlace::network_subnets(
    const std::vector<std::string>& ids) {
  std::vector<NetworkSubnets> out;
  if (ids.empty()) return out;
  const std::string what =
      cli_.program() + " network inspect (" + std::to_string(ids.size()) + " networks)";
  for (const std::string& id : ids) {
    // IDs only (never a name that reads as a flag), and no more than network_ids answers.
    if (!is_network_id(id)) return fail(Code::kInvalidArgument, what + ": not a network ID");
  }
  if (ids.size() > kMaxEngineNetworks) {
    return fail(Code::kInvalidArgument, what + ": more than " + std::to_string(kMaxEngineNetworks));
  }
  std::vector<std::string> args = {"network", "inspect", "--format",
                                   "{{.ID}} {{range .IPAM.Config}}{{.Subnet}} {{end}}", "--"};
  args.insert(args.end(), ids.begin(), ids.end());
  if (podman()) {
    // Podman's network has no .IPAM: its inspect is read whole, in Docker's shape
    // (podman_inspect.h), and held to the same rules as Docker's lines.
    args.erase(args.begin() + 2, args.begin() + 4);  // the --format and its template
    Result<nlohmann::json> doc = inspect(args, "(" + std::to_string(ids.size()) + " networks)");
    if (!doc) return doc.error();
    std::string lines;
    for (const nlohmann::json& n : *doc) {
      const nlohmann::json docker = podman_network_as_docker(n);
      const std::string id = inspect::str(inspect::member(docker, "Id"));
      if (!is_network_id(id)) return fail(Code::kCommandFailed, what + ": a network without an ID");
      lines += id;
      const nlohmann::json config = inspect::member(inspect::member(docker, "IPAM"), "Config");
      if (config.is_array()) {
        for (const nlohmann::json& c : config) {
          const std::string subnet = inspect::str(inspect::member(c, "Subnet"));
          if (subnet.empty()) continue;
          // One word each: a space or a line break would read as another subnet or network.
          if (!is_engine_subnet(subnet)) {
            return fail(Code::kCommandFailed, what + ": network " + id + ": not a subnet");
          }
          lines += " " + subnet;
        }
      }
      lines += "\n";
    }
    return parse_network_subnet_lines(lines, ids, what);
  }
  // A network removed since the listing makes inspect exit 1 while printing the others: what it
  // printed is every one of them that still exists.
  Result<ProcessOutcome> o =
      cli_.run_raw(args, "(" + std::to_string(ids.size()) + " networks)", kQueryTimeout);
  if (!o) return o.error();
  if (!o->succeeded() && !docker_no_such_object(o->err)) {
    return fail(Code::kCommandFailed, what + ": " + o->describe());
  }
  return parse_network_subnet_lines(o->out, ids, what);
}

}  // namespace controller
