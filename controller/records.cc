#include "controller/records.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/ids.h"
#include "controller/record_fields.h"
#include "controller/spec.h"
#include "controller/subnets.h"

namespace controller {

using nlohmann::json;

namespace {

Failure io_error(const std::string& op, const std::string& path) {
  return fail(Code::kRecordUnreadable, op + " " + path + ": " + std::strerror(errno));
}

Result<void> check_private(const struct stat& st, const std::string& path, bool directory) {
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return fail(Code::kRecordUnreadable, path + ": not a " + std::string(directory ? "directory" : "regular file") + " (a symlink is refused)");
  }
  if (st.st_uid != geteuid()) return fail(Code::kRecordUnreadable, path + ": owned by uid " + std::to_string(st.st_uid) + ", not this user");
  if ((st.st_mode & 022) != 0) return fail(Code::kRecordUnreadable, path + ": writable by group or others");
  return {};
}

// Opens a file of the state directory without following a symlink and checks its owner and mode.
// Returns -1 with errno ENOENT when it does not exist.
Result<int> open_private(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    return io_error("open", path);
  }
  struct stat st{};
  if (fstat(fd, &st) != 0) {
    const Failure f = io_error("fstat", path);
    close(fd);
    return f;
  }
  if (Result<void> ok = check_private(st, path, false); !ok) {
    close(fd);
    return ok.error();
  }
  return fd;
}

Result<std::string> read_fd(int fd, const std::string& path, std::size_t cap) {
  std::string text;
  char buffer[8192];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("read", path);
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > cap) return fail(Code::kRecordUnreadable, "read " + path + ": larger than " + std::to_string(cap) + " bytes");
  }
  return text;
}

// Missing: nullopt-like empty Result value with `found` false.
struct PrivateText {
  bool found = false;
  std::string text;
};
Result<PrivateText> read_private(const std::string& path, std::size_t cap) {
  Result<int> fd = open_private(path);
  if (!fd) return fd.error();
  if (*fd < 0) return PrivateText{};
  Result<std::string> text = read_fd(*fd, path, cap);
  close(*fd);
  if (!text) return text.error();
  return PrivateText{true, std::move(*text)};
}

Result<void> write_private(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  const std::string tmp = dir + "/." + name + "." + random_hex(8) + ".tmp";
  // O_EXCL with O_NOFOLLOW: a fresh file, never one someone planted under that name.
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return io_error("open", tmp);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Failure f = io_error("write", tmp);
      close(fd);
      unlink(tmp.c_str());
      return f;
    }
    done += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) {
    const Failure f = io_error("fsync", tmp);
    close(fd);
    unlink(tmp.c_str());
    return f;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const Failure f = io_error("rename", tmp);
    unlink(tmp.c_str());
    return f;
  }
  // The rename itself is durable only once the directory is.
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dfd < 0) return io_error("open", dir);
  const int synced = fsync(dfd);
  close(dfd);
  if (synced != 0) return io_error("fsync", dir);
  return {};
}

Result<std::string> record_dir(const std::string& dir, const std::string& id) {
  // The id becomes part of a path: checked before anything is built from it.
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  if (Result<void> r = ensure_private_dir(dir); !r) return r.error();
  const std::string spaces = dir + "/spaces";
  if (Result<void> r = ensure_private_dir(spaces); !r) return r.error();
  return spaces;
}

bool is_string_array(const json& j, std::size_t max) {
  if (!j.is_array() || j.size() > max) return false;
  for (const json& x : j) {
    if (!x.is_string()) return false;
  }
  return true;
}

