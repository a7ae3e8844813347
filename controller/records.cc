#include "controller/records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "controller/docker_place.h"

namespace controller {

using nlohmann::json;

namespace {

Result<void> make_dirs(const std::string& path) {
  std::string partial;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      partial = path.substr(0, i);
      if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
        return fail(Code::kRecordUnreadable, "mkdir " + partial + ": " + std::strerror(errno));
    }
  }
  return {};
}

Result<void> write_private(const std::string& path, const std::string& text) {
  const std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(Code::kRecordUnreadable, "open " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      unlink(tmp.c_str());
      return fail(Code::kRecordUnreadable, "write " + tmp + ": " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  fsync(fd);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return fail(Code::kRecordUnreadable, "rename " + tmp + ": " + std::strerror(errno));
  }
  return {};
}

}  // namespace

std::string state_dir(const std::string& override_dir) {
  if (!override_dir.empty()) return override_dir;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/spacectl";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.local/state/spacectl";
}

Result<std::string> load_or_make_owner(const std::string& dir) {
  if (Result<void> r = make_dirs(dir); !r) return r.error();
  const std::string path = dir + "/owner";
  Result<std::string> existing = read_small_file(path, 128);
  if (existing) {
    std::string owner = *existing;
    while (!owner.empty() && owner.back() == '\n') owner.pop_back();
    if (owner.size() < 16 || !is_owner(owner))
      return fail(Code::kRecordUnreadable, "owner file " + path + ": not 16 to 64 letters or digits");
    return owner;
  }
  const std::string owner = random_hex(12);
  if (Result<void> r = write_private(path, owner + "\n"); !r) return r.error();
  return owner;
}

Result<SpaceRecord> read_record(const std::string& dir, const std::string& id) {
  const std::string path = dir + "/spaces/" + id + ".json";
  if (access(path.c_str(), F_OK) != 0) return SpaceRecord{};
  Result<std::string> text = read_small_file(path, 1u << 20);
  if (!text) return fail(Code::kRecordUnreadable, "record " + path + ": cannot read");
  const json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail(Code::kRecordUnreadable, "record " + path + ": not JSON");
  SpaceRecord record;
  record.mode = doc.value("mode", "allowlist");
  if (doc.contains("domains") && doc["domains"].is_array())
    for (const json& d : doc["domains"])
      if (d.is_string()) record.domains.push_back(d.get<std::string>());
  if (doc.contains("grants") && doc["grants"].is_array())
    for (const json& g : doc["grants"])
      if (g.is_object())
        record.grants.push_back({g.value("id", ""), g.value("upstream", ""), g.value("header", ""), g.value("secret", false),
                                 g.value("unsafe_private_upstream", false)});
  if (doc.contains("code") && doc["code"].is_object()) {
    const json& c = doc["code"];
    record.code = {c.value("repository", ""), c.value("space_path", ""), c.value("project_path", ""), c.value("base", ""),
                   c.value("history", "pending")};
  }
  return record;
}

Result<void> write_record(const std::string& dir, const std::string& id, const SpaceRecord& record) {
  if (Result<void> r = make_dirs(dir + "/spaces"); !r) return r;
  json grants = json::array();
  for (const GrantRecord& g : record.grants)
    grants.push_back({{"id", g.id}, {"upstream", g.upstream}, {"header", g.header}, {"secret", g.has_secret},
                      {"unsafe_private_upstream", g.unsafe_private_upstream}});
  json doc = {{"version", 1}, {"mode", record.mode}, {"domains", record.domains}, {"grants", grants}};
  if (!record.code.repository.empty())
    doc["code"] = {{"repository", record.code.repository}, {"space_path", record.code.space_path},
                   {"project_path", record.code.project_path}, {"base", record.code.base}, {"history", record.code.history}};
  return write_private(dir + "/spaces/" + id + ".json", doc.dump(2) + "\n");
}

void remove_record(const std::string& dir, const std::string& id) {
  unlink((dir + "/spaces/" + id + ".json").c_str());
}

}  // namespace controller
