// Names a change may create in this repository's work tree: lengths everywhere, Windows names
// where the repository says it must hold them (core.protectNTFS), and case or Unicode
// collisions where it says the disk folds them (core.ignorecase, core.precomposeunicode).
// Refused before anything is written; the route stays open (a branch holds such names).
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <array>
#include <map>

#include "controller/code/apply_internal.h"

namespace controller::code::apply_detail {
namespace {

constexpr std::size_t kNameMax = 255;     // NAME_MAX of Linux file systems
constexpr std::size_t kPathMax = 4096;    // PATH_MAX of Linux, the terminating NUL included
constexpr std::size_t kWindowsPathMax = 259;    // MAX_PATH - 1
constexpr std::size_t kWindowsFolderMax = 247;  // CreateDirectory: MAX_PATH - 12 (Git for Windows mingw_mkdir)

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) return parts;
    start = slash + 1;
  }
}

bool config_bool(git_config* config, const char* name) {
  int value = 0;
  return git_config_get_bool(&value, config, name) == 0 && value != 0;
}

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// A name that some git on some disk would take for the repository's own folder: ".git" in any
// case, with trailing dots or spaces (NTFS drops them), its 8.3 short name, or with code points
// HFS+ ignores. bring-out refuses these already; apply writes files itself, so it checks again.
bool names_git_folder(const std::string& name) {
  std::string s;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    // U+200C..U+200F, U+202A..U+202E, U+206A..U+206F (E2 80 8C..8F, E2 80 AA..AE, E2 81 AA..AF), U+FEFF (EF BB BF)
    if (c == 0xE2 && i + 2 < name.size()) {
      const auto b = static_cast<unsigned char>(name[i + 1]), d = static_cast<unsigned char>(name[i + 2]);
      if ((b == 0x80 && ((d >= 0x8C && d <= 0x8F) || (d >= 0xAA && d <= 0xAE))) || (b == 0x81 && d >= 0xAA && d <= 0xAF)) {
        i += 2;
        continue;
      }
    }
    if (c == 0xEF && i + 2 < name.size() && static_cast<unsigned char>(name[i + 1]) == 0xBB &&
        static_cast<unsigned char>(name[i + 2]) == 0xBF) {
      i += 2;
      continue;
    }
    s += static_cast<char>(c);
  }
  while (!s.empty() && (s.back() == '.' || s.back() == ' ')) s.pop_back();
  s = lower_ascii(s);
  return s == ".git" || s == "git~1";
}

// git's is_valid_win32_path and Microsoft's naming rules; "" when the name is fine.
std::string windows_rule(const std::string& name) {
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 32 || std::string_view("<>:\"\\|?*").find(ch) != std::string_view::npos) return "windows_character";
  }
  if (!name.empty() && (name.back() == '.' || name.back() == ' ')) return "windows_trailing_dot_or_space";
  std::string base = name.substr(0, name.find_first_of(".:"));
  while (!base.empty() && base.back() == ' ') base.pop_back();
  base = lower_ascii(base);
  static const std::array<const char*, 6> kDevices = {"con", "prn", "aux", "nul", "conin$", "conout$"};
  if (std::find_if(kDevices.begin(), kDevices.end(), [&](const char* d) { return base == d; }) != kDevices.end())
    return "windows_device_name";
  if (base.size() >= 4 && (base.compare(0, 3, "com") == 0 || base.compare(0, 3, "lpt") == 0)) {
    const std::string digit = base.substr(3);
    // COM1-9, LPT0-9 and the superscripts ¹ ² ³ Windows also takes for digits.
    if ((digit.size() == 1 && digit[0] >= '0' && digit[0] <= '9' && !(digit == "0" && base[0] == 'c')) || digit == "\xc2\xb9" ||
        digit == "\xc2\xb2" || digit == "\xc2\xb3")
      return "windows_device_name";
  }
  return {};
}

struct Folder {
  std::vector<std::string> in_result, in_from;
};

// Entry names of one folder of a commit's tree ("" is the root); empty when it is not a folder.
std::vector<std::string> names_in(git_repository* repo, const git_tree* root, const std::string& folder) {
  std::vector<std::string> names;
  Tree sub;
  const git_tree* t = root;
  if (!folder.empty()) {
    git_tree_entry* e = nullptr;
    if (git_tree_entry_bypath(&e, root, folder.c_str()) != 0) return names;
    TreeEntry entry(e);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) return names;
    git_tree* raw = nullptr;
    if (git_tree_lookup(&raw, repo, git_tree_entry_id(entry.get())) != 0) return names;
    sub.reset(raw);
    t = sub.get();
  }
  const std::size_t n = git_tree_entrycount(t);
  for (std::size_t i = 0; i < n; ++i) names.emplace_back(git_tree_entry_name(git_tree_entry_byindex(t, i)));
  return names;
}

