#include "controller/serve/routes.h"

#include <string.h>

#include "controller/code/apply_cli.h"
#include "controller/code/cli.h"
#include "controller/code/render.h"
#include "controller/escape_runner.h"
#include "controller/grants/cli.h"
#include "controller/ids.h"
#include "controller/registry.h"
#include "controller/render.h"
#include "controller/spec.h"
#include "controller/sweep.h"

namespace controller::serve {

using nlohmann::json;

const std::vector<RouteRow>& route_table() {
  static const std::vector<RouteRow> rows = {
      {"GET", "/v1/health"},
      {"GET", "/v1/metrics"},
      {"GET", "/v1/place/check"},
      {"GET", "/v1/spaces"},
      {"POST", "/v1/spaces"},
      {"GET", "/v1/spaces/{id}"},
      {"DELETE", "/v1/spaces/{id}"},
      {"POST", "/v1/spaces/{id}/verify"},
      {"POST", "/v1/spaces/{id}/start"},
      {"POST", "/v1/spaces/{id}/stop"},
      {"PUT", "/v1/spaces/{id}/network"},
      {"POST", "/v1/spaces/{id}/grants"},
      {"POST", "/v1/spaces/{id}/grants/refresh"},
      {"POST", "/v1/spaces/{id}/window-key"},
      {"GET", "/v1/spaces/{id}/journal"},
      {"GET", "/v1/spaces/{id}/policy"},
      {"GET", "/v1/spaces/{id}/idle-stop"},
      {"PUT", "/v1/spaces/{id}/idle-stop"},
      {"POST", "/v1/spaces/{id}/code/in"},
      {"POST", "/v1/spaces/{id}/code/history"},
      {"POST", "/v1/spaces/{id}/code/forget"},
      {"POST", "/v1/spaces/{id}/code/out"},
      {"POST", "/v1/spaces/{id}/apply"},
      {"GET", "/v1/spaces/{id}/apply-state"},
      {"POST", "/v1/spaces/{id}/escape-test"},
      {"POST", "/v1/code/files"},
      {"GET", "/v1/idle-stop"},
      {"PUT", "/v1/idle-stop"},
      {"POST", "/v1/sweep"},
      {"GET", "/v1/operations"},
      {"GET", "/v1/operations/{op}"},
      {"GET", "/v1/operations/{op}/events"},
      {"DELETE", "/v1/operations/{op}"},
  };
  return rows;
}

Result<Env> ServeContext::make_env() const {
  Result<std::unique_ptr<Place>> place = builtin_registry().make(place_name, place_options);
  if (!place) return place.error();
  Env env;
  env.place = std::move(*place);
  env.manager = std::make_unique<Manager>(Manager{*env.place, state});
  env.manager->keep_failed_creations = true;
  return env;
}

namespace {

bool is_op_id(std::string_view s) {
  if (s.size() != 16) return false;
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::size_t s = 1;
  while (s <= path.size()) {
    std::size_t e = path.find('/', s);
    if (e == std::string::npos) e = path.size();
    out.push_back(path.substr(s, e - s));
    s = e + 1;
  }
  return out;
}

// Matches a pattern; fills id / op. A segment in an {id} place that is not a space id is a miss
// the caller answers as 404 space_not_found.
bool matches(const std::string& pattern, const std::vector<std::string>& got, std::string& id, std::string& op) {
  const std::vector<std::string> want = segments(pattern);
  if (want.size() != got.size()) return false;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == "{id}") {
      id = got[i];
    } else if (want[i] == "{op}") {
      op = got[i];
    } else if (want[i] != got[i]) {
      return false;
    }
  }
  return true;
}

Reply now(int status, json body) {
  Reply r;
  r.now = Response{status, std::move(body)};
  return r;
}
Reply now_error(int status, std::string_view code, const std::string& message) { return now(status, error_body(code, message)); }

// The operation's result as its document (render.h: the same one `--json` prints).
template <typename T>
Response answer(const Result<T>& r, int status = 200) {
  if (!r) return failure_response(r.error());
  return Response{status, to_json(*r)};
}

Reply later(std::function<Response()> work) {
  Reply r;
  r.kind = Reply::Kind::kLater;
  r.later = std::move(work);
  return r;
}

// A job with a place of its own.
Reply with_env(const ServeContext& ctx, std::function<Response(Env&)> work) {
  return later([&ctx, work = std::move(work)]() -> Response {
    Result<Env> env = ctx.make_env();
    if (!env) return failure_response(env.error());
    return work(*env);
  });
}

