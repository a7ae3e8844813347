// DockerPlace exec: commands in the space or the gatekeeper, argv only, each under a deadline and
// an output cap; what a killed exec started inside is found by its tag and killed.
#include <signal.h>

#include <fstream>
#include <optional>

#include "controller/docker_place.h"
#include "controller/inspect_json.h"
#include "policy/number.h"

namespace controller {

using nlohmann::json;

Result<ExecOutput> DockerPlace::exec(const std::string& id, ExecTarget target,
                                     const std::vector<std::string>& argv,
                                     const std::string& stdin_bytes,
                                     std::chrono::milliseconds timeout) {
  const Role role = target == ExecTarget::kGatekeeper ? Role::kGatekeeper : Role::kSpace;
  return exec_as(id, role, role == Role::kGatekeeper ? kGatekeeperUser : kSpaceUser, argv,
                 stdin_bytes, timeout);
}

Result<ExecOutput> DockerPlace::exec_as_root(const std::string& id,
                                             const std::vector<std::string>& argv,
                                             const std::string& stdin_bytes,
                                             std::chrono::milliseconds timeout) {
  return exec_as(id, Role::kSpace, "0:0", argv, stdin_bytes, timeout);
}

bool engine_refusal_text(std::string_view err) {
  // Docker: "Error response from daemon: Container … is not running", "Error: No such container:
  // …"; Podman: "Error: can only create exec sessions on running containers…", "Error: no
  // container with name or ID … found"; runc: "OCI runtime exec failed: …".
  for (const std::string_view head :
       {"Error response from daemon:", "Error: ", "OCI runtime exec failed"}) {
    for (std::size_t at = err.find(head); at != std::string_view::npos;
         at = err.find(head, at + 1)) {
      if (at == 0 || err[at - 1] == '\n') return true;
    }
  }
  return false;
}

std::string DockerPlace::known_container(const std::string& id, Role role) const {
  const std::lock_guard<std::mutex> hold(known_->mutex);
  const auto it = known_->ids.find({id, role});
  return it == known_->ids.end() ? std::string() : it->second;
}

void DockerPlace::remember_container(const std::string& id, Role role,
                                     const std::string& container_id) {
  if (container_id.empty()) return;
  const std::lock_guard<std::mutex> hold(known_->mutex);
  known_->ids[{id, role}] = container_id;
}

void DockerPlace::forget_containers(const std::string& id) {
  const std::lock_guard<std::mutex> hold(known_->mutex);
  known_->ids.erase({id, Role::kSpace});
  known_->ids.erase({id, Role::kGatekeeper});
}

Result<ExecOutput> DockerPlace::exec_in(const std::string& container, const std::string& name,
                                        std::string_view user, const std::vector<std::string>& argv,
                                        const std::string& stdin_bytes,
                                        std::chrono::milliseconds timeout) {
  // A tag in the exec'd process's environment: when the deadline or a stop signal kills the
  // docker CLI, what it started inside is found from the host by the tag and killed too.
  const std::string tag = random_hex(8);
  std::vector<std::string> args = {"exec",   "--interactive",
                                   "--user", std::string(user),
                                   "--env",  std::string(kExecTagEnv) + "=" + tag,
                                   "--",     container};
  args.insert(args.end(), argv.begin(), argv.end());
  // The output is the command's (the space's words): it never decides a place error code.
  Result<ProcessOutcome> o =
      cli_.run_raw(args, name, timeout, stdin_bytes, kDefaultOutputCap, /*output_from_space=*/true);
  if (!o) {
    Failure f = o.error();
    if (f.code == Code::kCommandTimeout || f.code == Code::kInterrupted ||
        f.code == Code::kOutputTooLarge) {
      f.message += end_exec_inside(container, tag);
    }
    return f;
  }
  if (!o->exited) return fail(Code::kCommandFailed, "docker exec " + name + ": " + o->describe());
  if (o->exit_code != 0 && daemon_unreachable_text(o->err)) {
    // Words like "dial unix" may be the command's own: only the daemon's answer to us decides.
    if (Result<int> v = engine_major(); !v && v.error().code == Code::kPlaceUnreachable) {
      return v.error();
    }
  }
  return ExecOutput{o->exit_code, std::move(o->out), std::move(o->err)};
}

Result<ExecOutput> DockerPlace::exec_as(const std::string& id, Role role, std::string_view user,
                                        const std::vector<std::string>& argv,
                                        const std::string& stdin_bytes,
                                        std::chrono::milliseconds timeout) {
  const Names n = names_for(id);
  const std::string& name = role == Role::kGatekeeper ? n.gatekeeper : n.space;
  // A container this place already found ours (labels never change on a container ID) is reached
  // by its ID without another inspect. The engine refuses an exec in a stopped or removed
  // container with its own error line; an answer that carries one is checked against a fresh
  // inspect before it counts: stopped is kSpaceNotRunning, gone is kSpaceNotFound, as without the
  // shortcut. A command that forges such a line only buys itself that inspect.
  if (const std::string known = known_container(id, role); !known.empty()) {
    Result<ExecOutput> fast = exec_in(known, name, user, argv, stdin_bytes, timeout);
    if (fast && (fast->exit_code == 0 || !engine_refusal_text(fast->err))) return fast;
    // The deadline, the output cap or a signal ended a command that ran: its failure stands.
    if (!fast && fast.error().code != Code::kCommandFailed) return fast;
    Result<json> c = owned_container(id, role);
    if (c && container_state(*c) == "running" && inspect::str(inspect::member(*c, "Id")) == known) {
      return fast;  // the command's own exit status
    }
    forget_containers(id);
    if (!c) return c.error();
    if (container_state(*c) != "running") {
      return fail(Code::kSpaceNotRunning,
                  "docker exec " + name + ": the container is " + container_state(*c));
    }
    // Another container of ours holds the name now: the engine refused the old ID, so the command
    // never ran; it runs in the one just inspected.
    remember_container(id, role, inspect::str(inspect::member(*c, "Id")));
    return exec_in(inspect::str(inspect::member(*c, "Id")), name, user, argv, stdin_bytes, timeout);
  }
  Result<json> c = owned_container(id, role);
  if (!c) return c.error();
  if (container_state(*c) != "running") {
    return fail(Code::kSpaceNotRunning,
                "docker exec " + name + ": the container is " + container_state(*c));
  }
  // By the ID just inspected: no name-based gap between the label check and the exec.
  const std::string container = inspect::str(inspect::member(*c, "Id"));
  if (container.empty()) {
    return fail(Code::kCommandFailed, "docker container inspect " + name + ": no Id");
  }
  remember_container(id, role, container);
  return exec_in(container, name, user, argv, stdin_bytes, timeout);
}

Result<ExecOutput> DockerPlace::exec_watched(
    const std::string& id, const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
    std::size_t cap, const std::function<void(std::string_view)>& on_stderr) {
  Result<json> c = owned_container(id, Role::kSpace);
  if (!c) return c.error();
  const std::string name = names_for(id).space;
  if (container_state(*c) != "running") {
    return fail(Code::kSpaceNotRunning,
                "docker exec " + name + ": the container is " + container_state(*c));
  }
  const std::string tag = random_hex(8);
  std::vector<std::string> args = {"exec",   "--interactive",
                                   "--user", std::string(kSpaceUser),
                                   "--env",  std::string(kExecTagEnv) + "=" + tag,
                                   "--",     name};
  args.insert(args.end(), argv.begin(), argv.end());
  std::string out, err;
  bool too_large = false;
  Result<ProcessOutcome> o =
      cli_.run_stream_from_space(args, name, timeout, [&](bool is_stderr, std::string_view bytes) {
        if (is_stderr) {
          err.append(bytes);
          if (err.size() > kStderrKept) err.erase(0, err.size() - kStderrKept);
          if (on_stderr) on_stderr(bytes);
          return;
        }
        if (out.size() + bytes.size() > cap) {
          too_large = true;
        } else {
          out.append(bytes);
        }
      });
  if (!o) {
    Failure f = o.error();
    if (f.code == Code::kCommandTimeout || f.code == Code::kInterrupted) {
      f.message += end_exec_inside(name, tag);
    }
    return f;
  }
  if (!o->exited) return fail(Code::kCommandFailed, "docker exec " + name + ": " + o->describe());
  if (too_large) {
    return fail(Code::kOutputTooLarge,
                "docker exec " + name + ": more than " + std::to_string(cap) + " bytes of output");
  }
  return ExecOutput{o->exit_code, std::move(out), std::move(err)};
}

std::string DockerPlace::end_exec_inside(const std::string& container, const std::string& tag) {
  // Docker's top takes ps options; Podman's takes its own descriptors (hpid: the host's pid).
  Result<std::string> top = podman() ? cli_.run({"top", "--", container, "hpid"}, container)
                                     : cli_.run({"top", "--", container, "-eo", "pid"}, container);
  if (!top) return "; what it started inside may still run (" + top.error().message + ")";
  const std::string needle = std::string(kExecTagEnv) + "=" + tag;
  int killed = 0, visible = 0;
  for (const std::string& line : output_lines(*top)) {
    const std::size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos || line.find_first_not_of("0123456789 ") != std::string::npos) {
      continue;  // the header
    }
    const std::string pid = line.substr(b, line.find(' ', b) - b);
    // Host pids (docker top runs ps on the daemon's host): visible here for a local engine only.
    if (!engine_is_local(options_.engine)) break;
    std::ifstream in("/proc/" + pid + "/environ", std::ios::binary);
    if (!in) continue;
    ++visible;
    std::string env(64u << 10, '\0');
    in.read(env.data(), static_cast<std::streamsize>(env.size()));
    env.resize(static_cast<std::size_t>(in.gcount()));
    const std::string padded = std::string(1, '\0') + env;
    if (padded.find(std::string(1, '\0') + needle + std::string(1, '\0')) != std::string::npos ||
        (padded.size() >= needle.size() + 1 &&
         padded.compare(padded.size() - needle.size(), needle.size(), needle) == 0)) {
      const std::optional<pid_t> number = policy::parse_number<pid_t>(pid);
      if (number && *number > 0 && ::kill(*number, SIGKILL) == 0) {
        ++killed;
      }
    }
  }
  if (visible == 0) {
    return "; what it started inside is not visible from this host and may still run";
  }
  return "; killed " + std::to_string(killed) + " process(es) it had started inside";
}

Result<std::vector<std::string>> DockerPlace::exec_argv(const std::string& id) {
  const std::string name = names_for(id).space;
  std::string container = known_container(id, Role::kSpace);
  if (container.empty()) {
    Result<json> c = owned_container(id, Role::kSpace);
    if (!c) return c.error();
    if (container_state(*c) != "running") {
      return fail(Code::kSpaceNotRunning,
                  "exec argv " + name + ": the container is " + container_state(*c));
    }
    container = inspect::str(inspect::member(*c, "Id"));
    if (container.empty()) {
      return fail(Code::kCommandFailed, "docker container inspect " + name + ": no Id");
    }
    remember_container(id, Role::kSpace, container);
  }
  // By ID: a container that took the name since cannot receive the command.
  std::vector<std::string> argv = cli_.prefix();
  argv.insert(argv.end(),
              {"exec", "--interactive", "--user", std::string(kSpaceUser), "--", container});
  return argv;
}

}  // namespace controller