// {id, upstream, header, secret, unsafe_private_upstream?, provider?, source?, expires_at?,
// obtained_at?}; source is {kind: stdin} | {kind: env, name} | {kind: helper, argv}. Nothing else,
// and never a member that could hold a value.
Result<GrantRecord> parse_grant_record(const json& g) {
  auto bad = [](const std::string& why) { return fail(Code::kRecordUnreadable, "a grant " + why); };
  if (!g.is_object()) return bad("is not an object");
  for (auto it = g.begin(); it != g.end(); ++it) {
    const std::string& k = it.key();
    if (k != "id" && k != "upstream" && k != "header" && k != "secret" &&
        k != "unsafe_private_upstream" && k != "provider" && k != "source" && k != "expires_at" &&
        k != "obtained_at") {
      return bad("has an unknown member " + k);
    }
  }
  if (!g.contains("id") || !g["id"].is_string() || !g.contains("upstream") ||
      !g["upstream"].is_string() || !g.contains("header") || !g["header"].is_string() ||
      !g.contains("secret") || !g["secret"].is_boolean()) {
    return bad("is not {id, upstream, header, secret, …}");
  }
  for (const char* k : {"unsafe_private_upstream"}) {
    if (g.contains(k) && !g[k].is_boolean()) return bad(std::string(k) + " is not a boolean");
  }
  for (const char* k : {"provider", "expires_at", "obtained_at"}) {
    if (g.contains(k) && !g[k].is_string()) return bad(std::string(k) + " is not a string");
  }
  GrantRecord r;
  r.id = g["id"].get<std::string>();
  r.upstream = g["upstream"].get<std::string>();
  r.header = g["header"].get<std::string>();
  r.has_secret = g["secret"].get<bool>();
  r.unsafe_private_upstream = g.value("unsafe_private_upstream", false);
  r.provider = g.value("provider", "");
  r.expires_at = g.value("expires_at", "");
  r.obtained_at = g.value("obtained_at", "");
  for (const std::string* t : {&r.expires_at, &r.obtained_at}) {
    if (!t->empty() && !grants::parse_rfc3339(*t)) return bad("time " + *t + " is not RFC 3339");
  }
  r.source.kind = r.has_secret ? grants::SourceKind::kStdin : grants::SourceKind::kNone;
  if (g.contains("source")) {
    const json& s = g["source"];
    if (!s.is_object() || !s.contains("kind") || !s["kind"].is_string()) {
      return bad("source is not {kind, …}");
    }
    const std::string kind = s["kind"].get<std::string>();
    if (kind == "stdin" && s.size() == 1) {
      r.source.kind = grants::SourceKind::kStdin;
    } else if (kind == "env" && s.size() == 2 && s.contains("name") && s["name"].is_string() &&
               grants::is_env_name(s["name"].get<std::string>())) {
      r.source.kind = grants::SourceKind::kEnv;
      r.source.env = s["name"].get<std::string>();
    } else if (kind == "helper" && s.size() == 2 && s.contains("argv") &&
               is_string_array(s["argv"], grants::kMaxHelperArgs) && !s["argv"].empty()) {
      r.source.kind = grants::SourceKind::kHelper;
      for (const json& a : s["argv"]) {
        if (a.get<std::string>().size() > grants::kMaxHelperArgBytes) {
          return bad("source.argv holds an argument over 4096 bytes");
        }
        r.source.helper.push_back(a.get<std::string>());
      }
      if (r.source.helper[0].empty()) return bad("source.argv names no program");
    } else {
      return bad("source is not {kind: stdin} | {kind: env, name} | {kind: helper, argv}");
    }
    if (!r.has_secret) return bad("without a secret has a source");
  }
  return r;
}

json grant_record_json(const GrantRecord& g) {
  json out = {{"id", g.id},
              {"upstream", g.upstream},
              {"header", g.header},
              {"secret", g.has_secret},
              {"unsafe_private_upstream", g.unsafe_private_upstream}};
  if (!g.provider.empty()) out["provider"] = g.provider;
  switch (g.source.kind) {
    case grants::SourceKind::kNone:
      break;
    case grants::SourceKind::kStdin:
      out["source"] = {{"kind", "stdin"}};
      break;
    case grants::SourceKind::kEnv:
      out["source"] = {{"kind", "env"}, {"name", g.source.env}};
      break;
    case grants::SourceKind::kHelper:
      out["source"] = {{"kind", "helper"}, {"argv", g.source.helper}};
      break;
  }
  if (!g.expires_at.empty()) out["expires_at"] = g.expires_at;
  if (!g.obtained_at.empty()) out["obtained_at"] = g.obtained_at;
  return out;
}

}  // namespace

