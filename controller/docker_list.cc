// DockerPlace::list: the spaces of this owner, found by label, in three engine calls whatever
// their number. The Docker CLI asks the engine once per container it inspects, while `ps` is one
// request for all of them: so `ps` carries everything list reads of a gatekeeper (its labels,
// state and image) and of a space but its environment (the window URL) and exit code, and only
// the space containers are inspected (N engine requests, not 2 × N).
#include <future>

#include "controller/docker_place.h"
#include "controller/inspect_json.h"
#include "controller/inspect_summary.h"

namespace controller {

using inspect::member;
using inspect::str;
using nlohmann::json;

namespace {

// The labels summarise_spaces reads, each printed by ps as a JSON string ("" when absent).
constexpr std::string_view kPsLabels[] = {kLabelMarker,
                                          kLabelId,
                                          kLabelRole,
                                          kLabelOwner,
                                          kLabelName,
                                          kLabelCreated,
                                          "org.opencontainers.image.version",
                                          "org.opencontainers.image.revision"};

std::string ps_format() {
  std::string f =
      R"({"ID":{{json .ID}},"State":{{json .State}},"Image":{{json .Image}},"Labels":{)";
  bool first = true;
  for (const std::string_view key : kPsLabels) {
    f += (first ? "\"" : ",\"") + std::string(key) + "\":{{json (.Label \"" + std::string(key) +
         "\")}}";
    first = false;
  }
  return f + "}}";
}

// One ps line in the shape of an inspect answer (Config.Labels, State.Status, Image), the labels
// that are empty left out (ps prints an absent label as ""); nullopt: not an object of strings.
std::optional<json> ps_container(const std::string& line) {
  const json p = json::parse(line, nullptr, false);
  if (!p.is_object()) return std::nullopt;
  const json& labels = member(p, "Labels");
  if (!labels.is_object()) return std::nullopt;
  json c = {{"Id", str(member(p, "ID"))},
            {"Config", {{"Labels", json::object()}}},
            {"State", {{"Status", str(member(p, "State"))}}},
            {"Image", str(member(p, "Image"))}};
  for (const std::string_view key : kPsLabels) {
    const std::string v = str(member(labels, key));
    if (!v.empty()) c["Config"]["Labels"][std::string(key)] = v;
  }
  return c;
}

}  // namespace

Result<std::vector<SpaceSummary>> DockerPlace::list() {
  const std::vector<std::string> filter = {
      "--filter", "label=" + std::string(kLabelMarker) + "=true", "--filter",
      "label=" + std::string(kLabelOwner) + "=" + options_.owner};
  // The networks are listed while ps and the inspect run.
  std::vector<std::string> nl = {"network", "ls", "--format", "{{.Name}}"};
  nl.insert(nl.end(), filter.begin(), filter.end());
  std::future<Result<std::string>> networks_read =
      std::async(std::launch::async, [this, &nl] { return cli_.run(nl, "(label filter)"); });
  std::vector<std::string> ps = {"ps", "--all", "--no-trunc", "--format",
                                 podman() ? std::string("{{.ID}}") : ps_format()};
  ps.insert(ps.end(), filter.begin(), filter.end());
  Result<std::string> listed = cli_.run(ps, "(label filter)");
  Result<std::string> networks = networks_read.get();
  if (!listed) {
    if (listed.error().code == Code::kCommandFailed) {
      return fail(Code::kPlaceUnreachable, listed.error().message);
    }
    return listed.error();
  }
  if (!networks) return networks.error();

  json containers = json::array();
  std::vector<std::string>
      container_ids;  // to inspect: every container on Podman, the spaces on Docker
  if (podman()) {
    container_ids = output_lines(*listed);
  } else {
    for (const std::string& line : output_lines(*listed)) {
      std::optional<json> c = ps_container(line);
      if (!c) {
        return fail(Code::kCommandFailed,
                    cli_.program() + " ps (label filter): a line is not a container's summary");
      }
      const std::string id = str((*c)["Id"]);
      if (str(member((*c)["Config"]["Labels"], kLabelRole)) == role_word(Role::kSpace)) {
        if (!id.empty()) container_ids.push_back(id);
      } else {
        containers.push_back(std::move(*c));
      }
    }
  }
  if (!container_ids.empty() && podman()) {
    // Podman's answer is reshaped into Docker's (podman_inspect.h): the whole inspect is read.
    Result<json> doc = inspect_containers(container_ids, "(labelled containers)");
    if (!doc) return doc.error();
    containers = std::move(*doc);
  } else if (!container_ids.empty()) {
    // One call for every space container, and only the members summarise_spaces reads: the whole
    // inspect of 400 containers is about 4 MiB, past the output cap, and slow to print and parse.
    std::vector<std::string> args = {
        "container", "inspect", "--format",
        "{\"Config\":{\"Labels\":{{json .Config.Labels}},\"Env\":{{json .Config.Env}}},"
        "\"State\":{{json .State}},\"Image\":{{json .Image}}}",
        "--"};
    args.insert(args.end(), container_ids.begin(), container_ids.end());
    Result<ProcessOutcome> o = cli_.run_raw(args, "(labelled space containers)", kQueryTimeout);
    if (!o) return o.error();
    // A container removed between ps and inspect makes docker exit 1 while printing the others.
    if (!o->succeeded() && !docker_no_such_object(o->err)) {
      return fail(
          Code::kCommandFailed,
          cli_.program() + " container inspect (labelled space containers): " + o->describe());
    }
    for (const std::string& line : output_lines(o->out)) {
      json c = json::parse(line, nullptr, false);
      if (c.is_discarded()) {
        return fail(Code::kCommandFailed, cli_.program() +
                                              " container inspect (labelled space containers): a "
                                              "line is not JSON");
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
