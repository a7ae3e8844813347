// What sweep needs of the Docker place: every id this owner's containers, networks and volumes
// carry, with the oldest creation time among them (controller/sweep.h).
#include <map>
#include <sstream>

#include "controller/docker_place.h"
#include "controller/sweep.h"

namespace controller {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

}  // namespace

Result<std::vector<LabelledId>> DockerPlace::labelled_ids() {
  const std::string owner = "label=" + std::string(kLabelOwner) + "=" + options_.owner;
  const std::string marker = "label=" + std::string(kLabelMarker) + "=true";
  const std::string id_label = "{{.Label \"" + std::string(kLabelId) + "\"}}";
  const std::string created_label = "{{.Label \"" + std::string(kLabelCreated) + "\"}}";
  // Containers and networks have Docker's own creation time; volumes only their label's.
  const std::vector<std::vector<std::string>> queries = {
      {"ps", "--all", "--no-trunc", "--filter", marker, "--filter", owner, "--format", id_label + "|" + created_label + "|{{.CreatedAt}}"},
      {"network", "ls", "--no-trunc", "--filter", marker, "--filter", owner, "--format", id_label + "|" + created_label + "|{{.CreatedAt}}"},
      {"volume", "ls", "--filter", marker, "--filter", owner, "--format", id_label + "|" + created_label + "|"}};
  std::map<std::string, std::int64_t> oldest;
  for (const std::vector<std::string>& q : queries) {
    Result<std::string> out = cli_.run(q, "(label filter)");
    if (!out) {
      if (out.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, out.error().message);
      return out.error();
    }
    for (const std::string& line : split_lines(*out)) {
      const std::size_t a = line.find('|'), b = a == std::string::npos ? a : line.find('|', a + 1);
      if (b == std::string::npos) continue;
      const std::string id = line.substr(0, a);
      if (!is_space_id(id)) continue;  // not a space's (nor a probe's) object: never ours to judge
      std::int64_t t = parse_utc_time(line.substr(b + 1));
      if (t == 0) t = parse_utc_time(line.substr(a + 1, b - a - 1));
      auto [it, fresh] = oldest.emplace(id, t);
      if (!fresh && t != 0 && (it->second == 0 || t < it->second)) it->second = t;
    }
  }
  std::vector<LabelledId> out;
  for (const auto& [id, t] : oldest) out.push_back({id, t});
  return out;
}

}  // namespace controller
