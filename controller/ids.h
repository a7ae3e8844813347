// Ids and image words shared by the places, the records and the inspect readers (ids.cc): apart
// from any driver, so the record reader and the inspect readers build without one (the fuzz
// targets link only these).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace controller {

// `bytes` bytes from getrandom as lowercase hex (ids, temporary names, tokens of the owner).
std::string random_hex(std::size_t bytes);
bool is_image_id(std::string_view text);         // sha256:<64 lowercase hex>
bool is_image_reference(std::string_view text);  // a reference `docker create` takes, never a flag

}  // namespace controller
