// DockerPlace's bounded disk (loop_disk.h): the images live on the engine's host. On this machine
// (local Docker, rootful Podman) spacectl makes them itself; on the docker-ssh place's host a
// helper container does it through the engine's channel (remote_disk.h). An engine this code
// cannot see (the docker place with DOCKER_HOST=ssh://…, tcp://…, another context) gets no space at
// all rather than an unbounded one: the size limit is a promise verify proves.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "controller/docker_place.h"
#include "controller/loop_disk.h"

namespace controller {
namespace {

bool engine_on_this_machine(const Engine& engine) {
  if (!engine_is_local(engine)) return false;
  if (engine.kind == EngineKind::kPodman) return true;  // Podman has no DOCKER_HOST
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

Result<std::string> DockerPlace::run_disk_helper(const std::vector<std::string>& script_args,
                                                 bool privileged, const std::string& what) {
  // The pinned space image, whatever the space runs: its static busybox is all the helper needs.
  Result<std::string> image = pinned_image(options_.space_image_file);
  if (!image) return image.error();
  const std::vector<std::string> labels = {
      "--label", std::string(kLabelMarker) + "=true",
      "--label", std::string(kLabelOwner) + "=" + options_.owner,
      "--label", std::string(kLabelRole) + "=" + std::string(role_word(Role::kProbe))};
  std::vector<std::string> args = remote_disk_helper_argv(*image, labels, privileged);
  args.insert(args.end(), script_args.begin(), script_args.end());
  Result<ProcessOutcome> o = cli_.run_raw(args, what, kChangeTimeout);
  if (!o) return o.error();
  if (!o->succeeded())
    return fail(Code::kCommandFailed,
                "bounded disk on " + options_.engine.host + " (" + what + "): " + o->describe());
  return o->out;
}

RemoteDiskView DockerPlace::remote_disk_view(const std::vector<int>& indices) {
  Result<std::string> out =
      run_disk_helper(remote_probe_args(indices), false, "read the loop devices");
  return out ? parse_remote_probe(*out, indices) : RemoteDiskView{};
}

Result<void> DockerPlace::make_disks(SpaceSpec& spec) {
  if (disks_remote()) {
    if (spec.disk_bytes < kMinDiskBytes || spec.disk_bytes > kMaxDiskBytes)
      return fail(Code::kInvalidArgument, "space create " + spec.id + ": disk size " +
                                              std::to_string(spec.disk_bytes) +
                                              " is outside 64 MiB to 16 TiB");
    const Names n = names_for(spec.id);
    std::vector<RemoteImage> images;
    for (const std::string& volume : {n.home, n.work})
      images.push_back({disk_image_path(disk_dir(), options_.owner + "-" + volume),
                        preferred_loop_index(volume)});
    Result<std::string> out =
        run_disk_helper(remote_make_args(disk_dir(), kSpaceUser, spec.disk_bytes, images), true,
                        "make the volumes' disk images");
    if (!out) return out.error();
    Result<std::vector<int>> loops = parse_remote_make(*out, images.size());
    if (!loops) return loops.error();
    spec.home_loop = (*loops)[0];
    spec.work_loop = (*loops)[1];
    return {};
  }
  if (!engine_on_this_machine(options_.engine))
    return fail(
        Code::kPlaceUnusable,
        "space create on " + std::string(engine_word(options_.engine.kind)) +
            (options_.engine.host.empty() ? std::string() : " (" + options_.engine.host + ")") +
            ": a bounded disk needs the engine on this machine (" +
            (engine_is_local(options_.engine) ? "DOCKER_HOST/DOCKER_CONTEXT name another"
                                              : "this place's engine runs on another host") +
            "); its volumes would have no size limit");
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
  std::vector<std::pair<std::string, int>> remote;
  for (const std::string& volume : {n.home, n.work}) {
    Result<nlohmann::json> doc = inspect({"volume", "inspect", "--", volume}, volume);
    if (!doc) return doc.error();
    if (doc->empty() || !(*doc)[0].is_object() || !(*doc)[0]["Options"].is_object()) continue;  // verify names it
    const nlohmann::json& device = (*doc)[0]["Options"]["device"];
    const std::optional<int> index = device.is_string() ? loop_index_of_device(device.get<std::string>()) : std::nullopt;
    if (!index) continue;  // verify names it
    const std::string image = disk_image_path(disk_dir(), options_.owner + "-" + volume);
    if (disks_remote()) {
      remote.emplace_back(image, *index);
      continue;
    }
    if (::access(image.c_str(), F_OK) != 0) continue;  // verify names it
    if (Result<void> r = reattach_disk_image(image, *index); !r) return r;
  }
  if (!remote.empty())
    if (Result<std::string> r =
            run_disk_helper(remote_reattach_args(remote), true, "attach the disk images again");
        !r)
      return r.error();
  return {};
}

std::string DockerPlace::release_disks(const std::string& id) {
  const Names n = names_for(id);
  std::string failures;
  if (disks_remote()) {
    std::vector<std::string> images;
    for (const std::string& volume : {n.home, n.work})
      images.push_back(disk_image_path(disk_dir(), options_.owner + "-" + volume));
    if (Result<std::string> r =
            run_disk_helper(remote_release_args(images), true, "release the disk images");
        !r)
      failures += " " + r.error().message + ";";
    return failures;
  }
  for (const std::string& volume : {n.home, n.work}) {
    if (Result<void> r = release_disk_image(disk_image_path(disk_dir(), options_.owner + "-" + volume)); !r)
      failures += " " + r.error().message + ";";
  }
  return failures;
}

}  // namespace controller
