#include "controller/space_token.h"

#include <sys/random.h>

#include <array>
#include <cstdint>

namespace controller {

std::string make_space_token() {
  std::array<unsigned char, 32> raw{};
  std::size_t got = 0;
  while (got < raw.size()) {
    const ssize_t n = ::getrandom(raw.data() + got, raw.size() - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : raw) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63];
  raw.fill(0);
  return out;
}

bool token_well_formed(std::string_view token) {
  if (token.size() < 32 || token.size() > 128) return false;
  for (char c : token)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return false;
  return true;
}

Result<void> write_space_token(Place& place, const std::string& id, const std::string& token) {
  if (!token_well_formed(token)) return fail(Code::kInternal, "write token into " + id + ": the token is malformed");
  const std::string dir(kTokenDir), file(kTokenPath);
  // umask 077 first: the file is 0600 from its first byte; mv makes the change atomic.
  const std::string script = "umask 077 && mkdir -p " + dir + " && chmod 700 " + dir + " && cat > " + file +
                             ".new && mv -f " + file + ".new " + file;
  Result<ExecOutput> r = place.exec(id, ExecTarget::kSpace, {"/bin/sh", "-c", script}, token, kTokenTimeout);
  if (!r) return fail(r.error().code, "write token into " + id + ": " + r.error().message);
  if (r->exit_code != 0)
    return fail(Code::kCommandFailed, "write token into " + id + ": exit " + std::to_string(r->exit_code));
  return {};
}

Result<std::string> read_space_token(Place& place, const std::string& id) {
  Result<ExecOutput> r = place.exec(id, ExecTarget::kSpace, {"cat", "--", std::string(kTokenPath)}, {}, kTokenTimeout);
  if (!r) return fail(r.error().code, "read token of " + id + ": " + r.error().message);
  if (r->exit_code != 0) return fail(Code::kCommandFailed, "read token of " + id + ": exit " + std::to_string(r->exit_code));
  if (!token_well_formed(r->out)) return fail(Code::kCommandFailed, "read token of " + id + ": the file is not a token");
  return std::move(r->out);
}

}  // namespace controller
