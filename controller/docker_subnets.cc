// What the subnet allocation needs of the Docker place (controller/subnets.h): the subnets of every
// network the engine has, ours or anyone's, so an allocation never overlaps one.
#include <sstream>

#include "controller/docker_place.h"
#include "controller/inspect_json.h"
#include "controller/podman_inspect.h"

namespace controller {

Result<std::vector<std::string>> DockerPlace::used_subnets() {
  Result<std::string> ids = cli_.run({"network", "ls", "--quiet", "--no-trunc"}, "(all networks)");
  if (!ids) {
    if (ids.error().code == Code::kCommandFailed) {
      return fail(Code::kPlaceUnreachable, ids.error().message);
    }
    return ids.error();
  }
  std::vector<std::string> args = {"network", "inspect", "--format",
                                   "{{range .IPAM.Config}}{{.Subnet}} {{end}}", "--"};
  std::istringstream in(*ids);
  std::size_t count = 0;
  for (std::string id; std::getline(in, id);) {
    if (!id.empty()) args.push_back(id), ++count;
  }
  std::vector<std::string> out;
  if (count == 0) return out;
  if (podman()) {
    // Podman's network has no .IPAM: its inspect is read whole, in Docker's shape
    // (podman_inspect.h); a network removed meanwhile is left out of the answer.
    args.erase(args.begin() + 2, args.begin() + 4);  // the --format and its template
    Result<nlohmann::json> doc = inspect(args, "(all networks)");
    if (!doc) return doc.error();
    for (const nlohmann::json& n : *doc) {
      const nlohmann::json config = inspect::member(
          inspect::member(podman_network_as_docker(n), "IPAM"), "Config");
      if (!config.is_array()) continue;
      for (const nlohmann::json& c : config) {
        const std::string subnet = inspect::str(inspect::member(c, "Subnet"));
        if (!subnet.empty()) out.push_back(subnet);
      }
    }
    return out;
  }
  // A network removed between the two calls makes inspect exit 1 while printing the others: what
  // it printed is still every subnet that exists.
  Result<ProcessOutcome> o = cli_.run_raw(args, "(all networks)", kQueryTimeout);
  if (!o) return o.error();
  if (!o->succeeded() && o->err.find("No such network") == std::string::npos &&
      o->err.find("not found") == std::string::npos) {
    return fail(Code::kCommandFailed, cli_.program() + " network inspect (all networks): " + o->describe());
  }
  std::istringstream words(o->out);
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

}  // namespace controller
