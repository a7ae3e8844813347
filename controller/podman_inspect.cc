#include "controller/podman_inspect.h"

#include <set>
#include <sstream>
#include <vector>

#include "controller/inspect_json.h"
#include "controller/spec.h"

namespace controller {

using inspect::empty_or_null;
using inspect::member;
using inspect::str;
using nlohmann::json;

namespace {

bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// "RLIMIT_CORE" -> "core".
std::string ulimit_name(const std::string& podman) {
  std::string name = podman.rfind("RLIMIT_", 0) == 0 ? podman.substr(7) : podman;
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return name;
}

// Podman appends rprivate, nodev and tmpcopyup to a tmpfs's options: propagation private, no
// device nodes (stricter), and the image's files at that path copied in. None widens it.
std::string tmpfs_options(const std::string& options) {
  static const std::set<std::string> kAdded = {"rprivate", "nodev", "tmpcopyup"};
  std::string out;
  std::istringstream in(options);
  for (std::string word; std::getline(in, word, ',');) {
    if (kAdded.count(word) > 0) continue;
    out += (out.empty() ? "" : ",") + word;
  }
  return out;
}

}  // namespace

json podman_container_as_docker(const json& podman, const PodmanInspectContext& context) {
  if (!podman.is_object() || !member(podman, "HostConfig").is_object() ||
      !member(podman, "Config").is_object())
    return podman;
  json d = podman;
  json& host = d["HostConfig"];
  json& config = d["Config"];
  // Image: Podman prints the bare hex of the same sha256 ID.
  if (is_hex64(str(member(podman, "Image")))) d["Image"] = "sha256:" + str(member(podman, "Image"));
  // Runtime: Podman says "oci" here and names the runtime in OCIRuntime.
  host["Runtime"] = str(member(podman, "OCIRuntime"));
  // Capabilities: Podman lists the capabilities it dropped from its own default set rather than
  // ALL; what the process holds is EffectiveCaps and BoundingCaps. Only both empty is "all
  // dropped".
  if (empty_or_null(member(podman, "EffectiveCaps")) &&
      empty_or_null(member(podman, "BoundingCaps")))
    host["CapDrop"] = json::array({"ALL"});
  else
    host["CapDrop"] = json::array();
  // Mounts: Docker's HostConfig.Mounts (Source = volume name) from Podman's Mounts; the Binds
  // Podman derives from its volumes are those same volumes, not host paths, and are dropped (a
  // real bind mount stays in Mounts with Type "bind" and fails verify there).
  std::set<std::string> volume_names;
  json mounts = json::array();
  if (member(podman, "Mounts").is_array()) {
    for (const json& m : podman["Mounts"]) {
      const std::string type = str(member(m, "Type"));
      if (type == "volume") volume_names.insert(str(member(m, "Name")));
      mounts.push_back(
          {{"Type", type},
           {"Source", type == "volume" ? str(member(m, "Name")) : str(member(m, "Source"))},
           {"Target", str(member(m, "Destination"))}});
    }
  }
  host["Mounts"] = mounts;
  json binds = json::array();
  if (member(host, "Binds").is_array())
    for (const json& b : host["Binds"])
      if (volume_names.count(str(b).substr(0, str(b).find(':'))) == 0) binds.push_back(b);
  host["Binds"] = binds;
  // Network mode: "bridge" for any netavark network; Docker names the first one.
  if (str(member(host, "NetworkMode")) == "bridge") host["NetworkMode"] = context.primary_network;
  // Namespaces: Podman's own words for "its own". Its private IPC namespace is "shareable" by
  // default (another container could join it only by asking for this container by name, which only
  // the controller does).
  const std::string ipc = str(member(host, "IpcMode"));
  if (ipc == "private" || ipc == "shareable") host["IpcMode"] = "private";
  host["CgroupnsMode"] = str(member(host, "CgroupMode"));
  for (const char* ns : {"PidMode", "UTSMode"})
    if (str(member(host, ns)) == "private") host[ns] = "";
  // Seccomp: by path; the place's own profile files become their text.
  bool unmasked = false;
  if (member(host, "SecurityOpt").is_array()) {
    json opts = json::array();
    for (const json& o : host["SecurityOpt"]) {
      const std::string s = str(o);
      if (s.rfind("unmask=", 0) == 0) unmasked = true;
      if (s.rfind("seccomp=", 0) == 0) {
        auto it = context.seccomp_profiles.find(s.substr(8));
        opts.push_back(it != context.seccomp_profiles.end() ? "seccomp=" + it->second : s);
      } else {
        opts.push_back(s);
      }
    }
    host["SecurityOpt"] = opts;
  }
  // Masked paths: Podman masks /proc/kcore and the rest unless told `unmask=` (which stays in
  // SecurityOpt and fails verify as an unexpected option) or run privileged.
  if (!unmasked && !(member(host, "Privileged").is_boolean() && host["Privileged"].get<bool>())) {
    if (empty_or_null(member(host, "MaskedPaths")))
      host["MaskedPaths"] = json::array({"(podman default)"});
    if (empty_or_null(member(host, "ReadonlyPaths")))
      host["ReadonlyPaths"] = json::array({"(podman default)"});
  }
  if (member(host, "Tmpfs").is_object())
    for (auto it = host["Tmpfs"].begin(); it != host["Tmpfs"].end(); ++it)
      *it = tmpfs_options(str(*it));
  // Logs: k8s-file capped at 10 MB is the same cap as Docker's local driver with one 10m file.
  if (str(member(member(host, "LogConfig"), "Type")) == kPodmanLogDriver &&
      str(member(member(host, "LogConfig"), "Size")) == kPodmanLogSize)
    host["LogConfig"] = {
        {"Type", "local"},
        {"Config", {{"max-size", "10m"}, {"max-file", "1"}, {"compress", "false"}}}};
  if (member(host, "Ulimits").is_array())
    for (json& u : host["Ulimits"])
      if (u.is_object()) u["Name"] = ulimit_name(str(member(u, "Name")));
  // Entrypoint: a string in Podman 4.3.
  if (member(config, "Entrypoint").is_string()) {
    const std::string e = str(config["Entrypoint"]);
    config["Entrypoint"] = e.empty() ? json::array() : json::array({e});
  }
  // NetworkID: Podman 4.3 gives the network's name here, which proves no ID.
  if (member(member(d, "NetworkSettings"), "Networks").is_object())
    for (auto it = d["NetworkSettings"]["Networks"].begin();
         it != d["NetworkSettings"]["Networks"].end(); ++it)
      if (str(member(*it, "NetworkID")) == it.key()) (*it)["NetworkID"] = "";
  return d;
}

json podman_network_as_docker(const json& podman) {
  if (!podman.is_object()) return podman;
  json options = member(podman, "options").is_object() ? podman["options"] : json::object();
  options["com.docker.network.bridge.name"] = str(member(podman, "network_interface"));
  options["podman.dns_enabled"] =
      member(podman, "dns_enabled").is_boolean() && podman["dns_enabled"].get<bool>() ? "true"
                                                                                      : "false";
  json config = json::array();
  if (member(podman, "subnets").is_array())
    for (const json& s : podman["subnets"])
      config.push_back(
          {{"Subnet", str(member(s, "subnet"))}, {"Gateway", str(member(s, "gateway"))}});
  return {{"Name", str(member(podman, "name"))},
          {"Id", str(member(podman, "id"))},
          {"Driver", str(member(podman, "driver"))},
          {"Internal", member(podman, "internal").is_boolean() && podman["internal"].get<bool>()},
          {"EnableIPv6",
           member(podman, "ipv6_enabled").is_boolean() && podman["ipv6_enabled"].get<bool>()},
          {"Labels", member(podman, "labels").is_object() ? podman["labels"] : json::object()},
          {"Options", options},
          {"IPAM", {{"Config", config}}},
          {"Containers", json::object()}};
}

}  // namespace controller
