// The parts of a docker-archive (what build-image.sh writes and what `docker save` writes) that
// the image tests compare: the config JSON, and the entries of the image's single layer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace image_testing {

std::string read_file(const std::string& path);

struct ImageArchive {
  std::string config_json;
  std::vector<std::string> layer_listing;  // manifest lines, archive order
  std::size_t layers = 0;
  std::string error;                       // empty when the archive was read
};

ImageArchive read_image_archive(std::string_view archive_bytes);

// A committed manifest file without its '#' comments and blank lines.
std::vector<std::string> manifest_entries(const std::string& manifest_text);

// The value of the first `"key":"value"` in compact JSON, or "" (our configs are written compact
// with no escapes in the values the tests look at).
std::string json_string_value(std::string_view json, std::string_view key);

}  // namespace image_testing
