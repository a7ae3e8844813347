#include "controller/image_push.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/image_ensure.h"
#include "controller/process.h"
#include "policy/number.h"

namespace controller {

namespace {

constexpr std::chrono::milliseconds kPushTimeout{600000};
constexpr std::chrono::milliseconds kInspectTimeout{60000};

std::string host_of(std::string_view location) {
  std::string host(location.substr(0, location.find('/')));
  if (const std::size_t colon = host.rfind(':'); colon != std::string::npos) host.resize(colon);
  return host;
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// A fresh 0700 directory for skopeo's digest file, removed when it goes.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/spacectl-push-XXXXXX";
    if (const char* d = mkdtemp(tmpl); d != nullptr) path_ = d;
  }
  ~TempDir() {
    if (path_.empty()) return;
    ::unlink((path_ + "/digest").c_str());
    ::rmdir(path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Result<void> write_record(const std::string& file, const std::string& reference) {
  const std::string tmp = file + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return fail(Code::kRecordUnreadable, "write digest record " + file + ": " + std::strerror(errno));
  const std::string text = reference + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(Code::kRecordUnreadable, "write digest record " + file + ": " + std::strerror(errno));
  }
  return {};
}

Result<PushedImage> push_one(const std::string& registry, const PushImage& image, const std::string& skopeo) {
  PushedImage pushed;
  pushed.name = image.name;
  Result<std::string> pin = read_image_pin(image.pin_file);
  if (!pin) {
    if (image.required) return pin.error();
    pushed.skipped = "no pin " + image.pin_file;
    return pushed;
  }
  pushed.id = *pin;
  const std::string archive = archive_for(image.pin_file);
  if (::access(archive.c_str(), R_OK) != 0) {
    return fail(Code::kImageMissing, "image push " + image.name + ": no archive " + archive + " next to its pin " + image.pin_file +
                                         " (build it with `cmake --build <build> --target images`)");
  }
  const bool plain_http = registry_is_loopback(registry);
  const std::string repository = registry + "/" + image.name;
  TempDir dir;
  if (dir.path().empty()) return fail(Code::kInternal, std::string("image push: mkdtemp: ") + std::strerror(errno));

  ProcessRequest copy;
  copy.argv = {skopeo, "copy", "--quiet", "--digestfile", dir.path() + "/digest"};
  if (plain_http) copy.argv.push_back("--dest-tls-verify=false");
  copy.argv.insert(copy.argv.end(), {"docker-archive:" + archive, "docker://" + repository + ":" + image.tag});
  copy.timeout = kPushTimeout;
  const ProcessOutcome copied = run_process(copy);
  if (copied.spawn_failed) return fail(Code::kCommandFailed, "image push: " + skopeo + ": " + copied.describe() + " (install skopeo)");
  if (!copied.succeeded()) {
    return fail(Code::kCommandFailed, "skopeo copy " + archive + " to " + repository + ":" + image.tag + ": " + copied.describe());
  }
  Result<std::string> digest_text = read_small_file(dir.path() + "/digest", 256);
  const std::string digest = digest_text ? trim(*digest_text) : std::string();
  const std::string reference = repository + "@" + digest;
  if (!is_digest_reference(reference)) {
    return fail(Code::kCommandFailed, "skopeo copy to " + repository + ": no sha256 digest written (" + digest.substr(0, 80) + ")");
  }

  // What the registry now serves under that digest must be the pinned image: its manifest names
  // the config by digest, and the config digest is the image ID.
  ProcessRequest inspect;
  inspect.argv = {skopeo, "inspect", "--raw"};
  if (plain_http) inspect.argv.push_back("--tls-verify=false");
  inspect.argv.push_back("docker://" + reference);
  inspect.timeout = kInspectTimeout;
  inspect.output_cap = 1u << 20;
  const ProcessOutcome read_back = run_process(inspect);
  if (!read_back.succeeded()) return fail(Code::kCommandFailed, "skopeo inspect --raw " + reference + ": " + read_back.describe());
  const nlohmann::json manifest = nlohmann::json::parse(read_back.out, nullptr, false);
  std::string config;
  if (manifest.is_object() && manifest.contains("config") && manifest["config"].is_object() &&
      manifest["config"].contains("digest") && manifest["config"]["digest"].is_string()) {
    config = manifest["config"]["digest"].get<std::string>();
  }
  if (config != *pin) {
    return fail(Code::kImageMismatch, "image push " + image.name + ": the registry serves " + reference + " with config " +
                                          (config.empty() ? "(none)" : config) + ", the pin (" + image.pin_file + ") is " + *pin +
                                          "; no record written");
  }
  pushed.reference = reference;
  pushed.record = digest_record_for(image.pin_file);
  if (Result<void> w = write_record(pushed.record, reference); !w) return w.error();
  return pushed;
}

}  // namespace

bool is_registry_location(std::string_view text) {
  if (text.empty() || text.size() > 200) return false;
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size() || text.back() == '/') return false;
  const std::string_view host = text.substr(0, slash);
  const std::size_t colon = host.find(':');
  const std::string_view name = host.substr(0, colon);
  if (name.empty() || name.front() == '-' || name.front() == '.') return false;
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  }
  if (colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    unsigned value = 0;
    for (const char c : port) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value == 0 || value > 65535) return false;
  }
  const std::string_view path = text.substr(slash + 1);
  char previous = '/';
  for (const char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/';
    if (!ok || (c == '/' && previous == '/')) return false;
    if (previous == '/' && (c == '.' || c == '-' || c == '_')) return false;
    previous = c;
  }
  return true;
}

bool registry_is_loopback(std::string_view location) {
  const std::string host = host_of(location);
  if (host == "localhost") return true;
  // 127.0.0.0/8 as a dotted quad of four decimal numbers up to 255.
  int parts = 0;
  std::size_t at = 0;
  unsigned first = 0;
  while (at <= host.size()) {
    const std::size_t dot = host.find('.', at);
    const std::string part = host.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    const std::optional<unsigned> value = policy::parse_number<unsigned>(part);
    if (!value || *value > 255) return false;
    if (parts == 0) first = *value;
    ++parts;
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  return parts == 4 && first == 127;
}

Result<std::vector<PushedImage>> push_images(const std::string& registry, const std::vector<PushImage>& images,
                                             const std::string& skopeo) {
  if (!is_registry_location(registry)) {
    return fail(Code::kUsage, "image push --registry " + registry.substr(0, 200) +
                                  ": expected HOST[:PORT]/PATH (e.g. 127.0.0.1:5000/gatekeeper-spaces), no scheme or tag");
  }
  std::vector<PushedImage> pushed;
  for (const PushImage& image : images) {
    Result<PushedImage> one = push_one(registry, image, skopeo);
    if (!one) return one.error();
    pushed.push_back(std::move(*one));
  }
  return pushed;
}

}  // namespace controller
