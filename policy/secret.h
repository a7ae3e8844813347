// A secret held in memory only: it cannot be printed, streamed or copied by accident, and its
// bytes are wiped when it is destroyed. Reading it needs an explicit call at the one place that
// writes it into an upstream request.
#pragma once

#include <string>
#include <string_view>

namespace policy {

class Secret {
 public:
  explicit Secret(std::string value) : value_(std::move(value)) {}
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;
  Secret(Secret&& other) noexcept;
  Secret& operator=(Secret&& other) noexcept;
  ~Secret();

  // The only way to the bytes. Named so every use is easy to find in review.
  [[nodiscard]] std::string_view reveal_for_upstream() const noexcept { return value_; }
  [[nodiscard]] std::size_t size() const noexcept { return value_.size(); }

 private:
  void wipe() noexcept;
  std::string value_;
};

}  // namespace policy
