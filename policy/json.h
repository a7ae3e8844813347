// A small strict JSON reader and writer (RFC 8259) for the control channel and the journal.
// policy/ may depend on the standard library only, so this is ours. Bounded: input size, depth
// and element count are limits given by the caller; duplicate object keys are refused; strings
// must be valid UTF-8; numbers are kept as text and read as integers or doubles on request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/result.h"

namespace policy::json {

class Value {
 public:
  enum class Kind : std::uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  Value() = default;  // null
  static Value null() { return Value(); }
  static Value boolean(bool b);
  static Value number_text(std::string text);  // caller guarantees RFC 8259 number syntax
  static Value number(std::int64_t n);
  static Value string(std::string s);
  static Value array(std::vector<Value> items = {});
  static Value object(std::map<std::string, Value> members = {});

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] bool is_null() const noexcept { return kind_ == Kind::kNull; }
  [[nodiscard]] bool is_bool() const noexcept { return kind_ == Kind::kBool; }
  [[nodiscard]] bool is_number() const noexcept { return kind_ == Kind::kNumber; }
  [[nodiscard]] bool is_string() const noexcept { return kind_ == Kind::kString; }
  [[nodiscard]] bool is_array() const noexcept { return kind_ == Kind::kArray; }
  [[nodiscard]] bool is_object() const noexcept { return kind_ == Kind::kObject; }

  [[nodiscard]] bool as_bool() const noexcept { return bool_; }
  [[nodiscard]] const std::string& as_string() const noexcept { return text_; }  // string or number text
  // Moves the string out (the value is left an empty string): a secret read from a request is
  // handed on without a second copy of its bytes in memory.
  [[nodiscard]] std::string take_string() noexcept;
  // An integer number with no fraction or exponent that fits int64.
  [[nodiscard]] std::optional<std::int64_t> as_int() const;
  [[nodiscard]] const std::vector<Value>& items() const noexcept { return items_; }
  [[nodiscard]] std::vector<Value>& items() noexcept { return items_; }
  [[nodiscard]] const std::map<std::string, Value>& members() const noexcept { return members_; }
  [[nodiscard]] std::map<std::string, Value>& members() noexcept { return members_; }
  // Object member or nullptr.
  [[nodiscard]] const Value* find(std::string_view key) const;

  // Compact serialisation; strings escaped so the output is always valid JSON and ASCII.
  [[nodiscard]] std::string dump() const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<Value> items_;
  std::map<std::string, Value> members_;
};

// Hard ceiling on nesting whatever Limits say: the reader recurses once per level, so this
// bounds its stack use.
inline constexpr std::size_t kMaxDepthCeiling = 256;

struct Limits {
  std::size_t max_bytes = 1 << 20;   // whole document
  std::size_t max_depth = 16;        // nesting of arrays/objects
  std::size_t max_elements = 10000;  // values in the whole document
};

// Parses exactly one JSON value (surrounding whitespace allowed). Errors name the byte offset.
Result<Value> parse(std::string_view text, const Limits& limits = {});

// Appends `s` as a JSON string literal (quotes included). Bytes that are not valid UTF-8 and every
// non-ASCII character are escaped as \uXXXX (invalid bytes as U+FFFD), so the output is ASCII.
void append_quoted(std::string& out, std::string_view s);

}  // namespace policy::json
