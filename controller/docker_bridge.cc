// Place::connect on Docker: `docker exec -i` running our static bridge inside the space
// (controller/dispatch/inside/bridge.cc). Nothing of the space's image is trusted to carry the
// bytes; only a file writer (dd or tee) and mkdir/chmod are needed once per container start.
//
// Where the bridge lives, and why the host knows it runs our bytes: uid 0 in the space (still
// without capabilities, no-new-privileges) makes a fresh directory /tmp/spacectl-bridge-<random>
// with mode 0755 (mkdir fails on an existing name, so nothing the space prepared is adopted),
// writes the bridge into it and makes it 0755. /tmp is sticky and both belong to root, so the
// space user can neither replace, rename nor remove the program, nor the directory. The space user
// can still trace the bridge process (same uid), which is no loss: the bridge carries only bytes
// the space already has (the requests are stripped of the user's credentials before they go in,
// and the session it carries is derived from the space's own token).
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/docker_place.h"

namespace controller {

namespace {

using nlohmann::json;

inline constexpr std::size_t kBridgeCap = 16u << 20;

// Process-wide: a container id with its StartedAt names one start of one container, whoever asks.
struct BridgeCache {
  std::mutex mutex;
  std::map<std::string, std::string> bytes;   // bridge binary path -> its bytes, read once
  std::map<std::string, std::string> placed;  // container id @ StartedAt -> path inside
};

BridgeCache& bridges() {
  static BridgeCache cache;
  return cache;
}
inline constexpr std::chrono::seconds kPlaceTimeout{60};

std::string field(const json& doc, const char* a, const char* b) {
  if (!doc.is_object() || !doc.contains(a) || !doc[a].is_object()) return {};
  const json& v = doc[a].contains(b) ? doc[a][b] : json();
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::string shown(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

Result<std::vector<std::string>> DockerPlace::connect(const std::string& id, std::uint16_t port) {
  Result<json> c = owned_container(id, Role::kSpace);
  if (!c) return c.error();
  const std::string name = names_for(id).space;
  const std::string state = field(*c, "State", "Status");
  if (state != "running") return fail(Code::kSpaceNotRunning, "connect " + name + ": the container is " + (state.empty() ? "unknown" : state));
  const std::string container = c->contains("Id") && (*c)["Id"].is_string() ? (*c)["Id"].get<std::string>() : std::string();
  // /tmp is a tmpfs: a restart empties it, so a placement counts for one start of one container.
  Result<std::string> path = ensure_bridge(id, name, container + "@" + field(*c, "State", "StartedAt"));
  if (!path) return path.error();
  // The engine's global arguments (`--host ssh://…`, `--runtime runc`) come first, as on every
  // call.
  std::vector<std::string> argv = cli_.prefix();
  argv.insert(argv.end(), {"exec", "--interactive", "--user", std::string(kSpaceUser), "--", name,
                           *path, std::to_string(port)});
  return argv;
}

Result<std::string> DockerPlace::ensure_bridge(const std::string& id, const std::string& container, const std::string& start_key) {
  BridgeCache& cache = bridges();
  std::lock_guard<std::mutex> hold(cache.mutex);
  if (auto it = cache.placed.find(start_key); it != cache.placed.end()) return it->second;
  if (options_.bridge_binary.empty())
    return fail(Code::kPlaceUnusable, "connect " + container + ": no spacectl-bridge binary is configured");
  std::string& program = cache.bytes[options_.bridge_binary];
  if (program.empty()) {
    Result<std::string> bytes = read_small_file(options_.bridge_binary, kBridgeCap);
    if (!bytes) return fail(Code::kPlaceUnusable, "connect " + container + ": " + bytes.error().message);
    if (bytes->size() < 4 || bytes->compare(0, 4, "\x7f" "ELF") != 0)
      return fail(Code::kPlaceUnusable, "connect " + container + ": " + options_.bridge_binary + " is not an ELF program");
    program = std::move(*bytes);
  }
  // Tries each spelling in turn: an image without a `dd` applet link may still have busybox.
  auto run = [&](const std::vector<std::vector<std::string>>& spellings, const std::string& in,
                 const std::string& what) -> Result<void> {
    std::string last;
    for (const std::vector<std::string>& argv : spellings) {
      Result<ExecOutput> r = exec_as(id, Role::kSpace, "0:0", argv, in, kPlaceTimeout);
      if (!r) return r.error();
      if (r->exit_code == 0) return {};
      last = "exit " + std::to_string(r->exit_code) + ": " + shown(r->err);
      if (r->exit_code != 126 && r->exit_code != 127) break;  // it ran and failed: no other spelling helps
    }
    return fail(Code::kPlaceUnusable, what + " in " + container + ": " + last);
  };
  const std::string dir = "/tmp/spacectl-bridge-" + random_hex(8);
  const std::string file = dir + "/bridge";
  if (Result<void> r = run({{"mkdir", "-m", "755", dir}, {"busybox", "mkdir", "-m", "755", dir}}, {}, "mkdir " + dir); !r)
    return r.error();
  if (Result<void> r = run({{"dd", "of=" + file, "bs=65536"}, {"busybox", "dd", "of=" + file, "bs=65536"},
                            {"tee", file}, {"busybox", "tee", file}},
                           program, "write " + file);
      !r)
    return r.error();
  if (Result<void> r = run({{"chmod", "755", file}, {"busybox", "chmod", "755", file}}, {}, "chmod 755 " + file); !r)
    return r.error();
  cache.placed[start_key] = file;
  return file;
}

}  // namespace controller
