// Errors of the controller: a stable code a program (OpenChamber) can branch on, plus a sentence
// for a person that names the operation and the object (STYLE.md rule 8). Errors are values; the
// only exceptions in controller/ are CLI11's and nlohmann-json's, caught in main.cc.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace controller {

enum class Code : std::uint8_t {
  kUsage,                 // the command line is wrong
  kPlaceUnreachable,      // the place's CLI is missing or its daemon does not answer
  kPlaceUnusable,         // the place answers but lacks something we need (seccomp, isolation)
  kPlaceNotFound,         // no place registered under that name
  kSpaceNotFound,         // no space of this owner has that id
  kSpaceNotRunning,       // the operation needs a running space
  kVerifyFailed,          // a created container or network differs from the hardening spec
  kGatekeeperNotReady,    // the gatekeeper did not answer /health in time
  kGatekeeperRefused,     // the control channel answered with an HTTP error
  kGatekeeperUnreachable, // the control client could not reach the channel inside the container
  kCommandFailed,         // a place command exited non-zero
  kCommandTimeout,        // a place command ran past its deadline and was killed
  kOutputTooLarge,        // a place command printed more than its cap and was killed
  kImageMissing,          // a pinned image ID file or the image itself is missing
  kRecordUnreadable,      // the host record of a space cannot be read or written
  kInvalidArgument,       // a value given by the user is refused
  kInternal,              // a bug or an impossible answer
};

std::string_view code_word(Code code);
// Exit status of spacectl for each code (documented in --help and README.md).
int exit_status(Code code);

struct Failure {
  Code code = Code::kInternal;
  std::string message;
};

// Shaped like policy::Result (and std::expected), with a Failure that carries a code.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
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
  const Failure& error() const& {
    if (ok()) std::abort();
    return std::get<1>(state_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Failure> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Failure failure) : failure_(std::move(failure)), failed_(true) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const Failure& error() const& {
    if (!failed_) std::abort();
    return failure_;
  }

 private:
  Failure failure_;
  bool failed_ = false;
};

inline Failure fail(Code code, std::string message) { return Failure{code, std::move(message)}; }

}  // namespace controller
