// A secret held in memory only: it cannot be printed, streamed or copied by accident, and its
// bytes are wiped when it is destroyed. Reading it needs an explicit call at the one place that
// writes it into an upstream request.
#pragma once

#include <string>
#include <string_view>

namespace policy {

// Overwrites every byte of `s` up to its capacity (stale bytes past size() too), then empties it.
// For the buffers that hold a secret on its way out: request bodies, built heads, write queues.
void wipe_string(std::string& s) noexcept;

// Appends to `s`, growing it without leaving a copy behind: when the capacity does not suffice,
// the bytes move to a new buffer and the old one is wiped before it is freed.
void append_wiping(std::string& s, std::string_view more);

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
