#include "controller/space_token.h"

#include <sys/random.h>

#include <array>
#include <cstdint>
#include <vector>

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

namespace {

// Runs the first spelling the image has (exit 126/127 means "not here"; busybox images often
// lack the applet links). No shell: every step is an argv.
Result<void> run_spelled(Place& place, const std::string& id, const std::string& what,
                         const std::vector<std::vector<std::string>>& spellings, const std::string& stdin_bytes) {
  int last = 127;
  for (const std::vector<std::string>& argv : spellings) {
    Result<ExecOutput> r = place.exec(id, ExecTarget::kSpace, argv, stdin_bytes, kTokenTimeout);
    if (!r) return fail(r.error().code, what + ": " + r.error().message);
    if (r->exit_code == 0) return {};
    last = r->exit_code;
    if (last != 126 && last != 127) break;
  }
  return fail(Code::kCommandFailed, what + ": exit " + std::to_string(last));
}

}  // namespace

Result<void> write_space_token(Place& place, const std::string& id, const std::string& token) {
  if (!token_well_formed(token)) return fail(Code::kInternal, "write token into " + id + ": the token is malformed");
  const std::string dir(kTokenDir), file(kTokenPath), fresh = file + ".new";
  const std::string what = "write token into " + id;
  // The directory is 0700 before the file exists; the file is 0600 before it takes the name.
  // A fresh space has no directory yet: `mkdir -m 700` makes it with its mode in one exec. One that
  // exists already (mkdir exits 1) keeps whatever mode it has until chmod sets it.
  if (Result<void> made =
          run_spelled(place, id, what,
                      {{"mkdir", "-m", "700", dir}, {"busybox", "mkdir", "-m", "700", dir}}, {});
      !made) {
    if (made.error().code != Code::kCommandFailed) return made;
    if (Result<void> r = run_spelled(place, id, what,
                                     {{"chmod", "700", dir}, {"busybox", "chmod", "700", dir}}, {});
        !r)
      return r;
  }
  // `busybox dd` first: the default image links no dd applet (image/space-default.manifest), and
  // an image without busybox answers 127 and gets the plain spelling.
  if (Result<void> r = run_spelled(
          place, id, what,
          {{"busybox", "dd", "of=" + fresh, "bs=4096"}, {"dd", "of=" + fresh, "bs=4096"}}, token);
      !r)
    return r;
  if (Result<void> r = run_spelled(place, id, what, {{"chmod", "600", fresh}, {"busybox", "chmod", "600", fresh}}, {}); !r)
    return r;
  return run_spelled(place, id, what, {{"mv", "-f", fresh, file}, {"busybox", "mv", "-f", fresh, file}}, {});
}

Result<std::string> read_space_token(Place& place, const std::string& id) {
  Result<ExecOutput> r = place.exec(id, ExecTarget::kSpace, {"cat", "--", std::string(kTokenPath)}, {}, kTokenTimeout);
  if (r && (r->exit_code == 126 || r->exit_code == 127))
    r = place.exec(id, ExecTarget::kSpace, {"busybox", "cat", "--", std::string(kTokenPath)}, {}, kTokenTimeout);
  if (!r) return fail(r.error().code, "read token of " + id + ": " + r.error().message);
  if (r->exit_code != 0) return fail(Code::kCommandFailed, "read token of " + id + ": exit " + std::to_string(r->exit_code));
  if (!token_well_formed(r->out)) return fail(Code::kCommandFailed, "read token of " + id + ": the file is not a token");
  return std::move(r->out);
}

}  // namespace controller