Result<Tree> tree_of(git_repository* repo, const git_oid& commit_id) {
  git_commit* c = nullptr;
  if (auto r = git2_check(git_commit_lookup(&c, repo, &commit_id), "apply: look up " + oid_hex(commit_id), Code::kApplyFailed); !r)
    return r.error();
  Commit commit(c);
  git_tree* t = nullptr;
  if (auto r = git2_check(git_commit_tree(&t, commit.get()), "apply: tree of " + oid_hex(commit_id), Code::kApplyFailed); !r) return r.error();
  return Tree(t);
}

Failure refuse(Code code, const std::string& path, const std::string& rule, const std::string& other = {}) {
  std::string message = "apply as changes: " + path + ": " + rule;
  if (!other.empty()) message += " (" + other + ")";
  message += code == Code::kCaseOnlyRename ? "; this repository's disk would not see the rename: apply it as a branch"
                                           : "; this repository cannot hold that name here: apply it as a branch";
  return fail(code, message);
}

}  // namespace

NameRules name_rules_of(git_repository* repo) {
  NameRules rules;
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo) != 0) return rules;
  Config config(raw);
  rules.windows = config_bool(config.get(), "core.protectntfs");
  rules.fold_case = config_bool(config.get(), "core.ignorecase");
  rules.fold_unicode = config_bool(config.get(), "core.precomposeunicode");
  rules.long_paths = config_bool(config.get(), "core.longpaths");
  return rules;
}

std::string fold_name(const std::string& name, const NameRules& rules) {
  if (!rules.fold_case && !rules.fold_unicode) return name;
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(name);
  if (rules.fold_unicode && U_SUCCESS(status)) u = nfc->normalize(u, status);
  if (rules.fold_case) {
    u.foldCase(U_FOLD_CASE_DEFAULT);  // full case folding: ß and ss, ς and σ, ﬁ and fi
    if (rules.fold_unicode && U_SUCCESS(status)) u = nfc->normalize(u, status);
  }
  std::string out;
  u.toUTF8String(out);
  return U_SUCCESS(status) ? out : name;
}

Result<void> check_names(git_repository* repo, const std::string& top, const NameRules& rules, const git_oid& from_commit,
                         const git_oid& result_commit, const std::vector<Change>& changes) {
  for (const Change& c : changes) {
    for (const std::string& part : split(c.path))
      if (part.empty() || part == "." || part == ".." || names_git_folder(part))
        return refuse(Code::kNameNotAllowedHere, c.path, "git_folder_name");
  }
  const bool folding = rules.fold_case || rules.fold_unicode;
  Tree from_tree, result_tree;
  if (folding) {
    Result<Tree> a = tree_of(repo, from_commit);
    if (!a) return a.error();
    Result<Tree> b = tree_of(repo, result_commit);
    if (!b) return b.error();
    from_tree = std::move(*a);
    result_tree = std::move(*b);
  }
  std::map<std::string, Folder> folders;  // only folders on the way of created paths
  for (const Change& c : changes) {
    if (c.before.present() || !c.after.present()) continue;
    const std::vector<std::string> parts = split(c.path);
    if (top.size() + 1 + c.path.size() + 1 > kPathMax) return refuse(Code::kNameNotAllowedHere, c.path, "path_too_long");
    std::string folder;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::string& part = parts[i];
      if (part.size() > kNameMax) return refuse(Code::kNameNotAllowedHere, c.path, "name_too_long");
      if (rules.windows) {
        const std::string rule = windows_rule(part);
        if (!rule.empty()) return refuse(Code::kNameNotAllowedHere, c.path, rule);
      }
      if (folding) {
        auto [it, inserted] = folders.try_emplace(folder);
        if (inserted) {
          it->second.in_result = names_in(repo, result_tree.get(), folder);
          it->second.in_from = names_in(repo, from_tree.get(), folder);
        }
        const Folder& f = it->second;
        const bool existed = std::find(f.in_from.begin(), f.in_from.end(), part) != f.in_from.end();
        if (!existed) {
          const std::string folded = fold_name(part, rules);
          const std::string prefix = folder.empty() ? "" : folder + "/";
          for (const std::string& other : f.in_result)
            if (other != part && fold_name(other, rules) == folded)
              return refuse(Code::kNameNotAllowedHere, c.path, "differs_only_in_case", "beside " + prefix + other);
          for (const std::string& other : f.in_from)
            if (other != part && fold_name(other, rules) == folded)
              return refuse(Code::kCaseOnlyRename, c.path, "case_only_rename", "from " + prefix + other);
        }
      }
      folder += (folder.empty() ? "" : "/") + part;
    }
    if (rules.windows && !rules.long_paths) {
      const std::string full = top + "/" + c.path;
      const std::size_t slash = full.rfind('/');
      if (full.size() > kWindowsPathMax) return refuse(Code::kNameNotAllowedHere, c.path, "windows_path_too_long");
      if (slash > kWindowsFolderMax) return refuse(Code::kNameNotAllowedHere, c.path, "windows_folder_too_long");
    }
  }
  return {};
}

}  // namespace controller::code::apply_detail
