#include "policy/secret.h"

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

void Secret::wipe() noexcept {
  // Grow to the capacity first (never reallocates) so bytes past size() are wiped too, such as
  // the inline buffer a moved-from short string keeps. The writes go through a volatile pointer
  // so the compiler cannot drop them as dead stores before the free (what explicit_bzero does;
  // policy/ may use the standard library only).
  value_.resize(value_.capacity());
  volatile char* bytes = value_.data();
  for (std::size_t i = 0; i < value_.size(); ++i) bytes[i] = 0;
  value_.clear();
}

}  // namespace policy