std::string now_utc_iso() {
  char buffer[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

Result<std::string> state_dir(const std::string& override_dir) {
  if (!override_dir.empty()) return override_dir;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/spacectl";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') {
    return fail(Code::kRecordUnreadable, "state directory: HOME is not set to an absolute path and XDG_STATE_HOME is not set; pass --state-dir");
  }
  return std::string(home) + "/.local/state/spacectl";
}

Result<void> ensure_private_dir(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    // A relative --state-dir is taken as given; only absolute paths have parents we walk.
    if (path.empty()) return fail(Code::kRecordUnreadable, "state directory: empty path");
  }
  struct stat st{};
  if (lstat(path.c_str(), &st) == 0) return check_private(st, path, true);
  if (errno != ENOENT) return io_error("lstat", path);
  // Parents are made as needed (0700) but not judged: only the directory we own is.
  for (std::size_t i = 1; i < path.size(); ++i) {
    if (path[i] != '/') continue;
    const std::string parent = path.substr(0, i);
    if (mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) return io_error("mkdir", parent);
  }
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return io_error("mkdir", path);
  if (lstat(path.c_str(), &st) != 0) return io_error("lstat", path);
  return check_private(st, path, true);
}

Result<std::string> load_or_make_owner(const std::string& dir) {
  if (Result<void> r = ensure_private_dir(dir); !r) return r.error();
  const std::string path = dir + "/owner";
  Result<PrivateText> existing = read_private(path, 128);
  if (!existing) return existing.error();
  if (existing->found) {
    std::string owner = existing->text;
    if (!owner.empty() && owner.back() == '\n') owner.pop_back();
    if (owner.size() < 16 || !is_owner(owner)) {
      return fail(Code::kRecordUnreadable, "owner file " + path + ": not 16 to 64 letters or digits");
    }
    return owner;
  }
  const std::string owner = random_hex(12);
  if (Result<void> r = write_private(dir, "owner", owner + "\n"); !r) return r.error();
  return owner;
}

