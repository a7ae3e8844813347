// Tests only: a credential helper for `--secret-helper` (../source.h). Each run adds one to the
// count in COUNTER (under flock) and behaves as MODE says:
//   ok LIFETIME       {"secret":"sk-helper-token-<n>","expires_at":<now + LIFETIME s>}
//   fail-after N L    like ok for the first N calls, then exit 3 with a line on stderr
//   hang              sleeps 300 s (a helper that never answers)
//   flood             prints 1 MiB (a helper that prints too much)
//   bad-json          prints a truncated object
//   extra             prints a valid answer with one member too many
//   expired           prints a token that expired an hour ago
//   fail              prints a line on stderr and exits 3
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "policy/number.h"

namespace {

long bump(const char* path) {
  const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  flock(fd, LOCK_EX);
  char buffer[32] = {};
  const ssize_t n = pread(fd, buffer, sizeof buffer - 1, 0);
  std::string_view stored(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!stored.empty() && stored.back() == '\n') stored.remove_suffix(1);
  // An empty file is the first run; anything else unreadable is a broken test (-1).
  const std::optional<long> before = stored.empty() ? 0L : policy::parse_number<long>(stored);
  if (!before) return -1;
  const long count = *before + 1;
  const std::string text = std::to_string(count) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    return -1;
  }
  close(fd);
  return count;
}

std::string at(long offset_seconds) {
  const std::time_t t = std::time(nullptr) + offset_seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: token-helper MODE COUNTER [ARGS]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const long n = bump(argv[2]);
  if (n < 0) return 2;
  auto answer = [n](long lifetime) {
    std::printf("{\"secret\":\"sk-helper-token-%ld\",\"expires_at\":\"%s\"}\n", n,
                at(lifetime).c_str());
    return 0;
  };
  const auto number = [&](int i) { return policy::parse_number<long>(argv[i]); };
  if (mode == "ok" && argc > 3 && number(3)) return answer(*number(3));
  if (mode == "fail-after" && argc > 4 && number(3) && number(4)) {
    if (n <= *number(3)) return answer(*number(4));
    std::fprintf(stderr, "token-helper: the login is gone\n");
    return 3;
  }
  if (mode == "hang") {
    sleep(300);
    return 0;
  }
  if (mode == "flood") {
    const std::string line(1023, 'x');
    for (int i = 0; i < 1024; ++i) std::printf("%s\n", line.c_str());
    return 0;
  }
  if (mode == "bad-json") {
    std::printf("{\"secret\":\"sk-helper-token-%ld\",\"expires_at\":", n);
    return 0;
  }
  if (mode == "extra") {
    std::printf(
        "{\"secret\":\"sk-helper-token-%ld\",\"expires_at\":\"%s\",\"refresh_token\":\"r\"}\n", n,
        at(3600).c_str());
    return 0;
  }
  if (mode == "expired") {
    std::printf("{\"secret\":\"sk-helper-token-%ld\",\"expires_at\":\"%s\"}\n", n,
                at(-3600).c_str());
    return 0;
  }
  if (mode == "fail") {
    std::fprintf(stderr, "token-helper: no login (last token sk-helper-token-on-stderr)\n");
    return 3;
  }
  std::fprintf(stderr, "token-helper: unknown mode %s\n", mode.c_str());
  return 2;
}
