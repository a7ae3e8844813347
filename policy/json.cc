#include "policy/json.h"

#include <string>
#include <utility>

#include "policy/ascii.h"
#include "policy/crash.h"
#include "policy/number.h"

namespace policy::json {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// One UTF-8 sequence as RFC 3629 §4 defines it: no overlong forms, no surrogates (U+D800..DFFF
// encoded directly), nothing above U+10FFFF. Returns the sequence length, 0 when invalid.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    code_point = b0;
    return 1;
  }
  std::size_t length = 0;
  unsigned char low = 0x80;   // bounds of the second byte: they exclude the overlong forms,
  unsigned char high = 0xbf;  // the surrogates and everything above U+10FFFF
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
    code_point = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    code_point = b0 & 0x0f;
    if (b0 == 0xe0) low = 0xa0;
    if (b0 == 0xed) high = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    code_point = b0 & 0x07;
    if (b0 == 0xf0) low = 0x90;
    if (b0 == 0xf4) high = 0x8f;
  } else {
    return 0;  // continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (s.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    const unsigned char lo = k == 1 ? low : 0x80;
    const unsigned char hi = k == 1 ? high : 0xbf;
    if (b < lo || b > hi) return 0;
    code_point = (code_point << 6) | (b & 0x3f);
  }
  return length;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

void append_u_escape(std::string& out, unsigned unit) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHexDigits[(unit >> shift) & 0xf];
}

using ascii::hex_value;
using ascii::is_digit;

// RFC 8259 §6: number = [ minus ] int [ frac ] [ exp ]. Returns the length of the longest
// prefix of `s` that is a number, 0 when there is none. No NaN, no Infinity, no leading '+',
// no leading zeros, no bare '.'.
std::size_t number_length(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size() || !is_digit(s[i])) return 0;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (i >= s.size() || !is_digit(s[i])) return 0;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !is_digit(s[i])) return 0;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  return i;
}

class Parser {
 public:
  Parser(std::string_view text, const Limits& limits)
      : text_(text),
        max_depth_(limits.max_depth < kMaxDepthCeiling ? limits.max_depth : kMaxDepthCeiling),
        max_elements_(limits.max_elements),
        max_bytes_(limits.max_bytes) {}

  Result<Value> run() {
    if (text_.size() > max_bytes_) {
      return fail(max_bytes_, "the document is longer than " + std::to_string(max_bytes_) +
                                  " bytes");
    }
    Value value;
    skip_whitespace();
    if (!parse_value(value, 0)) return std::move(*error_);
    skip_whitespace();
    if (pos_ != text_.size()) return fail(pos_, "text after the value");
    return value;
  }

