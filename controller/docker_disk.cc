// DockerPlace's bounded disk (loop_disk.h): the images live on the engine's host, so this needs
// the engine on this machine. A remote engine (DOCKER_HOST=ssh://…, tcp://…, another context)
// gets no space at all rather than an unbounded one: the size limit is a promise verify proves.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "controller/docker_place.h"
#include "controller/loop_disk.h"

namespace controller {
namespace {

bool engine_on_this_machine() {
  const char* host = std::getenv("DOCKER_HOST");
  const char* context = std::getenv("DOCKER_CONTEXT");
  const bool local_host = host == nullptr || host[0] == '\0' || std::strncmp(host, "unix://", 7) == 0;
  const bool local_context = context == nullptr || context[0] == '\0' || std::strcmp(context, "default") == 0;
  return local_host && local_context;
}

Result<void> make_dirs(const std::string& path) {
  std::string prefix;
  std::size_t at = 1;
  while (at <= path.size()) {
    const std::size_t next = path.find('/', at);
    prefix = path.substr(0, next == std::string::npos ? path.size() : next);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return fail(Code::kPlaceUnusable, "mkdir " + prefix + " (disk images): " + std::strerror(errno));
    if (next == std::string::npos) break;
    at = next + 1;
  }
  return {};
}

}  // namespace

std::string DockerPlace::disk_dir() const {
  return options_.disk_dir.empty() ? std::string(kDefaultDiskDir) : options_.disk_dir;
}

Result<void> DockerPlace::make_disks(SpaceSpec& spec) {
  if (!engine_on_this_machine())
    return fail(Code::kPlaceUnusable, "space create: a bounded disk needs the engine on this machine (DOCKER_HOST/DOCKER_CONTEXT name "
                                      "another); its volumes would have no size limit");
  if (Result<void> r = make_dirs(disk_dir()); !r) return r;
  const Names n = names_for(spec.id);
  for (const auto& [volume, loop] : {std::pair{n.home, &spec.home_loop}, std::pair{n.work, &spec.work_loop}}) {
    const std::string image = disk_image_path(disk_dir(), options_.owner + "-" + volume);
    if (Result<void> r = make_disk_image(image, spec.disk_bytes, kSpaceUser); !r) return r;
    Result<int> index = attach_disk_image(image, preferred_loop_index(volume));
    if (!index) return index.error();
    *loop = *index;
  }
  return {};
}

Result<void> DockerPlace::attach_disks(const std::string& id) {
  const Names n = names_for(id);
  for (const std::string& volume : {n.home, n.work}) {
    Result<nlohmann::json> doc = inspect({"volume", "inspect", "--", volume}, volume);
    if (!doc) return doc.error();
    if (doc->empty() || !(*doc)[0].is_object() || !(*doc)[0]["Options"].is_object()) continue;  // verify names it
    const nlohmann::json& device = (*doc)[0]["Options"]["device"];
    const std::optional<int> index = device.is_string() ? loop_index_of_device(device.get<std::string>()) : std::nullopt;
    if (!index) continue;  // verify names it
    const std::string image = disk_image_path(disk_dir(), options_.owner + "-" + volume);
    if (::access(image.c_str(), F_OK) != 0) continue;  // verify names it
    if (Result<void> r = reattach_disk_image(image, *index); !r) return r;
  }
  return {};
}

std::string DockerPlace::release_disks(const std::string& id) {
  const Names n = names_for(id);
  std::string failures;
  for (const std::string& volume : {n.home, n.work}) {
    if (Result<void> r = release_disk_image(disk_image_path(disk_dir(), options_.owner + "-" + volume)); !r)
      failures += " " + r.error().message + ";";
  }
  return failures;
}

}  // namespace controller
