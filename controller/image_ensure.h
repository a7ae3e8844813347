// The pinned images in a place's engine (image/README.md "Images by digest"): what every place
// calls before create, whatever its engine (local Docker, Docker over SSH, Podman): the engine's
// CLI is a parameter, so each place makes the image present through its own channel.
//
// Next to each pin file (`gatekeeper-image.id`: "sha256:<64 hex>\n", the image ID, which names the
// config bytes) may sit two more files:
//   <name>.digest  written by `spacectl image push`: one line "<registry>/<path>/<image>@sha256:<64
//                  hex>", the repository digest of the pushed manifest. Its presence is the
//                  configuration: the place pulls by this digest, never by a tag.
//   <name>.tar     the docker-archive the pin was computed from (installed next to the pins, and
//                  copied there in a build tree by the `images` target).
// Whichever way the image arrives, its ID must equal the pin; otherwise image_mismatch, naming both.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controller/docker_cli.h"
#include "controller/errors.h"

namespace controller {

// A pull may bring hundreds of megabytes through a slow link: its own deadline.
inline constexpr std::chrono::milliseconds kPullTimeout{600000};

// gatekeeper-image.id -> gatekeeper-image.digest / gatekeeper-image.tar
std::string digest_record_for(const std::string& pin_file);
std::string archive_for(const std::string& pin_file);

// The pin: "sha256:<64 lowercase hex>", or kImageMissing naming the file.
Result<std::string> read_image_pin(const std::string& pin_file);

// "<repository>@sha256:<64 hex>" where <repository> is HOST[:PORT]/PATH of [a-z0-9._/-] (a
// registry reference `docker pull` takes and no flag); at most 255 bytes.
bool is_digest_reference(std::string_view text);
// The digest record next to a pin: empty when there is none (no registry configured), else the
// reference it holds; a record that is not exactly one digest reference is kImageMissing.
Result<std::string> read_digest_record(const std::string& pin_file);

// An engine's image ID as "sha256:<64 hex>": Docker prints it so, Podman without the prefix.
// Anything else is empty.
std::string normalise_image_id(std::string_view engine_text);

enum class ImageArrival : std::uint8_t { kPresent, kPulled, kLoaded };

struct EnsuredImage {
  std::string id;         // the pin, now present in the engine
  ImageArrival arrival = ImageArrival::kPresent;
  std::string from;       // the digest reference pulled or the archive loaded; empty when present
  // The names of the image's environment (Config.Env), read with its ID when it was present
  // (verify needs them; an image ID names its config, so they cannot change); absent otherwise.
  std::optional<std::set<std::string>> env_names;
};

// The names of an image's `{{json .Config.Env}}` answer ("NAME=value" strings); anything that is
// not an array of strings names nothing.
std::set<std::string> image_env_names_of(std::string_view json_text);

// Makes the pinned image of pin_file present in the engine `cli` drives: already there (by ID),
// else pulled by the recorded digest (pull_flags go between `pull` and the reference, e.g.
// Podman's --tls-verify=false for a loopback registry), else the archive next to the pin streamed
// through the CLI (`load --input`). The engine's ID of what arrived must equal the pin:
// otherwise kImageMismatch, naming both.
// What a pull of `reference` needs on this engine: Podman speaks plain HTTP to a registry on
// loopback only when told (--tls-verify=false), Docker does so by itself for 127.0.0.0/8; every
// other registry is verified TLS on both, so nothing is added for it.
std::vector<std::string> engine_pull_flags(EngineKind engine, std::string_view reference);

Result<EnsuredImage> ensure_pinned_image(const DockerCli& cli, const std::string& pin_file,
                                         const std::vector<std::string>& pull_flags = {});

}  // namespace controller
