#include "controller/grants/source.h"

#include <string.h>

#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "controller/process.h"
#include "controller/text.h"
#include "policy/control_messages.h"

namespace controller::grants {

using nlohmann::json;
using Clock = std::chrono::system_clock;

std::string_view source_word(SourceKind kind) {
  switch (kind) {
    case SourceKind::kNone:
      return "none";
    case SourceKind::kStdin:
      return "stdin";
    case SourceKind::kEnv:
      return "env";
    case SourceKind::kHelper:
      return "helper";
  }
  return "none";
}

bool rereadable(SourceKind kind) {
  switch (kind) {
    case SourceKind::kNone:
    case SourceKind::kEnv:
    case SourceKind::kHelper:
      return true;
    case SourceKind::kStdin:
      return false;
  }
  return false;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxEnvNameLength) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

namespace {

// Characters a shell would act on outside quotes. We run no shell, so we refuse them instead of
// passing them on silently (a reader of `--secret-helper 'pass show x | head -1'` expects a pipe).
bool shell_special(char c) {
  switch (c) {
    case '|':
    case '&':
    case ';':
    case '<':
    case '>':
    case '(':
    case ')':
    case '$':
    case '`':
    case '*':
    case '?':
    case '[':
    case ']':
    case '{':
    case '}':
    case '~':
    case '#':
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<std::vector<std::string>> parse_helper_command(std::string_view text) {
  auto bad = [&](const std::string& why) { return fail(Code::kUsage, "--secret-helper: " + why); };
  if (text.size() > kMaxHelperCommandBytes) {
    return bad("longer than " + std::to_string(kMaxHelperCommandBytes) + " bytes");
  }
  std::vector<std::string> argv;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
      return bad("a control character at byte " + std::to_string(i));
    }
    if (c == ' ' || c == '\t') {
      if (in_word) argv.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return bad("a ' is not closed");
      for (std::size_t k = i + 1; k < end; ++k) {
        if (static_cast<unsigned char>(text[k]) < 0x20 || text[k] == 0x7f) {
          return bad("a control character at byte " + std::to_string(k));
        }
      }
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      std::size_t k = i + 1;
      for (; k < text.size() && text[k] != '"'; ++k) {
        if (static_cast<unsigned char>(text[k]) < 0x20 || text[k] == 0x7f) {
          return bad("a control character at byte " + std::to_string(k));
        }
        if (text[k] == '\\' && k + 1 < text.size() && (text[k + 1] == '"' || text[k + 1] == '\\')) {
          ++k;
        }
        word.push_back(text[k]);
      }
      if (k >= text.size()) return bad("a \" is not closed");
      i = k;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) return bad("a trailing backslash");
      const char next = text[++i];
      if (static_cast<unsigned char>(next) < 0x20 || next == 0x7f) {
        return bad("a control character at byte " + std::to_string(i));
      }
      word.push_back(next);
    } else if (shell_special(c)) {
      return bad(
          std::string("'") + c + "' at byte " + std::to_string(i) +
          " would mean something to a shell, and no shell runs the helper; quote it to pass it on");
    } else {
      word.push_back(c);
    }
    if (word.size() > kMaxHelperArgBytes) {
      return bad("an argument is longer than " + std::to_string(kMaxHelperArgBytes) + " bytes");
    }
  }
  if (in_word) argv.push_back(std::move(word));
  if (argv.empty() || argv[0].empty()) return bad("no program");
  if (argv.size() > kMaxHelperArgs) {
    return bad("more than " + std::to_string(kMaxHelperArgs) + " words");
  }
  return argv;
}

std::string helper_command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty();
    for (const char c : a) {
      plain =
          plain && c != ' ' && c != '\t' && c != '\'' && c != '"' && c != '\\' && !shell_special(c);
    }
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (const char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

Token::Token(Token&& other) noexcept : secret(std::move(other.secret)), expires(other.expires) {
  other.wipe();
}
Token& Token::operator=(Token&& other) noexcept {
  if (this != &other) {
    wipe();
    secret = std::move(other.secret);
    expires = other.expires;
    other.wipe();
  }
  return *this;
}
Token::~Token() { wipe(); }
void Token::wipe() {
  explicit_bzero(secret.data(), secret.size());
  secret.clear();
}

namespace {

// policy::parse_grant_request refuses the same; said here with the source's name.
std::optional<std::string> secret_problem(std::string_view s) {
  if (s.empty()) return "is empty";
  if (s.size() > policy::kMaxSecretLength) {
    return "is longer than " + std::to_string(policy::kMaxSecretLength) + " bytes";
  }
  for (const char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') return "holds CR, LF or NUL";
  }
  return std::nullopt;
}

int digits(std::string_view s, std::size_t at, std::size_t n) {
  int v = 0;
  if (at + n > s.size()) return -1;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<Clock::time_point> parse_rfc3339(std::string_view s) {
  // 2026-12-01T20:55:00[.123]Z
  if (s.size() < 20 || s.size() > 40) return std::nullopt;
  const int year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2),
            hour = digits(s, 11, 2), minute = digits(s, 14, 2), second = digits(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60 || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDays[month - 1] || (month == 2 && day == 29 && !leap)) return std::nullopt;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    const std::size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start || i - start > 9) {
      return std::nullopt;  // fractions are dropped (we act to the second)
    }
  }
  long offset = 0;
  if (i + 1 == s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    // UTC
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    const int oh = digits(s, i + 1, 2), om = digits(s, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return std::nullopt;
    offset = (s[i] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second == 60 ? 59 : second;  // a leap second counts as the second before it
  const time_t t = timegm(&tm);
  return Clock::from_time_t(t - offset);
}

std::string rfc3339(Clock::time_point t) {
  const time_t s = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

Result<Token> read_env(std::string_view name) {
  if (!is_env_name(name)) {
    return fail(Code::kUsage, "--secret-env " + std::string(name.substr(0, 64)) +
                                  ": a name is [A-Za-z_][A-Za-z0-9_]*, at most 256 characters");
  }
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || value[0] == '\0') {
    return fail(Code::kSecretSourceMissing,
                "secret source env " + std::string(name) +
                    ": the variable is unset or empty in spacectl's environment");
  }
  const std::string_view v(value);
  if (std::optional<std::string> why = secret_problem(v); why) {
    return fail(Code::kInvalidArgument,
                "secret source env " + std::string(name) + ": the value " + *why);
  }
  Token t;
  t.secret.assign(v);
  return t;
}

Result<Token> parse_helper_output(std::string_view out, Clock::time_point now) {
  auto bad = [](const std::string& why) {
    return fail(Code::kSecretHelperFailed, "its answer " + why);
  };
  // Keys at the top level, to refuse a duplicate (the parser would keep the last one silently).
  int dup = 0;
  bool seen_secret = false, seen_expiry = false;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1) {
      const std::string key = parsed.get<std::string>();
      bool& seen = key == "secret" ? seen_secret : seen_expiry;
      if ((key == "secret" || key == "expires_at") && seen) ++dup;
      seen = seen || key == "secret" || key == "expires_at";
    }
    return true;
  };
  json doc = json::parse(out.begin(), out.end(), cb, false);
  struct Wipe {
    json& d;
    ~Wipe() {
      if (d.is_object() && d.contains("secret") && d["secret"].is_string()) {
        std::string& s = d["secret"].get_ref<std::string&>();
        explicit_bzero(s.data(), s.size());
      }
    }
  } wipe_doc{doc};
  if (doc.is_discarded() || !doc.is_object()) return bad("is not one JSON object");
  if (dup > 0) return bad("names a member twice");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "secret" && it.key() != "expires_at") {
      return bad("has a member other than secret and expires_at");
    }
  }
  if (!doc.contains("secret") || !doc["secret"].is_string()) return bad("has no string \"secret\"");
  if (!doc.contains("expires_at") ||
      !(doc["expires_at"].is_string() || doc["expires_at"].is_null())) {
    return bad(
        "has no \"expires_at\" (an RFC 3339 time, or null for a secret that does not expire)");
  }
  Token t;
  if (doc["expires_at"].is_string()) {
    const std::string text = doc["expires_at"].get<std::string>();
    t.expires = parse_rfc3339(text);
    if (!t.expires) {
      return bad("has an expires_at that is not an RFC 3339 time: " +
                 terminal_safe(text.substr(0, 64)));
    }
    if (*t.expires <= now) {
      return bad("has already expired (expires_at " + terminal_safe(text.substr(0, 64)) + ")");
    }
  }
  const std::string& s = doc["secret"].get_ref<const std::string&>();
  if (std::optional<std::string> why = secret_problem(s); why) {
    return bad("has a secret that " + *why);
  }
  t.secret = s;
  return t;
}

