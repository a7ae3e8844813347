// Result<T>: a value or an error message, shaped like std::expected (C++23) so it can be swapped
// for it later. No exceptions anywhere in this project's core
// (docs/decisions.md#errors-are-values). The error type is a parameter: the controller's carries a
// stable code too (controller/errors.h).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "policy/crash.h"

namespace policy {

// An error is a sentence that names the operation and the object
// (docs/decisions.md#error-messages).
struct Error {
  std::string message;
};

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // Reading the value of an error (or the error of a value) is a programming error: crash.
  T& value() & {
    if (!ok()) contract_broken();
    return std::get<0>(state_);
  }
  const T& value() const& {
    if (!ok()) contract_broken();
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!ok()) contract_broken();
    return std::get<0>(std::move(state_));
  }
  const E& error() const& {
    if (ok()) contract_broken();
    return std::get<1>(state_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, E> state_;
};

// Result<void>: success or an error.
template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)), failed_(true) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const E& error() const& {
    if (!failed_) contract_broken();
    return error_;
  }

 private:
  E error_;
  bool failed_ = false;
};

}  // namespace policy