 private:
  Error fail(std::size_t at, std::string_view what) {
    error_ = Error{"json: byte " + std::to_string(at) + ": " + std::string(what)};
    return *error_;
  }
  bool failed(std::size_t at, std::string_view what) {
    fail(at, what);
    return false;
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  // RFC 8259 §2: ws = *( %x20 / %x09 / %x0A / %x0D ). Nothing else, not even a BOM.
  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  bool parse_value(Value& out, std::size_t depth) {
    if (at_end()) return failed(pos_, "unexpected end of the document, expected a value");
    if (++elements_ > max_elements_) {
      return failed(pos_, "more than " + std::to_string(max_elements_) + " values");
    }
    switch (peek()) {
      case '{': return parse_object(out, depth + 1);
      case '[': return parse_array(out, depth + 1);
      case '"': {
        std::string s;
        if (!parse_string(s)) return false;
        out = Value::string(std::move(s));
        return true;
      }
      case 't': return parse_literal("true", Value::boolean(true), out);
      case 'f': return parse_literal("false", Value::boolean(false), out);
      case 'n': return parse_literal("null", Value::null(), out);
      default: break;
    }
    const std::size_t length = number_length(text_.substr(pos_));
    if (length == 0) {
      return failed(pos_, (peek() == '-' || is_digit(peek())) ? "invalid number"
                                                              : "expected a value");
    }
    out = Value::number_text(std::string(text_.substr(pos_, length)));
    pos_ += length;
    return true;
  }

  bool parse_literal(std::string_view word, Value value, Value& out) {
    if (text_.substr(pos_, word.size()) != word) return failed(pos_, "expected a value");
    pos_ += word.size();
    out = std::move(value);
    return true;
  }

  bool enter(std::size_t depth) {
    if (depth > max_depth_) {
      return failed(pos_, "nesting deeper than " + std::to_string(max_depth_) + " levels");
    }
    ++pos_;  // the opening bracket
    skip_whitespace();
    return true;
  }

  bool parse_array(Value& out, std::size_t depth) {
    if (!enter(depth)) return false;
    std::vector<Value> items;
    if (!at_end() && peek() == ']') {
      ++pos_;
      out = Value::array(std::move(items));
      return true;
    }
    for (;;) {
      Value item;
      if (!parse_value(item, depth)) return false;
      items.push_back(std::move(item));
      skip_whitespace();
      if (at_end()) return failed(pos_, "unexpected end of the document in an array");
      if (peek() == ']') {
        ++pos_;
        out = Value::array(std::move(items));
        return true;
      }
      if (peek() != ',') return failed(pos_, "expected ',' or ']' in an array");
      ++pos_;
      skip_whitespace();  // a ']' here is a trailing comma: parse_value refuses it
    }
  }

  bool parse_object(Value& out, std::size_t depth) {
    if (!enter(depth)) return false;
    std::map<std::string, Value> members;
    if (!at_end() && peek() == '}') {
      ++pos_;
      out = Value::object(std::move(members));
      return true;
    }
    for (;;) {
      if (at_end()) return failed(pos_, "unexpected end of the document in an object");
      if (peek() != '"') return failed(pos_, "expected a string key in an object");
      const std::size_t key_at = pos_;
      std::string key;
      if (!parse_string(key)) return false;
      // RFC 8259 §4: names SHOULD be unique; readers disagree on which duplicate wins, so a
      // duplicate is refused rather than let two readers see two different requests.
      if (members.count(key) != 0) return failed(key_at, "duplicate object key");
      skip_whitespace();
      if (at_end() || peek() != ':') return failed(pos_, "expected ':' after an object key");
      ++pos_;
      skip_whitespace();
      Value value;
      if (!parse_value(value, depth)) return false;
      members.emplace(std::move(key), std::move(value));
      skip_whitespace();
      if (at_end()) return failed(pos_, "unexpected end of the document in an object");
      if (peek() == '}') {
        ++pos_;
        out = Value::object(std::move(members));
        return true;
      }
      if (peek() != ',') return failed(pos_, "expected ',' or '}' in an object");
      ++pos_;
      skip_whitespace();  // a '}' here is a trailing comma: refused as "expected a string key"
    }
  }

  // Four hex digits at pos_ (after "\u"), or -1.
  long read_hex4() {
    if (text_.size() - pos_ < 4) return -1;
    long unit = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int digit = hex_value(text_[pos_ + k]);
      if (digit < 0) return -1;
      unit = unit * 16 + digit;
    }
    pos_ += 4;
    return unit;
  }