Result<json> body_object(const Request& request, std::initializer_list<const char*> allowed) {
  if (request.body.empty()) return json::object();
  json doc = json::parse(request.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail(Code::kInvalidArgument, "request body: not a JSON object");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    bool known = false;
    for (const char* a : allowed) known = known || it.key() == a;
    if (!known) return fail(Code::kInvalidArgument, "request body: unknown member " + it.key());
  }
  return doc;
}

bool get_string(const json& doc, const char* key, std::string& out) {
  if (!doc.contains(key)) return true;
  if (!doc[key].is_string()) return false;
  out = doc[key].get<std::string>();
  return true;
}

Reply accepted(const std::string& op, const std::string& id) {
  json body = {{"operation", op}, {"events", "/v1/operations/" + op + "/events"}};
  if (!id.empty()) body["id"] = id;
  return now(202, body);
}

}  // namespace

Route make_router(ServeContext& ctx) {
  return [&ctx](Request& req) -> Reply {
    const std::vector<std::string> got = segments(req.path);
    std::string id, op;
    const RouteRow* row = nullptr;
    bool path_known = false;
    for (const RouteRow& r : route_table()) {
      std::string i, o;
      if (!matches(r.pattern, got, i, o)) continue;
      path_known = true;
      if (req.method == r.method) {
        row = &r;
        id = i;
        op = o;
        break;
      }
    }
    if (row == nullptr) {
      return path_known ? now_error(405, "method_not_allowed", req.method + " " + req.path + ": not a method of this route")
                        : now_error(404, "route_not_found", req.path + ": no such route");
    }
    const std::string pattern = row->pattern;
    if (pattern.find("{id}") != std::string::npos && !is_space_id(id)) {
      return now_error(404, "space_not_found", "space " + id.substr(0, 40) + ": an id is 12 lowercase hex digits");
    }
    if (pattern.find("{op}") != std::string::npos && !is_op_id(op)) {
      return now_error(404, "operation_not_found", "operation " + op.substr(0, 40) + ": no such operation");
    }
    const std::string m = req.method;

    if (pattern == "/v1/health") {
      return now(200, {{"ok", true}, {"operations_running", ctx.operations->running()}, {"idle_stop_test_override", ctx.idle->test_override()}});
    }
    if (pattern == "/v1/metrics") {
      return with_env(ctx, [&ctx](Env& e) {
        Result<SpaceList> list = e.manager->list();
        Response out;
        out.content_type = "text/plain; version=0.0.4; charset=utf-8";
        out.text = ctx.metrics->render(list ? &*list : nullptr, ctx.operations->running());
        return out;
      });
    }
    if (pattern == "/v1/place/check") return with_env(ctx, [](Env& e) { return answer(e.manager->check()); });
    if (pattern == "/v1/spaces" && m == "GET") return with_env(ctx, [](Env& e) { return answer(e.manager->list()); });
    if (pattern == "/v1/spaces" && m == "POST") {
      Result<json> b = body_object(req, {"name", "memory_bytes", "nano_cpus", "image", "repo", "mode"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      CreateRequest create;
      code::CodeInRequest code;
      if (!get_string(*b, "name", create.name) || !get_string(*b, "image", create.space_image) ||
          !get_string(*b, "repo", code.repo) || !get_string(*b, "mode", code.mode)) {
        return now_error(400, "invalid_argument", "space create: name, image, repo and mode are strings");
      }
      for (const char* k : {"memory_bytes", "nano_cpus"}) {
        if (b->contains(k) && !(*b)[k].is_number_integer()) {
          return now_error(400, "invalid_argument", std::string("space create: ") + k + " is an integer");
        }
      }
      create.memory_bytes = b->value("memory_bytes", std::int64_t{0});
      create.nano_cpus = b->value("nano_cpus", std::int64_t{0});
      if (!code.repo.empty() && code.repo[0] != '/') return now_error(400, "invalid_argument", "space create: repo is an absolute path");
      create.id = random_hex(6);
      const std::string space = create.id;
      const std::string opid = ctx.operations->start("create", space, [&ctx, create, code](const Say& say) mutable -> Result<json> {
        Result<Env> env = ctx.make_env();
        if (!env) return env.error();
        create.progress = [say](std::string_view step) { say(std::string(step)); };
        code.progress = say;
        Result<SpaceCreated> r = code.repo.empty()
                                     ? env->manager->create(create)
                                     : code::create_with_code(*env->manager, create, code);
        if (r) ctx.idle->touch(create.id);
        return as_document(r);
      });
      return accepted(opid, space);
    }
    if (pattern == "/v1/spaces/{id}" && m == "GET") return with_env(ctx, [id](Env& e) { return answer(e.manager->show(id)); });
    if (pattern == "/v1/spaces/{id}" && m == "DELETE") {
      return with_env(ctx, [id](Env& e) { return answer(code::remove_with_refs(*e.manager, id)); });
    }
    if (pattern == "/v1/spaces/{id}/verify") {
      return with_env(ctx, [id](Env& e) {
        SpaceVerified found;
        Result<SpaceVerified> r = e.manager->verify(id, found);
        if (r) return Response{200, to_json(*r)};
        Response out = failure_response(r.error());
        if (!found.id.empty()) {
          out.body["result"] = to_json(found);  // filled once the place answered
        }
        return out;
      });
    }
    if (pattern == "/v1/spaces/{id}/start") {
      return with_env(ctx, [&ctx, id](Env& e) {
        Result<SpaceStarted> r = e.manager->start(id);
        if (r) ctx.idle->touch(id);
        return answer(r);
      });
    }
    if (pattern == "/v1/spaces/{id}/stop") return with_env(ctx, [id](Env& e) { return answer(e.manager->stop(id)); });
    if (pattern == "/v1/spaces/{id}/network") {
      Result<json> b = body_object(req, {"mode", "domains"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      std::string mode;
      std::vector<std::string> domains;
      if (!get_string(*b, "mode", mode) || mode.empty()) return now_error(400, "invalid_argument", "network: mode is allowlist or open");
      if (b->contains("domains")) {
        if (!(*b)["domains"].is_array()) return now_error(400, "invalid_argument", "network: domains is a list of names");
        for (const json& d : (*b)["domains"]) {
          if (!d.is_string()) return now_error(400, "invalid_argument", "network: domains is a list of names");
          domains.push_back(d.get<std::string>());
        }
      }
      return with_env(ctx, [id, mode, domains](Env& e) { return answer(e.manager->network_set(id, mode, domains)); });
    }
    if (pattern == "/v1/spaces/{id}/grants") {
      Result<json> b = body_object(req, {"id", "upstream", "header", "secret",
                                         "unsafe_private_upstream", "provider", "source"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      grants::GrantCli flags;  // the same rules as the CLI's flags (grants/cli.h)
      flags.space = id;
      std::string secret;
      const bool typed = b->contains("secret");
      if (!get_string(*b, "id", flags.grant) || !get_string(*b, "upstream", flags.upstream) ||
          !get_string(*b, "header", flags.header) || !get_string(*b, "provider", flags.provider) ||
          !get_string(*b, "secret", secret) ||
          (b->contains("unsafe_private_upstream") &&
           !(*b)["unsafe_private_upstream"].is_boolean())) {
        return now_error(400, "invalid_argument",
                         "grant add: id, upstream, header, provider and secret are strings");
      }
      flags.unsafe_private_upstream = b->value("unsafe_private_upstream", false);
      if (typed) {
        std::string& held = (*b)["secret"].get_ref<std::string&>();
        explicit_bzero(held.data(), held.size());
      }
      auto refuse = [&](const std::string& why) {
        explicit_bzero(secret.data(), secret.size());
        return now_error(400, "invalid_argument", "grant add " + flags.grant + ": " + why);
      };
      if (b->contains("source")) {
        // {kind: stdin} (the secret member), {kind: env, name} or {kind: helper, argv: [...]}.
        const json& src = (*b)["source"];
        const std::string kind = src.is_object() && src.contains("kind") && src["kind"].is_string()
                                     ? src["kind"].get<std::string>()
                                     : "";
        if (kind == "env" && src.size() == 2 && src.contains("name") && src["name"].is_string() &&
            !typed) {
          flags.env = src["name"].get<std::string>();
        } else if (kind == "helper" && src.size() == 2 && src.contains("argv") &&
                   src["argv"].is_array() && !src["argv"].empty() && !typed) {
          std::vector<std::string> argv;
          for (const json& a : src["argv"]) {
            if (!a.is_string()) return refuse("source.argv is a list of strings");
            argv.push_back(a.get<std::string>());
          }
          flags.helper = grants::helper_command_text(argv);
        } else if (kind == "stdin" && src.size() == 1) {
          flags.secret_stdin = true;
        } else {
          return refuse(
              "source is {kind: stdin} with secret, {kind: env, name} or {kind: helper, argv}");
        }
      }
      if (typed && !flags.secret_stdin && flags.header.empty() && flags.provider.empty()) {
        return refuse("a secret needs the header that carries it");
      }
      if (typed) flags.secret_stdin = true;
      Result<GrantRequest> request = grants::request_from_flags(flags);
      if (!request) {
        explicit_bzero(secret.data(), secret.size());
        return now(status_of(request.error().code),
                   error_body(code_word(request.error().code), request.error().message));
      }
      if (request->source.kind == grants::SourceKind::kNone && typed) {
        return refuse("a secret needs the header that carries it");
      }
      // The secret lives in this job only; Manager::grant_add wipes every copy it makes.
      auto held = std::make_shared<grants::Token>();
      held->secret = std::move(secret);
      // A moved-from string may keep its bytes (the small-string buffer): wiped all the same.
      explicit_bzero(secret.data(), secret.size());  // NOLINT(bugprone-use-after-move)
      return with_env(ctx, [id, request = *request, held](Env& e) {
        return answer(e.manager->grant_add(id, request, std::move(*held)));
      });
    }
    if (pattern == "/v1/spaces/{id}/grants/refresh") {
      Result<json> b = body_object(req, {"grant"});
      std::string grant;
      if (!b || !get_string(*b, "grant", grant)) {
        return now_error(400, "invalid_argument", "grant refresh: grant is a string");
      }
      return with_env(ctx,
                      [id, grant](Env& e) { return answer(e.manager->grant_refresh(id, grant)); });
    }
    if (pattern == "/v1/spaces/{id}/window-key") return with_env(ctx, [id](Env& e) { return answer(e.manager->window_key(id)); });
    if (pattern == "/v1/spaces/{id}/journal") {
      return with_env(ctx, [id](Env& e) { return answer(e.manager->gatekeeper_journal(id)); });
    }
    if (pattern == "/v1/spaces/{id}/policy") {
      return with_env(ctx, [id](Env& e) { return answer(e.manager->gatekeeper_policy(id)); });
    }
    if (pattern == "/v1/spaces/{id}/idle-stop" && m == "GET") {
      return with_env(ctx, [&ctx, id](Env&) {
        Result<SpaceRecord> record = read_record(ctx.state, id);
        if (!record) return failure_response(record.error());
        Result<IdleSetting> standard = read_default_idle(ctx.state);
        const IdleSetting s = record->idle_stop.set ? IdleSetting{record->idle_stop.enabled, record->idle_stop.hours}
                                                    : (standard ? *standard : kDefaultIdleSetting);
        return Response{200, to_json(SpaceIdleStop{id, s, !record->idle_stop.set})};
      });
    }
    if (pattern == "/v1/spaces/{id}/idle-stop" && m == "PUT") {
      Result<IdleSetting> s = parse_idle_setting(json::parse(req.body, nullptr, false));
      if (!s) return now(400, error_body("invalid_idle_stop", s.error().message));
      const IdleSetting setting = *s;
      return with_env(ctx, [&ctx, id, setting](Env&) {
        Result<SpaceLock> lock = SpaceLock::acquire(ctx.state, id, "idle-stop set");
        if (!lock) return failure_response(lock.error());
        Result<SpaceRecord> record = read_record(ctx.state, id);
        if (!record) return failure_response(record.error());
        record->idle_stop = {true, setting.enabled, setting.hours};
        if (Result<void> w = write_record(ctx.state, id, *record); !w) return failure_response(w.error());
        return Response{200, to_json(SpaceIdleStop{id, setting, false})};
      });
    }
    if (pattern == "/v1/spaces/{id}/code/in") {
      Result<json> b = body_object(req, {"repo", "mode", "timeout_seconds"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      code::CodeInRequest code;
      code.id = id;
      if (!get_string(*b, "repo", code.repo) || code.repo.empty() || code.repo[0] != '/' ||
          !get_string(*b, "mode", code.mode)) {
        return now_error(400, "invalid_argument", "code in: repo is an absolute path, mode uncommitted or clean");
      }
      if (b->contains("timeout_seconds")) {
        if (!(*b)["timeout_seconds"].is_number_integer() || (*b)["timeout_seconds"] < 1 ||
            (*b)["timeout_seconds"] > 86400) {
          return now_error(400, "invalid_argument", "code in: timeout_seconds is 1 to 86400");
        }
        code.timeout_seconds = (*b)["timeout_seconds"].get<int>();
      }
      return accepted(ctx.operations->start("code-in", id, [&ctx, code](const Say& say) mutable -> Result<json> {
                        Result<Env> env = ctx.make_env();
                        if (!env) return env.error();
                        code.progress = say;
                        ctx.idle->touch(code.id);
                        Result<CodeBrought> r = code::code_in(*env->manager, code);
                        ctx.idle->touch(code.id);
                        return as_document(r);
                      }),
                      id);
    }
    if (pattern == "/v1/spaces/{id}/code/history") {
      return accepted(ctx.operations->start("code-history", id, [&ctx, id](const Say& say) -> Result<json> {
                        Result<Env> env = ctx.make_env();
                        if (!env) return env.error();
                        ctx.idle->touch(id);
                        Result<code::CodeHistoryDone> r =
                            code::code_history(*env->manager, id, 1800, say);
                        ctx.idle->touch(id);
                        return as_document(r);
                      }),
                      id);
    }
    if (pattern == "/v1/spaces/{id}/code/forget") {
      return with_env(ctx, [id](Env& e) { return answer(code::code_forget(*e.manager, id)); });
    }
    if (pattern == "/v1/spaces/{id}/code/out") {
      Result<json> b = body_object(req, {"timeout_seconds"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      code::CodeOutRequest out;
      out.id = id;
      if (b->contains("timeout_seconds")) {
        if (!(*b)["timeout_seconds"].is_number_integer() || (*b)["timeout_seconds"] < 1 ||
            (*b)["timeout_seconds"] > 86400) {
          return now_error(400, "invalid_argument", "code out: timeout_seconds is 1 to 86400");
        }
        out.timeout_seconds = (*b)["timeout_seconds"].get<int>();
      }
      return accepted(ctx.operations->start("code-out", id,
                                            [&ctx, out](const Say& say) mutable -> Result<json> {
                                              Result<Env> env = ctx.make_env();
                                              if (!env) return env.error();
                                              out.progress = say;
                                              ctx.idle->touch(out.id);
                                              Result<code::CodeOutDone> r =
                                                  code::code_out(*env->manager, out);
                                              ctx.idle->touch(out.id);
                                              return as_document(r);
                                            }),
                      id);
    }
    if (pattern == "/v1/spaces/{id}/apply") {
      Result<json> b = body_object(req, {"as", "branch", "remove_afterwards"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      code::ApplyRequest apply;
      apply.id = id;
      std::string as;
      if (!get_string(*b, "as", as) || (as != "branch" && as != "changes") ||
          !get_string(*b, "branch", apply.branch) ||
          (b->contains("remove_afterwards") && !(*b)["remove_afterwards"].is_boolean())) {
        return now_error(
            400, "invalid_argument",
            "apply: as is branch or changes, branch a string, remove_afterwards true or false");
      }
      apply.as_branch = as == "branch";
      apply.as_changes = as == "changes";
      apply.remove_afterwards = b->value("remove_afterwards", false);
      if (apply.as_branch && (apply.branch.empty() || apply.remove_afterwards)) {
        return now_error(
            400, "invalid_argument",
            "apply " + id + ": as branch needs a branch name and takes no remove_afterwards");
      }
      if (apply.as_changes && b->contains("branch")) {
        return now_error(400, "invalid_argument", "apply " + id + ": as changes takes no branch");
      }
      return accepted(ctx.operations->start("apply", id,
                                            [&ctx, apply](const Say& say) mutable -> Result<json> {
                                              Result<Env> env = ctx.make_env();
                                              if (!env) return env.error();
                                              apply.progress = say;
                                              return as_document(
                                                  code::apply_work(*env->manager, apply));
                                            }),
                      id);
    }
    if (pattern == "/v1/spaces/{id}/apply-state") {
      return with_env(ctx, [id](Env& e) { return answer(code::apply_state(*e.manager, id)); });
    }
    if (pattern == "/v1/spaces/{id}/escape-test") {
      Result<json> b = body_object(req, {"only", "exhaustion"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      EscapeOptions eo;
      eo.space_id = id;
      eo.state_dir = ctx.state;
      eo.place_name = ctx.place_name;
      eo.binary = ctx.escape_binary;
      eo.test_gatekeeper_image_file = ctx.escape_test_image_file;
      eo.format = escape::Format::kJson;
      eo.output = "";
      if (b->contains("exhaustion")) {
        if (!(*b)["exhaustion"].is_boolean()) return now_error(400, "invalid_argument", "escape-test: exhaustion is true or false");
        eo.exhaustion = (*b)["exhaustion"].get<bool>();
      }
      if (b->contains("only")) {
        if (!(*b)["only"].is_array()) return now_error(400, "invalid_argument", "escape-test: only is a list of case id globs");
        for (const json& g : (*b)["only"]) {
          if (!g.is_string()) return now_error(400, "invalid_argument", "escape-test: only is a list of case id globs");
          eo.only.push_back(g.get<std::string>());
        }
      }
      return accepted(ctx.operations->start("escape-test", id, [&ctx, eo](const Say& say) -> Result<json> {
                        // Like the CLI: the run changes the gatekeeper and puts it back, under the space's lock.
                        Result<SpaceLock> lock = SpaceLock::acquire(ctx.state, eo.space_id, "escape-test");
                        if (!lock) return lock.error();
                        ctx.idle->touch(eo.space_id);
                        say("running");
                        EscapeOptions run = eo;
                        run.progress =
                            say;  // the steps and one event per case as the suite reports it
                        Result<EscapeReport> r =
                            run_escape_test(builtin_registry(), ctx.place_options, run);
                        ctx.idle->touch(eo.space_id);
                        if (!r) return r.error();
                        json report = json::parse(r->text, nullptr, false);
                        return json{{"id", eo.space_id}, {"exit_code", r->exit_code}, {"report", report.is_discarded() ? json(r->text) : report}};
                      }),
                      id);
    }
    if (pattern == "/v1/code/files") {
      Result<json> b = body_object(req, {"repo"});
      std::string repo;
      if (!b || !get_string(*b, "repo", repo) || repo.empty() || repo[0] != '/') {
        return now_error(400, "invalid_argument", "code files: repo is an absolute path");
      }
      return later([repo] { return answer(code::code_files(repo)); });
    }
    if (pattern == "/v1/idle-stop" && m == "GET") {
      return later([&ctx] {
        Result<IdleSetting> s = read_default_idle(ctx.state);
        if (!s) return failure_response(s.error());
        return Response{200, idle_setting_json(*s)};
      });
    }
    if (pattern == "/v1/idle-stop" && m == "PUT") {
      Result<IdleSetting> s = parse_idle_setting(json::parse(req.body, nullptr, false));
      if (!s) return now(400, error_body("invalid_idle_stop", s.error().message));
      const IdleSetting setting = *s;
      return later([&ctx, setting] {
        if (Result<void> w = write_default_idle(ctx.state, setting); !w) return failure_response(w.error());
        return Response{200, idle_setting_json(setting)};
      });
    }
    if (pattern == "/v1/sweep") {
      Result<json> b = body_object(req, {"grace_seconds"});
      if (!b) return now(400, error_body("invalid_argument", b.error().message));
      std::int64_t grace = kDefaultSweepGrace.count();
      if (b->contains("grace_seconds")) {
        if (!(*b)["grace_seconds"].is_number_integer() || (*b)["grace_seconds"] < 0 ||
            (*b)["grace_seconds"] > 31536000) {
          return now_error(400, "invalid_argument", "sweep: grace_seconds is 0 to 31536000");
        }
        grace = (*b)["grace_seconds"].get<std::int64_t>();
      }
      return with_env(ctx, [grace](Env& e) {
        SweepOptions so;
        so.grace = std::chrono::seconds(grace);
        so.remove_refs = code::forget_refs;
        return answer(sweep(*e.manager, so));
      });
    }
    if (pattern == "/v1/operations") return now(200, {{"operations", ctx.operations->list()}});
    if (pattern == "/v1/operations/{op}" && m == "GET") {
      json d = ctx.operations->describe(op);
      if (d.is_null()) return now_error(404, "operation_not_found", "operation " + op + ": no such operation");
      return now(200, d);
    }
    if (pattern == "/v1/operations/{op}" && m == "DELETE") {
      json d = ctx.operations->describe(op);
      if (d.is_null()) return now_error(404, "operation_not_found", "operation " + op + ": no such operation");
      if (!ctx.operations->dismiss(op)) return now_error(409, "operation_running", "operation " + op + ": still running");
      return now(200, {{"operation", op}, {"dismissed", true}});
    }
    if (pattern == "/v1/operations/{op}/events") {
      if (ctx.operations->describe(op).is_null()) return now_error(404, "operation_not_found", "operation " + op + ": no such operation");
      Reply r;
      r.kind = Reply::Kind::kEvents;
      r.operation = op;
      return r;
    }
    return now_error(500, "internal", "route " + pattern + ": no handler");
  };
}

}  // namespace controller::serve
