// Where a grant's secret comes from (README.md in this folder says it for users):
//   stdin   read once at `grant add`; never kept, so every start leaves the grant needs-access;
//   env     a variable of the host's own environment, read by name at `grant add` and again at
//           every start (and `grant refresh`); unset or empty is kSecretSourceMissing;
//   helper  a program of the user's, run as an argv (never a shell) with a deadline and an output
//           cap, that prints one JSON object {"secret": "...", "expires_at": "RFC 3339" | null}
//           and exits 0; run at `grant add`, at every start, by `grant refresh`, and by the
//           keeper of `spacectl serve` before the token expires.
// Records keep the source (the variable's name, the helper's argv), never a value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller::grants {

enum class SourceKind : std::uint8_t {
  kNone,    // an opened domain: no header, no secret
  kStdin,   // typed or piped once; never kept
  kEnv,     // the host's environment, by name
  kHelper,  // a credential helper program
};
std::string_view source_word(SourceKind kind);  // none, stdin, env, helper
// Whether a start (or a refresh) can read the secret again.
bool rereadable(SourceKind kind);

struct SecretSource {
  SourceKind kind = SourceKind::kNone;
  std::string env;                  // kEnv: the variable's name
  std::vector<std::string> helper;  // kHelper: argv; argv[0] is a path or a name looked up in PATH
  bool operator==(const SecretSource&) const = default;
};

// Limits, each tested at the limit and one past it.
inline constexpr std::size_t kMaxEnvNameLength = 256;
inline constexpr std::size_t kMaxHelperArgs = 64;
inline constexpr std::size_t kMaxHelperArgBytes = 4096;
inline constexpr std::size_t kMaxHelperCommandBytes = 16384;
inline constexpr std::size_t kMaxHelperOutput = 64u << 10;  // a token answer is a few KiB
inline constexpr std::chrono::milliseconds kHelperDeadline{30000};

// [A-Za-z_][A-Za-z0-9_]{0,255}
bool is_env_name(std::string_view name);

// `--secret-helper 'PROGRAM ARG…'` into an argv, with no shell and nothing a shell would expand.
// Accepted: words separated by spaces or tabs; '…' keeps everything inside literally; "…" keeps
// everything literally except \" and \\ ; outside quotes a backslash keeps the next character
// literally; '' or "" is an empty argument. Refused (kUsage): an empty command, an unclosed quote,
// a trailing backslash, control characters, and outside quotes any of | & ; < > ( ) $ ` * ? [ ] { }
// ~ # (a reader would expect a shell to act on them; quote them to pass them on). Limits above.
Result<std::vector<std::string>> parse_helper_command(std::string_view text);
// The argv written back so parse_helper_command reads it again (shown in show/list output).
std::string helper_command_text(const std::vector<std::string>& argv);

// A secret with its expiry. The value is wiped when the Token goes.
struct Token {
  std::string secret;
  std::optional<std::chrono::system_clock::time_point> expires;  // none: does not expire
  Token() = default;
  Token(Token&& other) noexcept;
  Token& operator=(Token&& other) noexcept;
  Token(const Token&) = delete;
  Token& operator=(const Token&) = delete;
  ~Token();
  void wipe();
};

struct HelperLimits {
  std::chrono::milliseconds deadline = kHelperDeadline;
  std::size_t output_cap = kMaxHelperOutput;
};

// kSecretSourceMissing when unset or empty; kInvalidArgument when the value is over
// policy::kMaxSecretLength or holds CR, LF or NUL.
Result<Token> read_env(std::string_view name);
// Runs the helper (its stdin empty, spacectl's environment); kSecretHelperFailed when it cannot
// start, runs past the deadline, prints more than the cap, exits non-zero or by a signal, or
// prints anything parse_helper_output refuses. Its stderr tail goes into the message; its stdout
// never does.
Result<Token> run_helper(const std::vector<std::string>& argv, const HelperLimits& limits = {});
// Strict: exactly one JSON object with exactly the members "secret" (1 to 8192 bytes, no CR, LF or
// NUL) and "expires_at" (RFC 3339 later than `now`, or null); no other member, no duplicate.
Result<Token> parse_helper_output(std::string_view out, std::chrono::system_clock::time_point now);
// env or helper; anything else is kInvalidArgument (a stdin secret cannot be read again).
Result<Token> fetch(const SecretSource& source, const HelperLimits& limits = {});

// RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM); T and Z in either case.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);
// UTC to the second: 2026-12-01T20:55:00Z.
std::string rfc3339(std::chrono::system_clock::time_point t);

}  // namespace controller::grants
