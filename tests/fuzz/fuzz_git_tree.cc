// Code out's tree checks (policy/git_tree_names.h): never crash on any bytes. The first byte picks
// the entry point: a raw tree object, a .gitmodules text, a link target, or one entry name.
// Invariants: a tree that passes re-serialises to exactly the bytes given, with every entry
// passing check_entry in strictly increasing git order; no name holding '/', '\\' or NUL, and no
// ".git" in any ASCII case, ever passes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/git_tree_names.h"

namespace gt = policy::git_tree;

namespace {
std::string mode_text(std::uint32_t mode) {
  std::string out;
  do {
    out.insert(out.begin(), static_cast<char>('0' + (mode & 7)));
    mode >>= 3;
  } while (mode != 0);
  return out;
}

bool is_dot_git_ascii(std::string_view name) {
  if (name.size() != 4 || name[0] != '.') return false;
  const char* want = "git";
  for (int i = 0; i < 3; ++i)
    if ((name[static_cast<std::size_t>(i) + 1] | 0x20) != want[i]) return false;
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      const gt::TreeCheck t = gt::check_tree(in, 20);
      if (t.reason != gt::Reason::kOk) break;
      std::string again;
      for (std::size_t k = 0; k < t.entries.size(); ++k) {
        const gt::Entry& e = t.entries[k];
        if (gt::check_entry(e.name, e.mode) != gt::Reason::kOk) std::abort();
        if (k > 0 && gt::compare_entries(t.entries[k - 1].name, t.entries[k - 1].mode == gt::kModeTree, e.name,
                                         e.mode == gt::kModeTree) >= 0)
          std::abort();
        again += mode_text(e.mode) + " " + std::string(e.name) + std::string(1, '\0') + std::string(e.id);
      }
      if (again != in) std::abort();
      break;
    }
    case 1: (void)gt::check_gitmodules(in); break;
    case 2: {
      const std::size_t split = in.find('\n');
      const std::string_view path = split == std::string_view::npos ? std::string_view() : in.substr(0, split);
      const std::string_view target = split == std::string_view::npos ? in : in.substr(split + 1);
      const gt::LinkCheck l = gt::check_link_target(path, target);
      if (l.reason == gt::Reason::kOk && (target.empty() || target.find('\0') != std::string_view::npos)) std::abort();
      break;
    }
    case 3: {
      const gt::Reason r = gt::check_name(in);
      const bool must_refuse = in.empty() || in.find('/') != std::string_view::npos || in.find('\\') != std::string_view::npos ||
                               in.find('\0') != std::string_view::npos || in == "." || in == ".." || is_dot_git_ascii(in);
      if (must_refuse && r == gt::Reason::kOk) std::abort();
      break;
    }
    default: break;
  }
  return 0;
}