Result<SpaceRecord> parse_record(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) { return fail(Code::kRecordUnreadable, "record " + what + ": " + why); };
  // A member named twice (json keeps the last one silently) or a deep nesting is no record we
  // wrote.
  std::vector<std::set<std::string>> keys;
  bool duplicate = false, too_deep = false;
  const json::parser_callback_t strict = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > static_cast<int>(kMaxRecordDepth)) too_deep = true;
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() &&
            !keys.back().insert(parsed.get<std::string>()).second) {
          duplicate = true;
        }
        break;
      case json::parse_event_t::array_start:
      case json::parse_event_t::array_end:
      case json::parse_event_t::value:
        break;
    }
    return !too_deep;
  };
  const json doc = json::parse(text, strict, false);
  if (too_deep) return bad("nested deeper than " + std::to_string(kMaxRecordDepth));
  if (duplicate) return bad("a member is named twice");
  if (doc.is_discarded() || !doc.is_object()) return bad("not a JSON object");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "version" && it.key() != "mode" && it.key() != "domains" &&
        it.key() != "grants" && it.key() != "code" && it.key() != "out" && it.key() != "creation" &&
        it.key() != "idle_stop" && it.key() != "stopped_idle" && it.key() != "subnets") {
      return bad("unknown member " + it.key());
    }
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<std::int64_t>() != 1) return bad("version is not 1");
  if (!doc.contains("mode") || !doc["mode"].is_string()) return bad("no mode");
  SpaceRecord record;
  record.mode = doc["mode"].get<std::string>();
  if (record.mode != "allowlist" && record.mode != "open") return bad("mode is neither allowlist nor open");
  if (!doc.contains("domains") || !is_string_array(doc["domains"], kMaxRecordDomains)) {
    return bad("domains is not a list of at most " + std::to_string(kMaxRecordDomains) + " names");
  }
  for (const json& d : doc["domains"]) record.domains.push_back(d.get<std::string>());
  if (!doc.contains("grants") || !doc["grants"].is_array() || doc["grants"].size() > kMaxRecordGrants) return bad("grants is not a list of at most 100");
  for (const json& g : doc["grants"]) {
    Result<GrantRecord> grant = parse_grant_record(g);
    if (!grant) return bad(grant.error().message);
    record.grants.push_back(std::move(*grant));
  }
  if (doc.contains("code")) {
    // What code in brought (controller/code/): five strings, nothing else.
    const json& c = doc["code"];
    if (!c.is_object() || c.size() != 5) return bad("code is not {repository, space_path, project_path, base, history}");
    for (const char* k : {"repository", "space_path", "project_path", "base", "history"}) {
      if (!c.contains(k) || !c[k].is_string()) return bad(std::string("code.") + k + " is not a string");
    }
    record.code = {c["repository"].get<std::string>(), c["space_path"].get<std::string>(), c["project_path"].get<std::string>(),
                   c["base"].get<std::string>(), c["history"].get<std::string>()};
  }
  if (doc.contains("out")) {
    // What code out brought: three strings and two counts, nothing else.
    const json& o = doc["out"];
    if (!o.is_object() || o.size() != 5) return bad("out is not {result, start, space_head, changed_paths, changed_bytes}");
    for (const char* k : {"result", "start", "space_head"}) {
      if (!o.contains(k) || !o[k].is_string()) return bad(std::string("out.") + k + " is not a string");
    }
    for (const char* k : {"changed_paths", "changed_bytes"}) {
      if (!o.contains(k) || !o[k].is_number_unsigned()) return bad(std::string("out.") + k + " is not a count");
    }
    record.out = {o["result"].get<std::string>(), o["start"].get<std::string>(), o["space_head"].get<std::string>(),
                  o["changed_paths"].get<std::uint64_t>(), o["changed_bytes"].get<std::uint64_t>()};
  }
  if (doc.contains("creation")) {
    const json& c = doc["creation"];
    if (!c.is_object() || c.size() != 5) return bad("creation is not {state, step, started, failure_code, failure_message}");
    for (const char* k : {"state", "step", "started", "failure_code", "failure_message"}) {
      if (!c.contains(k) || !c[k].is_string()) return bad(std::string("creation.") + k + " is not a string");
    }
    record.creation = {c["state"].get<std::string>(), c["step"].get<std::string>(), c["started"].get<std::string>(),
                       c["failure_code"].get<std::string>(), c["failure_message"].get<std::string>()};
    if (record.creation.state != "preparing" && record.creation.state != "failed") return bad("creation.state is neither preparing nor failed");
  }
  if (doc.contains("idle_stop")) {
    const json& i = doc["idle_stop"];
    if (!i.is_object() || i.size() != 2 || !i.contains("enabled") || !i["enabled"].is_boolean() ||
        !i.contains("hours") || !i["hours"].is_number_integer()) {
      return bad("idle_stop is not {enabled, hours}");
    }
    const std::int64_t hours = i["hours"].get<std::int64_t>();
    if (hours < kMinIdleStopHours || hours > kMaxIdleStopHours) return bad("idle_stop.hours is outside 1 to 168");
    record.idle_stop = {true, i["enabled"].get<bool>(), static_cast<int>(hours)};
  }
  if (doc.contains("subnets")) {
    const json& n = doc["subnets"];
    if (!n.is_object() || n.size() != 2 || !n.contains("inner") || !n.contains("outer") ||
        !n["inner"].is_string() || !n["outer"].is_string() ||
        !parse_ipv4_net(n["inner"].get<std::string>()) ||
        !parse_ipv4_net(n["outer"].get<std::string>())) {
      return bad("subnets is not {inner, outer} of two IPv4 networks");
    }
    record.subnets = {n["inner"].get<std::string>(), n["outer"].get<std::string>()};
  }
  if (doc.contains("stopped_idle")) {
    if (!doc["stopped_idle"].is_boolean()) return bad("stopped_idle is not a boolean");
    record.stopped_idle = doc["stopped_idle"].get<bool>();
  }
  if (Result<void> fields = check_record_fields(record, what); !fields) return fields.error();
  return record;
}

