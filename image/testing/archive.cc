#include "image/testing/archive.h"

#include <fstream>
#include <sstream>

#include "image/testing/ustar.h"

namespace image_testing {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string json_string_value(std::string_view json, std::string_view key) {
  std::string needle = "\"";
  needle.append(key);
  needle.append("\":\"");
  const std::size_t at = json.find(needle);
  if (at == std::string_view::npos) return "";
  const std::size_t begin = at + needle.size();
  const std::size_t end = json.find('"', begin);
  if (end == std::string_view::npos) return "";
  return std::string(json.substr(begin, end - begin));
}

ImageArchive read_image_archive(std::string_view archive_bytes) {
  ImageArchive image;
  const TarListing outer = read_tar(archive_bytes);
  if (!outer.error.empty()) {
    image.error = "image archive: " + outer.error;
    return image;
  }
  auto member = [&](std::string_view name) -> const TarEntry* {
    for (const TarEntry& entry : outer.entries) {
      if (entry.path == name && entry.type == '0') return &entry;
    }
    return nullptr;
  };
  const TarEntry* manifest = member("manifest.json");
  if (manifest == nullptr) {
    image.error = "image archive: no manifest.json";
    return image;
  }
  const std::string_view manifest_json = manifest->data;
  const std::string config_name = json_string_value(manifest_json, "Config");
  const TarEntry* config = member(config_name);
  if (config == nullptr) {
    image.error = "image archive: manifest.json names config '" + config_name + "', not found";
    return image;
  }
  image.config_json = config->data;

  const std::string_view layers_key = "\"Layers\":[";
  const std::size_t layers_at = manifest_json.find(layers_key);
  const std::size_t layers_end = manifest_json.find(']', layers_at);
  if (layers_at == std::string_view::npos || layers_end == std::string_view::npos) {
    image.error = "image archive: manifest.json has no Layers";
    return image;
  }
  std::string_view layers = manifest_json.substr(layers_at + layers_key.size(),
                                                 layers_end - layers_at - layers_key.size());
  std::vector<std::string> layer_names;
  while (!layers.empty()) {
    const std::size_t open = layers.find('"');
    const std::size_t close = layers.find('"', open + 1);
    if (open == std::string_view::npos || close == std::string_view::npos) break;
    layer_names.emplace_back(layers.substr(open + 1, close - open - 1));
    layers.remove_prefix(close + 1);
  }
  image.layers = layer_names.size();
  if (layer_names.size() != 1) return image;  // the caller asserts exactly one layer
  const TarEntry* layer = member(layer_names.front());
  if (layer == nullptr) {
    image.error = "image archive: layer '" + layer_names.front() + "' not found";
    return image;
  }
  const TarListing inner = read_tar(layer->data);
  if (!inner.error.empty()) {
    image.error = "layer " + layer_names.front() + ": " + inner.error;
    return image;
  }
  for (const TarEntry& entry : inner.entries) image.layer_listing.push_back(manifest_line(entry));
  return image;
}

std::vector<std::string> manifest_entries(const std::string& manifest_text) {
  std::vector<std::string> entries;
  std::istringstream lines(manifest_text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    entries.push_back(line);
  }
  return entries;
}

}  // namespace image_testing
