#include "controller/code/git2.h"

#include <mutex>

namespace controller::code {

void git2_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
  });
}

std::string git2_message(int rc) {
  const git_error* e = git_error_last();
  if (e != nullptr && e->message != nullptr && e->message[0] != '\0') return e->message;
  return "libgit2 error " + std::to_string(rc);
}

Result<void> git2_check(int rc, std::string_view operation, Code code) {
  if (rc >= 0) return {};
  return fail(code, std::string(operation) + ": " + git2_message(rc));
}

std::string oid_hex(const git_oid& oid) {
  char buffer[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buffer, sizeof buffer, &oid);
  return buffer;
}

}  // namespace controller::code
