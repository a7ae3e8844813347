// DockerPlace::list: the spaces of this owner, found by label, in three engine calls whatever
// their number.
#include "controller/docker_place.h"
#include "controller/inspect_summary.h"

namespace controller {

using nlohmann::json;

Result<std::vector<SpaceSummary>> DockerPlace::list() {
  const std::vector<std::string> filter = {
      "--filter", "label=" + std::string(kLabelMarker) + "=true", "--filter",
      "label=" + std::string(kLabelOwner) + "=" + options_.owner};
  std::vector<std::string> ps = {"ps", "--all", "--no-trunc", "--format", "{{.ID}}"};
  ps.insert(ps.end(), filter.begin(), filter.end());
  Result<std::string> ids = cli_.run(ps, "(label filter)");
  if (!ids) {
    if (ids.error().code == Code::kCommandFailed) {
      return fail(Code::kPlaceUnreachable, ids.error().message);
    }
    return ids.error();
  }
  std::vector<std::string> nl = {"network", "ls", "--format", "{{.Name}}"};
  nl.insert(nl.end(), filter.begin(), filter.end());
  Result<std::string> networks = cli_.run(nl, "(label filter)");
  if (!networks) return networks.error();

  json containers = json::array();
  std::vector<std::string> container_ids = output_lines(*ids);
  if (!container_ids.empty() && podman()) {
    // Podman's answer is reshaped into Docker's (podman_inspect.h): the whole inspect is read.
    Result<json> doc = inspect_containers(container_ids, "(labelled containers)");
    if (!doc) return doc.error();
    containers = std::move(*doc);
  } else if (!container_ids.empty()) {
    // One call for every container, and only the members summarise_spaces reads: the whole
    // inspect of 400 containers is about 4 MiB, past the output cap, and slow to print and parse.
    std::vector<std::string> args = {
        "container", "inspect", "--format",
        "{\"Config\":{\"Labels\":{{json .Config.Labels}},\"Env\":{{json .Config.Env}}},"
        "\"State\":{{json .State}},\"Image\":{{json .Image}}}",
        "--"};
    args.insert(args.end(), container_ids.begin(), container_ids.end());
    Result<ProcessOutcome> o = cli_.run_raw(args, "(labelled containers)", kQueryTimeout);
    if (!o) return o.error();
    // A container removed between ps and inspect makes docker exit 1 while printing the others.
    if (!o->succeeded() && !docker_no_such_object(o->err)) {
      return fail(Code::kCommandFailed,
                  cli_.program() + " container inspect (labelled containers): " + o->describe());
    }
    for (const std::string& line : output_lines(o->out)) {
      json c = json::parse(line, nullptr, false);
      if (c.is_discarded()) {
        return fail(Code::kCommandFailed, cli_.program() +
                                              " container inspect (labelled containers): a line "
                                              "is not JSON");
      }
      // An engine that ignored --format answers one array: its members are the containers.
      // summarise_spaces skips what it cannot read.
      if (c.is_array()) {
        for (json& e : c) containers.push_back(std::move(e));
      } else {
        containers.push_back(std::move(c));
      }
    }
  }
  return summarise_spaces(containers, output_lines(*networks), options_.owner);
}

}  // namespace controller
