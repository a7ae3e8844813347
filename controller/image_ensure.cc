#include "controller/image_ensure.h"

#include <unistd.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/image_push.h"

namespace controller {

namespace {

std::string strip_suffix_id(const std::string& pin_file) {
  return pin_file.ends_with(".id") ? pin_file.substr(0, pin_file.size() - 3) : pin_file;
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

bool is_hex64(std::string_view text) {
  if (text.size() != 64) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The engine's ID of `reference`, or empty when the engine does not hold it.
std::string engine_image_id(const DockerCli& cli, const std::string& reference) {
  Result<std::string> out = cli.run({"image", "inspect", "--format", "{{.Id}}", "--", reference}, reference);
  return out ? normalise_image_id(trim(*out)) : std::string();
}

// engine_image_id, and in the same engine call the names of the image's environment (the ID has
// no space; everything after the first one is the environment's JSON).
std::string engine_image_id_and_env(const DockerCli& cli, const std::string& reference,
                                    std::optional<std::set<std::string>>& env_names) {
  Result<std::string> out = cli.run(
      {"image", "inspect", "--format", "{{.Id}} {{json .Config.Env}}", "--", reference}, reference);
  if (!out) return {};
  const std::string text = trim(*out);
  const std::size_t space = text.find(' ');
  if (space == std::string::npos) return {};
  const std::string id = normalise_image_id(text.substr(0, space));
  if (!id.empty()) env_names = image_env_names_of(std::string_view(text).substr(space + 1));
  return id;
}

// What `docker load` / `podman load` said it loaded: "Loaded image: <ref>", "Loaded image ID:
// <id>", "Loaded image(s): <ref>[,<ref>]". Only for naming the archive's image in a refusal.
std::vector<std::string> loaded_references(const std::string& out) {
  std::vector<std::string> refs;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const std::size_t colon = line.find(": ");
    if (line.rfind("Loaded image", 0) != 0 || colon == std::string::npos) continue;
    std::istringstream list(line.substr(colon + 2));
    for (std::string ref; std::getline(list, ref, ',');) {
      ref = trim(ref);
      if (is_image_reference(ref) || is_image_id(ref)) refs.push_back(ref);
    }
  }
  return refs;
}

}  // namespace

std::string digest_record_for(const std::string& pin_file) { return strip_suffix_id(pin_file) + ".digest"; }
std::string archive_for(const std::string& pin_file) { return strip_suffix_id(pin_file) + ".tar"; }

Result<std::string> read_image_pin(const std::string& pin_file) {
  Result<std::string> text = read_small_file(pin_file, 256);
  if (!text) {
    return fail(Code::kImageMissing, "image ID file " + pin_file + ": missing; build it with `cmake --build <build> --target images`");
  }
  const std::string pin = trim(*text);
  if (!is_image_id(pin)) return fail(Code::kImageMissing, "image ID file " + pin_file + ": not sha256:<64 hex>");
  return pin;
}

bool is_digest_reference(std::string_view text) {
  if (text.size() > 255) return false;
  const std::size_t at = text.find('@');
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view repository = text.substr(0, at);
  const std::string_view digest = text.substr(at + 1);
  if (!digest.starts_with("sha256:") || !is_hex64(digest.substr(7))) return false;
  // HOST[:PORT]/PATH: a registry host is part of the reference, so nothing resolves against
  // Docker Hub by default; one colon at most, in the host (a tag has no place here).
  const std::size_t slash = repository.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == repository.size()) return false;
  if (repository.front() == '-' || repository.front() == '.' || repository.back() == '/') return false;
  for (std::size_t i = 0; i < repository.size(); ++i) {
    const char c = repository[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/' ||
                    (c == ':' && i < slash);
    if (!ok) return false;
    if (c == '/' && i + 1 < repository.size() && repository[i + 1] == '/') return false;
  }
  return true;
}

Result<std::string> read_digest_record(const std::string& pin_file) {
  const std::string file = digest_record_for(pin_file);
  if (::access(file.c_str(), F_OK) != 0) return std::string();
  Result<std::string> text = read_small_file(file, 512);
  if (!text) return fail(Code::kImageMissing, "digest record " + file + ": " + text.error().message);
  const std::string reference = trim(*text);
  if (!is_digest_reference(reference) || reference.find('\n') != std::string::npos) {
    return fail(Code::kImageMissing, "digest record " + file + ": not one line <registry>/<path>@sha256:<64 hex>; "
                                     "write it again with `spacectl image push --registry …`");
  }
  return reference;
}

std::set<std::string> image_env_names_of(std::string_view json_text) {
  std::set<std::string> names;
  const nlohmann::json env = nlohmann::json::parse(json_text, nullptr, false);
  if (!env.is_array()) return names;
  for (const nlohmann::json& e : env) {
    if (e.is_string()) {
      const std::string& entry = e.get_ref<const std::string&>();
      names.insert(entry.substr(0, entry.find('=')));
    }
  }
  return names;
}

std::string normalise_image_id(std::string_view engine_text) {
  if (is_image_id(engine_text)) return std::string(engine_text);
  if (is_hex64(engine_text)) return "sha256:" + std::string(engine_text);
  return {};
}

std::vector<std::string> engine_pull_flags(EngineKind engine, std::string_view reference) {
  switch (engine) {
    case EngineKind::kDocker:
    case EngineKind::kDockerSsh:
      return {};
    case EngineKind::kPodman:
      return registry_is_loopback(reference.substr(0, reference.find('@')))
                 ? std::vector<std::string>{"--tls-verify=false"}
                 : std::vector<std::string>{};
  }
  return {};
}

Result<EnsuredImage> ensure_pinned_image(const DockerCli& cli, const std::string& pin_file,
                                         const std::vector<std::string>& pull_flags) {
  Result<std::string> pin = read_image_pin(pin_file);
  if (!pin) return pin.error();
  EnsuredImage ensured;
  ensured.id = *pin;
  if (engine_image_id_and_env(cli, *pin, ensured.env_names) == *pin) return ensured;
  ensured.env_names.reset();

  Result<std::string> record = read_digest_record(pin_file);
  if (!record) return record.error();
  if (!record->empty()) {
    // By digest only: a tag names whatever was pushed last, a digest names these bytes.
    std::vector<std::string> args = {"pull", "--quiet"};
    args.insert(args.end(), pull_flags.begin(), pull_flags.end());
    args.insert(args.end(), {"--", *record});
    if (Result<ProcessOutcome> o = cli.run_raw(args, *record, kPullTimeout);
        !o || !o->succeeded()) {
      return fail(Code::kImageMissing, cli.program() + " pull " + *record + " (recorded in " + digest_record_for(pin_file) +
                                           "): " + (o ? o->describe() : o.error().message));
    }
    const std::string got = engine_image_id(cli, *record);
    if (got != *pin) {
      return fail(Code::kImageMismatch, "image " + *record + ": the registry's image is " + (got.empty() ? "unreadable" : got) +
                                            ", the pin (" + pin_file + ") is " + *pin + "; refused");
    }
    ensured.arrival = ImageArrival::kPulled;
    ensured.from = *record;
    return ensured;
  }

  const std::string archive = archive_for(pin_file);
  if (::access(archive.c_str(), R_OK) != 0) {
    return fail(Code::kImageMissing, "image " + *pin + " (pinned in " + pin_file + "): not in the engine, no digest record " +
                                         digest_record_for(pin_file) + " and no archive " + archive);
  }
  // The CLI reads the archive and streams it to its engine, local or at the far end of its channel.
  Result<ProcessOutcome> o = cli.run_raw({"load", "--input", archive}, archive, kPullTimeout);
  if (!o || !o->succeeded()) {
    return fail(Code::kImageMissing, cli.program() + " load --input " + archive + ": " + (o ? o->describe() : o.error().message));
  }
  if (engine_image_id(cli, *pin) != *pin) {
    std::string held;
    for (const std::string& ref : loaded_references(o->out)) {
      const std::string id = is_image_id(ref) ? ref : engine_image_id(cli, ref);
      held += (held.empty() ? "" : ", ") + (id.empty() ? ref : id);
    }
    return fail(Code::kImageMismatch, "image archive " + archive + ": holds " + (held.empty() ? "another image" : held) +
                                          ", the pin (" + pin_file + ") is " + *pin + "; refused");
  }
  ensured.arrival = ImageArrival::kLoaded;
  ensured.from = archive;
  return ensured;
}

}  // namespace controller
