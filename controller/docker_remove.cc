// DockerPlace::remove and the rollback of a create: every object of the space, by label (and by
// name in a rollback), containers, then volumes, then networks, then the disk images.
#include <future>
#include <set>

#include "controller/docker_place.h"
#include "controller/host_guard.h"

namespace controller {

Result<void> DockerPlace::remove_everything(const std::string& id, bool also_by_name) {
  forget_containers(id);
  const Names n = names_for(id);
  const std::string by_id = "label=" + std::string(kLabelId) + "=" + id;
  const std::string by_owner = "label=" + std::string(kLabelOwner) + "=" + options_.owner;
  // By name only in a rollback: that call just saw the names free, and an interrupted `docker
  // create` can leave an unlabelled object behind (docs/reference-behaviour.md#docker-place).
  // Elsewhere labels decide.
  std::set<std::string> containers, volumes, networks;
  if (also_by_name) {
    containers = {n.space, n.gatekeeper};
    volumes = {n.home, n.work};
    networks = {n.inner, n.outer};
  }
  std::string failures;
  // A list that fails is reported: what it would have named may still exist.
  std::size_t labelled = 0;
  if (Result<std::string> r = cli_.run(
          {"ps", "--all", "--filter", by_id, "--filter", by_owner, "--format", "{{.Names}}"}, id);
      r) {
    for (const std::string& l : output_lines(*r)) containers.insert(l), ++labelled;
  } else {
    return r.error();
  }
  if (Result<std::string> r = cli_.run(
          {"volume", "ls", "--filter", by_id, "--filter", by_owner, "--format", "{{.Name}}"}, id);
      r) {
    for (const std::string& l : output_lines(*r)) volumes.insert(l), ++labelled;
  } else {
    failures += " " + r.error().message + ";";
  }
  if (Result<std::string> r = cli_.run(
          {"network", "ls", "--filter", by_id, "--filter", by_owner, "--format", "{{.Name}}"}, id);
      r) {
    for (const std::string& l : output_lines(*r)) networks.insert(l), ++labelled;
  } else {
    failures += " " + r.error().message + ";";
  }
  if (!also_by_name && labelled == 0 && failures.empty()) {
    return fail(Code::kSpaceNotFound,
                "space remove " + id + ": nothing of this owner carries that id");
  }
  auto remove = [this](const std::vector<std::string>& args,
                       const std::string& what) -> std::string {
    Result<ProcessOutcome> o = cli_.run_raw(args, what, kChangeTimeout);
    if (!o) return " " + o.error().message + ";";
    if (!o->succeeded() && !docker_no_such_object(o->err)) {
      return " docker " + args[0] + " " + what + ": " + o->describe() + ";";
    }
    return {};
  };
  // Containers, then volumes, then networks: each holds the next
  // (docs/reference-behaviour.md#docker-place). Within a kind the removals are independent and
  // made at once; each kind has ended before the next begins.
  auto remove_kind = [&](const std::set<std::string>& objects,
                         const std::vector<std::string>& verb) {
    std::vector<std::future<std::string>> pending;
    for (const std::string& o : objects) {
      std::vector<std::string> args = verb;
      args.insert(args.end(), {"--", o});
      pending.push_back(std::async(
          std::launch::async, [&remove, args = std::move(args), o] { return remove(args, o); }));
    }
    for (std::future<std::string>& f : pending) failures += f.get();
  };
  remove_kind(containers, {"rm", "--force", "--volumes"});
  remove_kind(volumes, {"volume", "rm", "--force"});
  remove_kind(networks, {"network", "rm"});
  if (podman()) {
    if (Result<void> g = guard_remove(id); !g) failures += " " + g.error().message + ";";
  }
  // The disk images go last: a volume still mounted holds its loop device.
  failures += release_disks(id);
  if (!failures.empty()) return fail(Code::kCommandFailed, "space remove " + id + ":" + failures);
  return {};
}

Result<void> DockerPlace::remove(const std::string& id) {
  if (!is_space_id(id)) {
    return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  }
  return remove_everything(id, false);
}

}  // namespace controller
