// `spacectl image push --registry HOST[:PORT]/PATH`: the pinned images to a registry, each from
// the archive its pin was computed from, and the repository digest recorded next to the pin
// (image_ensure.h reads it before every create).
//
// The push is Debian's skopeo (`skopeo copy docker-archive:… docker://…`), not `docker push`:
// it reads the archive, so it needs no engine and pushes exactly the bytes the pin names (an
// engine pushes whatever its store holds under a tag), and it writes the manifest digest to a
// file (--digestfile) instead of into a progress stream. After the push the registry's manifest
// is read back by that digest and its config digest must equal the pin before the record is
// written.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller {

struct PushImage {
  std::string name;      // repository name under the registry path: gatekeeper, gatekeeper-test, space-default
  std::string tag;       // informational; the record holds the digest
  std::string pin_file;  // the archive and the record sit next to it (image_ensure.h)
  bool required = true;  // false: skipped when its pin is absent (the test twin is not installed)
};

struct PushedImage {
  std::string name, id;
  std::string reference;  // <registry>/<name>@sha256:…, as recorded; empty when skipped
  std::string record;     // the digest record written
  std::string skipped;    // why it was skipped; empty when pushed
};

// HOST[:PORT]/PATH: a host name or IPv4 address, an optional port, and at least one path
// component of [a-z0-9._-]; no scheme, no tag, no digest; at most 200 bytes.
bool is_registry_location(std::string_view text);
// A registry on 127.0.0.0/8 or `localhost` is spoken to over plain HTTP, as Docker does by default
// for those addresses; every other registry over verified TLS.
bool registry_is_loopback(std::string_view location);

// skopeo: the program (tests may give a path).
Result<std::vector<PushedImage>> push_images(const std::string& registry, const std::vector<PushImage>& images,
                                             const std::string& skopeo = "skopeo");

// The CLI's answer (render.h): {"images": [{"name", "id", "reference", "record"} or {"name",
// "skipped"}]}.
struct ImagesPushed {
  std::vector<PushedImage> images;
};

}  // namespace controller