Result<SpaceRecord> read_record(const std::string& dir, const std::string& id) {
  Result<std::string> spaces = record_dir(dir, id);
  if (!spaces) return spaces.error();
  const std::string path = *spaces + "/" + id + ".json";
  Result<PrivateText> text = read_private(path, kMaxRecordBytes);
  if (!text) return text.error();
  if (!text->found) return SpaceRecord{};
  return parse_record(text->text, path);
}

Result<bool> record_exists(const std::string& dir, const std::string& id) {
  Result<std::string> spaces = record_dir(dir, id);
  if (!spaces) return spaces.error();
  Result<PrivateText> text = read_private(*spaces + "/" + id + ".json", kMaxRecordBytes);
  if (!text) return text.error();
  return text->found;
}

Result<std::vector<std::string>> record_ids(const std::string& dir) {
  if (Result<void> r = ensure_private_dir(dir); !r) return r.error();
  const std::string spaces = dir + "/spaces";
  if (Result<void> r = ensure_private_dir(spaces); !r) return r.error();
  DIR* d = opendir(spaces.c_str());
  if (d == nullptr) return io_error("opendir", spaces);
  std::vector<std::string> out;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() == 17 && name.ends_with(".json") && is_space_id(name.substr(0, 12))) out.push_back(name.substr(0, 12));
  }
  closedir(d);
  return out;
}

std::string record_text(const SpaceRecord& record) {
  json grants = json::array();
  for (const GrantRecord& g : record.grants) grants.push_back(grant_record_json(g));
  json doc = {{"version", 1}, {"mode", record.mode}, {"domains", record.domains}, {"grants", grants}};
  if (!record.code.repository.empty()) {
    doc["code"] = {{"repository", record.code.repository}, {"space_path", record.code.space_path},
                   {"project_path", record.code.project_path}, {"base", record.code.base}, {"history", record.code.history}};
  }
  if (!record.out.result.empty()) {
    doc["out"] = {{"result", record.out.result}, {"start", record.out.start}, {"space_head", record.out.space_head},
                  {"changed_paths", record.out.changed_paths}, {"changed_bytes", record.out.changed_bytes}};
  }
  if (!record.creation.state.empty()) {
    // A failure message quotes the engine's stderr: cut at a character boundary to what a read
    // accepts. Invalid bytes become U+FFFD first, so the cut is measured on what is stored.
    std::string message = json::parse(json(record.creation.failure_message)
                                          .dump(-1, ' ', false, json::error_handler_t::replace),
                                      nullptr, false)
                              .get<std::string>();
    if (message.size() > kMaxRecordMessageBytes) {
      std::size_t cut = kMaxRecordMessageBytes;
      while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xc0) == 0x80) --cut;
      message.resize(cut);
    }
    doc["creation"] = {{"state", record.creation.state},
                       {"step", record.creation.step},
                       {"started", record.creation.started},
                       {"failure_code", record.creation.failure_code},
                       {"failure_message", message}};
  }
  if (record.stopped_idle) doc["stopped_idle"] = true;
  if (!record.subnets.inner.empty()) {
    doc["subnets"] = {{"inner", record.subnets.inner}, {"outer", record.subnets.outer}};
  }
  if (record.idle_stop.set) doc["idle_stop"] = {{"enabled", record.idle_stop.enabled}, {"hours", record.idle_stop.hours}};
  return doc.dump(2, ' ', true, json::error_handler_t::replace) + "\n";
}

