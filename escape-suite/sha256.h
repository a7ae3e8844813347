// SHA-256 (FIPS 180-4), for looking up the fake grant key by its digest: the runner never passes
// the key itself, so argv and the report cannot leak it.
#pragma once

#include <string>
#include <string_view>

namespace escape {

// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace escape
