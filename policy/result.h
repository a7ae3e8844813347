// Result<T>: a value or an error message, shaped like std::expected (C++23) so it can be swapped
// for it later. No exceptions anywhere in this project's core (STYLE.md rule 6).
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace policy {

// An error is a sentence that names the operation and the object (STYLE.md rule 8).
struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // Reading the value of an error (or the error of a value) is a programming error: crash.
  T& value() & {
    if (!ok()) std::abort();
    return std::get<0>(state_);
  }
  const T& value() const& {
    if (!ok()) std::abort();
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!ok()) std::abort();
    return std::get<0>(std::move(state_));
  }
  const Error& error() const& {
    if (ok()) std::abort();
    return std::get<1>(state_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success or an error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const& {
    if (!failed_) std::abort();
    return error_;
  }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace policy