Result<Token> run_helper(const std::vector<std::string>& argv, const HelperLimits& limits) {
  const std::string what = "secret helper " + terminal_safe(argv.empty() ? std::string() : argv[0]);
  if (argv.empty()) return fail(Code::kUsage, "secret helper: no program");
  ProcessRequest r;
  r.argv = argv;
  r.timeout = limits.deadline;
  r.output_cap = limits.output_cap;
  ProcessOutcome o = run_process(r);
  struct Wipe {
    std::string& s;
    ~Wipe() { explicit_bzero(s.data(), s.size()); }
  } wipe_out{o.out};
  if (o.interrupted) return fail(Code::kInterrupted, what + ": " + o.describe());
  if (o.timed_out) {
    return fail(Code::kSecretHelperFailed, what + ": gave no answer within " +
                                               std::to_string(limits.deadline.count()) +
                                               " ms and was killed");
  }
  if (o.output_too_large) {
    return fail(Code::kSecretHelperFailed, what + ": printed more than " +
                                               std::to_string(limits.output_cap) +
                                               " bytes and was killed");
  }
  if (!o.succeeded()) {
    // Only the status: a credential helper's stderr may echo a token, and this text reaches the
    // terminal, serve's answers and logs.
    std::string status = o.exited ? "exit " + std::to_string(o.exit_code)
                                  : (o.spawn_failed || o.wait_errno != 0 ? o.describe()
                                                                         : "killed by signal " + std::to_string(o.signal));
    if (!o.err.empty()) status += " (" + std::to_string(o.err.size()) + " bytes on stderr, not shown)";
    explicit_bzero(o.err.data(), o.err.size());
    return fail(Code::kSecretHelperFailed, what + ": " + status);
  }
  Result<Token> t = parse_helper_output(o.out, Clock::now());
  if (!t) return fail(t.error().code, what + ": " + t.error().message);
  return t;
}

Result<Token> fetch(const SecretSource& source, const HelperLimits& limits) {
  switch (source.kind) {
    case SourceKind::kEnv:
      return read_env(source.env);
    case SourceKind::kHelper:
      return run_helper(source.helper, limits);
    case SourceKind::kNone:
    case SourceKind::kStdin:
      break;
  }
  return fail(Code::kInvalidArgument,
              "a " + std::string(source_word(source.kind)) + " grant has no secret to read again");
}

}  // namespace controller::grants
