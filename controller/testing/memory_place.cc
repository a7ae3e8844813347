#include "controller/testing/memory_place.h"

#include "controller/docker_place.h"
#include "controller/records.h"
#include "controller/spec.h"

namespace controller::testing {

Result<CheckReport> MemoryPlace::check() {
  CheckReport r;
  r.engine_version = "memory";
  r.os_arch = "none/none";
  r.seccomp = true;
  r.isolation_proved = true;
  r.positive_control = true;
  r.findings.push_back("an in-memory place: nothing runs, so nothing can escape");
  return r;
}

Result<SpaceSummary> MemoryPlace::create(const CreateRequest& request) {
  if (request.name.empty() || request.name.size() > 100) return fail(Code::kInvalidArgument, "space create: a name is 1 to 100 characters");
  if (!request.id.empty() && !is_space_id(request.id)) return fail(Code::kInvalidArgument, "space create: an id is 12 lowercase hex digits");
  if (request.progress) request.progress("creating_space");
  SpaceSummary s;
  s.id = request.id.empty() ? random_hex(6) : request.id;
  s.name = request.name;
  s.created = request.name == "old" ? "2001-01-01T00:00:00Z" : now_utc_iso();
  s.space_state = "running";
  s.gatekeeper_state = "running";
  s.window_url = std::string(kWindowBase) + random_hex(32);
  spaces_[s.id] = s;
  return s;
}

Result<std::vector<SpaceSummary>> MemoryPlace::list() {
  std::vector<SpaceSummary> out;
  for (const auto& [id, s] : spaces_) out.push_back(s);
  return out;
}

Result<SpaceSummary*> MemoryPlace::find(const std::string& id) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  auto it = spaces_.find(id);
  if (it == spaces_.end()) return fail(Code::kSpaceNotFound, "space " + id + ": no such space");
  return &it->second;
}

Result<ExecOutput> MemoryPlace::exec(const std::string& id, ExecTarget target, const std::vector<std::string>& argv,
                                     const std::string& stdin_bytes, std::chrono::milliseconds /*timeout*/) {
  Result<SpaceSummary*> s = find(id);
  if (!s) return s.error();
  const std::string& state = target == ExecTarget::kGatekeeper ? (*s)->gatekeeper_state : (*s)->space_state;
  if (state != "running") return fail(Code::kSpaceNotRunning, "exec in " + id + ": the container is " + state);
  if (argv.empty()) return fail(Code::kInvalidArgument, "exec in " + id + ": no command");
  if (target == ExecTarget::kGatekeeper) {
    if (argv ==
        std::vector<std::string>{std::string(kGatekeeperBinary), "control", "GET", "/health"}) {
      return ExecOutput{0, "{\"ready\":true}", ""};
    }
    return ExecOutput{127, "", "not found\n"};
  }
  if (argv[0] == "cat") return ExecOutput{0, stdin_bytes, ""};
  if (argv[0] == "true") return ExecOutput{0, "", ""};
  if (argv[0] == "false") return ExecOutput{1, "", ""};
  return ExecOutput{127, "", argv[0] + ": not found\n"};
}

Result<std::vector<std::string>> MemoryPlace::exec_argv(const std::string& id) {
  Result<SpaceSummary*> s = find(id);
  if (!s) return s.error();
  if ((*s)->space_state != "running") return fail(Code::kSpaceNotRunning, "exec argv " + id + ": the space is stopped");
  return std::vector<std::string>{"memory-exec", id};
}

Result<std::vector<std::string>> MemoryPlace::interactive_exec_argv(const std::string& id,
                                                                    bool terminal) {
  Result<std::vector<std::string>> argv = exec_argv(id);
  if (!argv || !terminal) return argv;
  argv->insert(argv->begin() + 1, "--terminal");
  return argv;
}

Result<std::vector<std::string>> MemoryPlace::connect(const std::string& id, std::uint16_t port) {
  Result<std::vector<std::string>> argv = exec_argv(id);
  if (!argv) return argv.error();
  argv->insert(argv->end(), {"nc", "127.0.0.1", std::to_string(port)});
  return argv;
}

Result<void> MemoryPlace::stop(const std::string& id) {
  Result<SpaceSummary*> s = find(id);
  if (!s) return s.error();
  (*s)->space_state = "exited";
  (*s)->gatekeeper_state = "exited";
  return {};
}

Result<void> MemoryPlace::start(const std::string& id) {
  Result<SpaceSummary*> s = find(id);
  if (!s) return s.error();
  (*s)->gatekeeper_state = "running";
  (*s)->space_state = "running";
  return {};
}

Result<void> MemoryPlace::remove(const std::string& id) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  if (spaces_.erase(id) == 0) return fail(Code::kSpaceNotFound, "space " + id + ": no space of this owner has that id");
  return {};
}

Result<std::vector<Difference>> MemoryPlace::verify(const std::string& id) {
  Result<SpaceSummary*> s = find(id);
  if (!s) return s.error();
  return std::vector<Difference>{};
}

}  // namespace controller::testing
