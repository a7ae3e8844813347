#include "policy/secret.h"

#include <algorithm>
#include <utility>

namespace policy {

Secret::Secret(Secret&& other) noexcept : value_(std::move(other.value_)) { other.wipe(); }

Secret& Secret::operator=(Secret&& other) noexcept {
  if (this != &other) {
    wipe();
    value_ = std::move(other.value_);
    other.wipe();
  }
  return *this;
}

Secret::~Secret() { wipe(); }

void wipe_string(std::string& s) noexcept {
  s.resize(s.capacity());
  volatile char* bytes = s.data();
  for (std::size_t i = 0; i < s.size(); ++i) bytes[i] = 0;
  s.clear();
}

void append_wiping(std::string& s, std::string_view more) {
  if (s.size() + more.size() > s.capacity()) {
    std::string grown;
    grown.reserve(std::max(2 * s.capacity(), s.size() + more.size()));
    grown.append(s);
    wipe_string(s);
    s.swap(grown);
  }
  s.append(more);
}

void Secret::wipe() noexcept {
  // Grow to the capacity first (never reallocates) so bytes past size() are wiped too, such as
  // the inline buffer a moved-from short string keeps. The writes go through a volatile pointer
  // so the compiler cannot drop them as dead stores before the free (what explicit_bzero does;
  // policy/ may use the standard library only).
  wipe_string(value_);
}

}  // namespace policy