Result<void> write_record(const std::string& dir, const std::string& id,
                          const SpaceRecord& record) {
  Result<std::string> spaces = record_dir(dir, id);
  if (!spaces) return spaces.error();
  return write_private(*spaces, id + ".json", record_text(record));
}

Result<std::optional<std::string>> read_state_file(const std::string& dir, std::string_view name,
                                                   std::size_t cap) {
  Result<PrivateText> text = read_private(dir + "/" + std::string(name), cap);
  if (!text) return text.error();
  if (!text->found) return std::optional<std::string>();
  return std::optional<std::string>(std::move(text->text));
}

Result<void> write_state_file(const std::string& dir, std::string_view name,
                              const std::string& text) {
  if (Result<void> d = ensure_private_dir(dir); !d) return d.error();
  return write_private(dir, std::string(name), text);
}

Result<void> remove_record(const std::string& dir, const std::string& id) {
  Result<std::string> spaces = record_dir(dir, id);
  if (!spaces) return spaces.error();
  const std::string path = *spaces + "/" + id + ".json";
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return io_error("unlink", path);
  return {};
}

Result<SpaceLock> SpaceLock::acquire(const std::string& dir, const std::string& id, const std::string& action) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  if (Result<void> r = ensure_private_dir(dir); !r) return r.error();
  const std::string locks = dir + "/locks";
  if (Result<void> r = ensure_private_dir(locks); !r) return r.error();
  const std::string path = locks + "/" + id + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return io_error("open", path);
  struct stat st{};
  if (fstat(fd, &st) != 0 || !check_private(st, path, false)) {
    close(fd);
    return fail(Code::kRecordUnreadable, "lock " + path + ": not a private regular file of this user");
  }
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      const Failure f = io_error("flock", path);
      close(fd);
      return f;
    }
    // Who holds it, as the holder wrote it (bounded, shown as text).
    char note[128] = {};
    const ssize_t n = pread(fd, note, sizeof note - 1, 0);
    close(fd);
    std::string holder = n > 0 ? std::string(note, static_cast<std::size_t>(n)) : std::string();
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    for (char& c : holder) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    return fail(Code::kSpaceBusy, action + " " + id + ": the space is busy" +
                                      (holder.empty() ? std::string() : " (process " + holder + ")") + "; try again when it is done");
  }
  const std::string note = std::to_string(getpid()) + " " + action + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, note.data(), note.size(), 0) != static_cast<ssize_t>(note.size())) {
    // The note only names the holder; the lock itself is held.
  }
  return SpaceLock(fd);
}

bool SpaceLock::is_held(const std::string& dir, const std::string& id) {
  if (!is_space_id(id)) return false;
  // Read from /proc/locks, never by trying the lock: a probe that took it for a moment would turn
  // a real action away as busy.
  struct stat st{};
  if (lstat((dir + "/locks/" + id + ".lock").c_str(), &st) != 0) return false;
  char want[64];
  std::snprintf(want, sizeof want, "%02x:%02x:%llu ", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  const int fd = open("/proc/locks", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Result<std::string> text = read_fd(fd, "/proc/locks", 16u << 20);
  close(fd);
  if (!text) return false;
  std::size_t start = 0;
  while (start < text->size()) {
    std::size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::string_view line(text->data() + start, end - start);
    if (line.find(" FLOCK ") != std::string_view::npos &&
        line.find(" -> ") == std::string_view::npos && line.find(want) != std::string_view::npos) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

SpaceLock::~SpaceLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace controller
