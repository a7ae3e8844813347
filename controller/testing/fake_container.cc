// A stand-in for Apple's `container` CLI, for the Apple container place's tests. State lives in
// $FAKE_CONTAINER_STATE/state.json; answers come from the recorded shapes in
// $FAKE_CONTAINER_ANSWERS (controller/testdata/apple/README.md says where each comes from).
//
// Every argv is checked against the shapes the place may send; any other exits 90 and is appended
// to $FAKE_CONTAINER_REFUSED, which the tests require to stay empty. `create` and `run` interpret
// exactly the place's flags into the configuration `container inspect` prints.
// Modes: FAKE_CONTAINER_FORWARDING=1 (the Mac forwards: a host-only network reaches out);
// FAKE_CONTAINER_DOWN=1 (the API server is not running).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/testing/fake_cli.h"
#include "policy/number.h"

namespace {

using nlohmann::json;

using controller::testing::fake_env;
using controller::testing::slurp;

const controller::testing::FakeCli kFake{"FAKE_CONTAINER", "fake container"};

std::string env(const char* name) { return fake_env(name); }
json answer(const std::string& name) { return kFake.answer(name); }

std::string message(const std::string& key, const std::string& arg = {}) {
  std::string m = answer("messages.json").value(key, std::string());
  if (const std::size_t at = m.find("%s"); at != std::string::npos) m.replace(at, 2, arg);
  return m;
}

int refuse(const std::vector<std::string>& argv, const std::string& why) {
  return kFake.refuse(argv, why);
}

struct State {
  json doc;
  std::string path = kFake.state_file();
  State()
      : doc(kFake.load_state(json{{"containers", json::array()},
                                  {"networks", json::array()},
                                  {"volumes", json::array()},
                                  {"next_net", 64},
                                  {"next_ip", 2}})) {}
  void save() const { std::ofstream(path) << doc.dump(1); }
  json* find(const std::string& kind, const std::string& name) {
    for (json& o : doc[kind]) {
      if ((kind == "volumes" ? o["name"] : o["id"]) == name) return &o;
    }
    return nullptr;
  }
  void erase(const std::string& kind, const std::string& name) {
    json kept = json::array();
    for (json& o : doc[kind]) {
      if ((kind == "volumes" ? o["name"] : o["id"]) != name) kept.push_back(o);
    }
    doc[kind] = kept;
  }
};

bool label(const std::string& v, json& labels) {
  const std::size_t eq = v.find('=');
  if (eq == std::string::npos) return false;
  labels[v.substr(0, eq)] = v.substr(eq + 1);
  return true;
}

// container create / run: the flags the place uses, into ContainerConfiguration.
int make_container(State& st, const std::vector<std::string>& a, std::size_t i, bool run) {
  json c = answer("container-inspect.json");
  json& conf = c["configuration"];
  bool detach = false, remove = false;
  for (; i < a.size() && a[i].rfind("--", 0) == 0; ++i) {
    const std::string f = a[i];
    const bool has_value = i + 1 < a.size();
    if (f == "--read-only") {
      conf["readOnly"] = true;
    } else if (f == "--init") {
      conf["useInit"] = true;
    } else if (f == "--no-dns") {
      conf["dns"] = nullptr;
    } else if (f == "--rm" && run) {
      remove = true;
    } else if (f == "--detach" && run) {
      detach = true;
    } else if (!has_value) {
      return refuse(a, "flag without value: " + f);
    } else {
      const std::string v = a[++i];
      if (f == "--name") {
        c["id"] = conf["id"] = v;
      } else if (f == "--user") {
        const std::size_t colon = v.find(':');
        if (colon == std::string::npos) return refuse(a, "--user without gid");
        const std::optional<std::uint32_t> uid =
            policy::parse_number<std::uint32_t>(v.substr(0, colon));
        const std::optional<std::uint32_t> gid =
            policy::parse_number<std::uint32_t>(v.substr(colon + 1));
        if (!uid || !gid) return refuse(a, "--user '" + v + "' is not uid:gid");
        conf["initProcess"]["user"] = {{"id", {{"uid", *uid}, {"gid", *gid}}}};
      } else if (f == "--cap-drop") {
        conf["capDrop"].push_back(v);
      } else if (f == "--cap-add") {
        conf["capAdd"].push_back(v);
      } else if (f == "--ulimit") {
        if (v != "core=0:0") return refuse(a, "an --ulimit the place never sets");
        conf["initProcess"]["rlimits"].push_back(
            {{"limit", "RLIMIT_CORE"}, {"soft", 0}, {"hard", 0}});
      } else if (f == "--memory") {
        const std::optional<std::int64_t> mib =
            v.empty() || v.back() != 'M'
                ? std::nullopt
                : policy::parse_number<std::int64_t>(v.substr(0, v.size() - 1));
        if (!mib || *mib < 1 || *mib > (std::int64_t{1} << 40)) {
          return refuse(a, "--memory '" + v + "' is not <MiB>M");
        }
        conf["resources"]["memoryInBytes"] = *mib << 20;
      } else if (f == "--cpus") {
        const std::optional<std::int64_t> cpus = policy::parse_number<std::int64_t>(v);
        if (!cpus || *cpus < 1) return refuse(a, "--cpus '" + v + "' is not a whole CPU count");
        conf["resources"]["cpus"] = *cpus;
      } else if (f == "--network") {
        if (v != "none" && st.find("networks", v) == nullptr) {
          std::cerr << message("network_not_found", v);
          return 1;
        }
        if (v != "none") {
          conf["networks"].push_back({{"network", v}, {"options", {{"hostname", c["id"]}}}});
        }
      } else if (f == "--tmpfs") {
        conf["mounts"].push_back({{"type", {{"tmpfs", json::object()}}},
                                  {"source", ""},
                                  {"destination", v},
                                  {"options", json::array()}});
      } else if (f == "--mount") {
        // type=volume,source=NAME,target=PATH
        const std::string src =
            v.substr(v.find("source=") + 7, v.find(",target=") - v.find("source=") - 7);
        const std::string dst = v.substr(v.find(",target=") + 8);
        if (v.rfind("type=volume,source=", 0) != 0 || st.find("volumes", src) == nullptr) {
          return refuse(a, "a mount that is not one of our volumes");
        }
        conf["mounts"].push_back({{"type",
                                   {{"volume",
                                     {{"name", src},
                                      {"format", "ext4"},
                                      {"cache", {{"auto", json::object()}}},
                                      {"sync", {{"full", json::object()}}}}}}},
                                  {"source", src},
                                  {"destination", dst},
                                  {"options", json::array()}});
      } else if (f == "--env") {
        conf["initProcess"]["environment"].push_back(v);
      } else if (f == "--label") {
        if (!label(v, conf["labels"])) return refuse(a, "--label without =");
      } else {
        return refuse(a, "a flag the place never passes: " + f);
      }
    }
  }
  if (i >= a.size() || c["id"] == "NAME") return refuse(a, "no --name or no image");
  if (st.find("containers", c["id"]) != nullptr) {
    std::cerr << "Error: container with id " << c["id"].get<std::string>() << " already exists\n";
    return 1;
  }
  conf["image"]["reference"] = a[i++];
  conf["initProcess"]["executable"] = i < a.size() ? a[i] : "/gatekeeper";
  conf["initProcess"]["arguments"] =
      std::vector<std::string>(a.begin() + static_cast<long>(i), a.end());
  if (run && remove) return 0;  // the setup one-shot: ran and removed itself
  st.doc["containers"].push_back(c);
  if (run && detach) {
    json* made = st.find("containers", c["id"]);
    (*made)["status"]["state"] = "running";
    for (const json& n : (*made)["configuration"]["networks"]) {
      const json* net = st.find("networks", n["network"]);
      const std::string subnet = (*net)["status"]["ipv4Subnet"];
      const std::string ip =
          subnet.substr(0, subnet.rfind('.') + 1) + std::to_string(st.doc["next_ip"].get<int>());
      st.doc["next_ip"] = st.doc["next_ip"].get<int>() + 1;
      (*made)["status"]["networks"].push_back({{"network", n["network"]},
                                               {"hostname", c["id"]},
                                               {"ipv4Address", ip + "/24"},
                                               {"ipv4Gateway", (*net)["status"]["ipv4Gateway"]}});
    }
  }
  st.save();
  std::cout << c["id"].get<std::string>() << "\n";
  return 0;
}

int exec(State& st, const std::string& name, const std::vector<std::string>& cmd) {
  json* c = st.find("containers", name);
  if (c == nullptr || (*c)["status"]["state"] != "running") {
    std::cerr << message("not_found", name);
    return 1;
  }
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  if (cmd == std::vector<std::string>{"cat"}) {
    std::cout << input;
    return 0;
  }
  if (cmd == std::vector<std::string>{"true"}) return 0;
  if (cmd == std::vector<std::string>{"false"}) return 1;
  if (cmd == std::vector<std::string>{"id", "-u"}) {
    std::cout << (*c)["configuration"]["initProcess"]["user"]["id"]["uid"].get<long long>() << "\n";
    return 0;
  }
  const bool gatekeeper =
      name.size() > 11 && name.compare(name.size() - 11, 11, "-gatekeeper") == 0;
  if (gatekeeper && cmd.size() == 4 && cmd[0] == "/gatekeeper" && cmd[1] == "control") {
    if (cmd[2] == "GET" && cmd[3] == "/health") {
      std::cout << R"({"ready":true})"
                << "\n";
      return 0;
    }
    if (cmd[2] == "POST" && cmd[3] == "/window-key") {
      const json body = json::parse(input, nullptr, false);
      if (!body.is_object() || body.value("key", "").size() != 64) return 1;
      std::cout << R"({"ok":true})"
                << "\n";
      return 0;
    }
  }
  if (cmd.size() == 7 && cmd[0] == "/bin/busybox" && cmd[1] == "nc" && cmd[2] == "-z" &&
      cmd[3] == "-w" && cmd[4] == "5") {
    // A host-only network: the listener on the same network answers; a public address only when
    // the Mac forwards.
    for (const json& o : st.doc["containers"]) {
      for (const json& att : o["status"]["networks"]) {
        if (att["ipv4Address"].get<std::string>().rfind(cmd[5] + "/", 0) == 0 && cmd[6] == "8080") {
          return 0;
        }
      }
    }
    return env("FAKE_CONTAINER_FORWARDING") == "1" && cmd[5] == "1.1.1.1" ? 0 : 1;
  }
  std::cerr << "exec: " << cmd[0] << ": not found\n";
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  {
    std::ofstream log(env("FAKE_CONTAINER_LOG"), std::ios::app);
    for (std::size_t i = 0; i < a.size(); ++i) log << (i ? "\x1f" : "") << a[i];
    log << '\n';
  }
  if (env("FAKE_CONTAINER_DOWN") == "1") {
    std::cerr << message("api_down");
    return 1;
  }
  State st;
  auto is = [&](std::initializer_list<const char*> want) {
    if (a.size() != want.size()) return false;
    std::size_t i = 0;
    for (const char* w : want) {
      if (std::string(w) != "*" && a[i] != w) return false;
      ++i;
    }
    return true;
  };
  if (is({"system", "version", "--format", "json"})) {
    std::cout << answer("system-version.json").dump(2) << "\n";
    return 0;
  }
  if (is({"list", "--all", "--format", "json"})) {
    std::cout << st.doc["containers"].dump(1) << "\n";
    return 0;
  }
  if (is({"network", "list", "--format", "json"})) {
    std::cout << st.doc["networks"].dump(1) << "\n";
    return 0;
  }
  if (is({"volume", "list", "--format", "json"})) {
    std::cout << st.doc["volumes"].dump(1) << "\n";
    return 0;
  }
  if (is({"image", "pull", "*"})) {
    if (a[2].find("@sha256:") == std::string::npos) return refuse(a, "a pull by tag");
    return 0;
  }
  if (a.size() >= 3 && a[0] == "network" && a[1] == "create") {
    json n = answer("network-inspect.json");
    std::size_t i = 2;
    if (a[i] == "--internal") n["configuration"]["mode"] = "hostOnly", ++i;
    for (; i + 1 < a.size() && a[i] == "--label"; i += 2) {
      if (!label(a[i + 1], n["configuration"]["labels"])) return refuse(a, "--label without =");
    }
    if (i + 1 != a.size()) return refuse(a, "network create: unexpected arguments");
    const std::string subnet = "192.168." + std::to_string(st.doc["next_net"].get<int>()) + ".0/24";
    st.doc["next_net"] = st.doc["next_net"].get<int>() + 1;
    n["id"] = n["configuration"]["id"] = n["configuration"]["name"] = a[i];
    n["configuration"]["ipv4Subnet"] = n["status"]["ipv4Subnet"] = subnet;
    n["status"]["ipv4Gateway"] = subnet.substr(0, subnet.rfind('.') + 1) + "1";
    st.doc["networks"].push_back(n);
    st.save();
    std::cout << a[i] << "\n";
    return 0;
  }
  if (is({"network", "inspect", "*"})) {
    const json* n = st.find("networks", a[2]);
    if (n == nullptr) {
      std::cerr << message("network_not_found", a[2]);
      return 1;
    }
    std::cout << json::array({*n}).dump(1) << "\n";
    return 0;
  }
  if (a.size() >= 5 && a[0] == "volume" && a[1] == "create") {
    json v = answer("volume-inspect.json");
    std::size_t i = 2;
    for (; i + 1 < a.size() && a[i] == "--label"; i += 2) {
      if (!label(a[i + 1], v["labels"])) return refuse(a, "--label without =");
    }
    if (i + 3 != a.size() || a[i] != "-s") return refuse(a, "volume create without -s SIZE NAME");
    v["name"] = a[i + 2];
    const std::optional<std::int64_t> size = policy::parse_number<std::int64_t>(a[i + 1]);
    if (!size || *size < 0) {
      return refuse(a, "volume create -s '" + a[i + 1] + "' is not a byte count");
    }
    v["sizeInBytes"] = *size;
    v["source"] = "/Users/user/Library/Application Support/com.apple.container/volumes/" +
                  a[i + 2] + "/volume.img";
    st.doc["volumes"].push_back(v);
    st.save();
    std::cout << a[i + 2] << "\n";
    return 0;
  }
  if (a.size() > 2 && a[0] == "create") return make_container(st, a, 1, false);
  if (a.size() > 2 && a[0] == "run") return make_container(st, a, 1, true);
  if (is({"inspect", "*"})) {
    const json* c = st.find("containers", a[1]);
    if (c == nullptr) {
      std::cerr << message("not_found", a[1]);
      return 1;
    }
    std::cout << json::array({*c}).dump(1) << "\n";
    return 0;
  }
  if (is({"start", "*"})) {
    json* c = st.find("containers", a[1]);
    if (c == nullptr) {
      std::cerr << message("not_found", a[1]);
      return 1;
    }
    (*c)["status"]["state"] = "running";
    (*c)["status"]["networks"] = json::array();
    for (const json& n : (*c)["configuration"]["networks"]) {
      const json* net = st.find("networks", n["network"]);
      const std::string subnet = (*net)["status"]["ipv4Subnet"];
      const std::string ip =
          subnet.substr(0, subnet.rfind('.') + 1) + std::to_string(st.doc["next_ip"].get<int>());
      st.doc["next_ip"] = st.doc["next_ip"].get<int>() + 1;
      (*c)["status"]["networks"].push_back({{"network", n["network"]},
                                            {"hostname", a[1]},
                                            {"ipv4Address", ip + "/24"},
                                            {"ipv4Gateway", (*net)["status"]["ipv4Gateway"]}});
    }
    st.save();
    std::cout << a[1] << "\n";
    return 0;
  }
  if (is({"stop", "--time", "10", "*"})) {
    json* c = st.find("containers", a[3]);
    if (c == nullptr) {
      std::cerr << message("not_found", a[3]);
      return 1;
    }
    (*c)["status"]["state"] = "stopped";
    (*c)["status"]["networks"] = json::array();
    st.save();
    return 0;
  }
  if (is({"delete", "--force", "*"})) {
    st.erase("containers", a[2]);
    st.save();
    return 0;
  }
  if (is({"volume", "delete", "*"}) || is({"network", "delete", "*"})) {
    st.erase(a[0] == "volume" ? "volumes" : "networks", a[2]);
    st.save();
    return 0;
  }
  if (a.size() >= 6 && a[0] == "exec" && a[1] == "--interactive" && a[2] == "--user") {
    return exec(st, a[4], std::vector<std::string>(a.begin() + 5, a.end()));
  }
  return refuse(a, "no such shape");
}