  bool parse_escape(std::string& out) {
    const std::size_t escape_at = pos_;
    ++pos_;  // the backslash
    if (at_end()) return failed(escape_at, "unexpected end of the document in a string");
    const char c = text_[pos_++];
    switch (c) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': break;
      default: return failed(escape_at, "invalid escape in a string");
    }
    const long unit = read_hex4();
    if (unit < 0) return failed(escape_at, "invalid \\u escape in a string");
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      return failed(escape_at, "unpaired surrogate escape in a string");
    }
    if (unit >= 0xd800 && unit <= 0xdbff) {
      // RFC 8259 §7: a character outside the BMP is a UTF-16 surrogate pair of two escapes.
      if (text_.substr(pos_, 2) != "\\u") {
        return failed(escape_at, "unpaired surrogate escape in a string");
      }
      pos_ += 2;
      const long low = read_hex4();
      if (low < 0xdc00 || low > 0xdfff) {
        return failed(escape_at, "unpaired surrogate escape in a string");
      }
      append_utf8(out, static_cast<char32_t>(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)));
      return true;
    }
    append_utf8(out, static_cast<char32_t>(unit));
    return true;
  }

  bool parse_string(std::string& out) {
    const std::size_t open_at = pos_;
    ++pos_;  // the opening quote
    // Reserve the raw length first: the decoded text is never longer, so the buffer is never
    // reallocated and no stray partial copy (of a secret, say) is left in freed memory.
    std::size_t close = pos_;
    while (close < text_.size() && text_[close] != '"') close += text_[close] == '\\' ? 2 : 1;
    if (close >= text_.size()) return failed(open_at, "unterminated string");
    out.reserve(close - pos_);
    for (;;) {
      if (at_end()) return failed(open_at, "unterminated string");
      const char c = peek();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (!parse_escape(out)) return false;
        continue;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return failed(pos_, "control character in a string");  // RFC 8259 §7
      }
      char32_t code_point = 0;
      const std::size_t length = utf8_sequence(text_, pos_, code_point);
      if (length == 0) return failed(pos_, "invalid UTF-8 in a string");  // RFC 8259 §8.1
      out.append(text_.substr(pos_, length));
      pos_ += length;
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t max_depth_;
  std::size_t max_elements_;
  std::size_t max_bytes_;
  std::size_t elements_ = 0;
  std::optional<Error> error_;
};

void dump_to(std::string& out, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNull: out += "null"; return;
    case Value::Kind::kBool: out += value.as_bool() ? "true" : "false"; return;
    case Value::Kind::kNumber: out += value.as_string(); return;
    case Value::Kind::kString: append_quoted(out, value.as_string()); return;
    case Value::Kind::kArray: {
      out += '[';
      bool first = true;
      for (const Value& item : value.items()) {
        if (!first) out += ',';
        first = false;
        dump_to(out, item);
      }
      out += ']';
      return;
    }
    case Value::Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : value.members()) {
        if (!first) out += ',';
        first = false;
        append_quoted(out, key);
        out += ':';
        dump_to(out, member);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

Value Value::number_text(std::string text) {
  // A caller that breaks the contract would make dump() write invalid JSON: crash instead.
  if (text.empty() || number_length(text) != text.size()) contract_broken();
  Value v;
  v.kind_ = Kind::kNumber;
  v.text_ = std::move(text);
  return v;
}

Value Value::number(std::int64_t n) { return number_text(std::to_string(n)); }

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.text_ = std::move(s);
  return v;
}

Value Value::array(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

Value Value::object(std::map<std::string, Value> members) {
  Value v;
  v.kind_ = Kind::kObject;
  v.members_ = std::move(members);
  return v;
}

std::optional<std::int64_t> Value::as_int() const {
  if (kind_ != Kind::kNumber) return std::nullopt;
  if (text_.find_first_of(".eE") != std::string::npos) return std::nullopt;
  return parse_number<std::int64_t>(text_);
}

std::string Value::take_string() noexcept {
  std::string out = std::move(text_);
  text_.clear();
  return out;
}

const Value* Value::find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  const auto it = members_.find(std::string(key));
  return it == members_.end() ? nullptr : &it->second;
}

std::string Value::dump() const {
  std::string out;
  dump_to(out, *this);
  return out;
}

Result<Value> parse(std::string_view text, const Limits& limits) {
  return Parser(text, limits).run();
}

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '"' || c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    switch (c) {
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    char32_t code_point = 0;
    const std::size_t length = utf8_sequence(s, i, code_point);
    if (length == 0) {
      append_u_escape(out, 0xfffd);  // each invalid byte is one U+FFFD REPLACEMENT CHARACTER
      ++i;
      continue;
    }
    if (code_point >= 0x10000) {
      const char32_t v = code_point - 0x10000;
      append_u_escape(out, 0xd800 + (v >> 10));
      append_u_escape(out, 0xdc00 + (v & 0x3ff));
    } else {
      append_u_escape(out, code_point);  // other controls, DEL and every non-ASCII character
    }
    i += length;
  }
  out += '"';
}

}  // namespace policy::json
