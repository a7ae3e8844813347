#include "policy/git_tree_names.h"

#include <algorithm>
#include <string>

namespace policy::git_tree {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Byte i of name, or NUL past its end (git's checks read C strings).
char at(std::string_view s, std::size_t i) { return i < s.size() ? s[i] : '\0'; }

// One UTF-8 code point from s at i (strict: no overlong forms, no surrogates); false if invalid.
bool next_code_point(std::string_view s, std::size_t& i, std::uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (b0 < 0x80) {
    cp = b0;
    ++i;
    return true;
  }
  if ((b0 & 0xe0) == 0xc0) { n = 1; cp = b0 & 0x1f; min = 0x80; }
  else if ((b0 & 0xf0) == 0xe0) { n = 2; cp = b0 & 0x0f; min = 0x800; }
  else if ((b0 & 0xf8) == 0xf0) { n = 3; cp = b0 & 0x07; min = 0x10000; }
  else return false;
  for (std::size_t k = 1; k <= n; ++k) {
    if (i + k >= s.size()) return false;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return false;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
  i += n + 1;
  return true;
}

// HFS+ ignores these code points when it compares names (git's next_hfs_char).
bool hfs_ignorable(std::uint32_t cp) {
  return (cp >= 0x200c && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x206a && cp <= 0x206f) || cp == 0xfeff;
}

// ".<needle>" once HFS+ ignorables are dropped and ASCII case is folded (git's is_hfs_dot_generic).
bool is_hfs_dot(std::string_view name, std::string_view needle) {
  std::string folded;
  std::size_t i = 0;
  while (i < name.size()) {
    std::uint32_t cp = 0;
    if (!next_code_point(name, i, cp)) return false;
    if (hfs_ignorable(cp)) continue;
    if (cp > 127) return false;
    folded += lower(static_cast<char>(cp));
    if (folded.size() > needle.size() + 1) return false;
  }
  return folded.size() == needle.size() + 1 && folded[0] == '.' && std::string_view(folded).substr(1) == needle;
}

// The rest from i is only spaces and dots, up to the end or an NTFS stream ':'.
bool only_spaces_and_dots(std::string_view name, std::size_t i) {
  for (;; ++i) {
    const char c = at(name, i);
    if (c == '\0' || c == ':') return true;
    if (c != ' ' && c != '.') return false;
  }
}

// git's is_ntfs_dotgit: ".git" or "git~1", then dots or spaces, then the end or a stream.
bool is_ntfs_dotgit(std::string_view name) {
  std::size_t i = 0;
  if (at(name, 0) == '.') {
    if (lower(at(name, 1)) != 'g' || lower(at(name, 2)) != 'i' || lower(at(name, 3)) != 't') return false;
    i = 4;
  } else if (lower(at(name, 0)) == 'g') {
    if (lower(at(name, 1)) != 'i' || lower(at(name, 2)) != 't' || at(name, 3) != '~' || at(name, 4) != '1') return false;
    i = 5;
  } else {
    return false;
  }
  for (;; ++i) {
    const char c = at(name, i);
    if (c == '\0' || c == '/' || c == '\\' || c == ':') return true;
    if (c != '.' && c != ' ') return false;
  }
}

// git's is_ntfs_dot_generic: ".<needle>" with trailing dots/spaces, "<needle[0..6]>~1-4", or the
// fall-back short name "<prefix up to 6>~<digits>" whose prefix is the hash spelling.
bool is_ntfs_dot(std::string_view name, std::string_view needle, std::string_view short_prefix) {
  if (at(name, 0) == '.' && name.size() >= needle.size() + 1 && iequals(name.substr(1, needle.size()), needle))
    return only_spaces_and_dots(name, needle.size() + 1);
  if (name.size() >= 8 && iequals(name.substr(0, 6), needle.substr(0, 6)) && name[6] == '~' && name[7] >= '1' && name[7] <= '4')
    return only_spaces_and_dots(name, 8);
  bool saw_tilde = false;
  for (std::size_t i = 0; i < 8; ++i) {
    const char c = at(name, i);
    if (c == '\0') return false;
    if (saw_tilde) {
      if (c < '0' || c > '9') return false;
    } else if (c == '~') {
      ++i;
      const char d = at(name, i);
      if (d < '1' || d > '9') return false;
      saw_tilde = true;
    } else if (i >= 6) {
      return false;
    } else if ((static_cast<unsigned char>(c) & 0x80) != 0) {
      return false;
    } else if (lower(c) != short_prefix[i]) {
      return false;
    }
  }
  return only_spaces_and_dots(name, 8);
}

struct DotFile {
  std::string_view needle, short_prefix;
};
constexpr DotFile kGitmodules{"gitmodules", "gi7eba"};
constexpr DotFile kDotFiles[] = {{"gitmodules", "gi7eba"}, {"gitattributes", "gi7d29"}, {"gitignore", "gi250a"}, {"mailmap", "maba30"}};

bool is_spelling_of(std::string_view name, const DotFile& f) {
  return is_hfs_dot(name, f.needle) || is_ntfs_dot(name, f.needle, f.short_prefix);
}

bool is_dotgit_any(std::string_view name) {
  return iequals(name, ".git") || is_hfs_dot(name, "git") || is_ntfs_dotgit(name);
}

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// Pieces split on '/' and '\\'.
template <class F>
bool any_piece(std::string_view s, F f) {
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '/' || s[i] == '\\') {
      if (f(s.substr(start, i - start))) return true;
      start = i + 1;
    }
  }
  return false;
}

bool is_absolute(std::string_view s) {
  if (s.empty()) return false;
  if (s[0] == '/' || s[0] == '\\') return true;
  const char c = lower(s[0]);
  return s.size() >= 2 && c >= 'a' && c <= 'z' && s[1] == ':';  // a Windows drive
}

Reason check_submodule_name(std::string_view name) {
  if (name.empty() || name[0] == '-' || is_absolute(name) || has_control(name)) return Reason::kGitmodulesName;
  if (any_piece(name, [](std::string_view p) { return p == ".."; })) return Reason::kGitmodulesName;
  return Reason::kOk;
}

Reason check_submodule_url(std::string_view url) {
  if (url.empty() || url[0] == '-' || has_control(url)) return Reason::kGitmodulesUrl;
  // "<helper>::<address>" runs git-remote-<helper> (ext:: runs any command, fd:: reads fds).
  const std::size_t colons = url.find("::");
  if (colons != std::string_view::npos) {
    const std::string_view helper = url.substr(0, colons);
    const bool helper_like = !helper.empty() && std::all_of(helper.begin(), helper.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    });
    if (helper_like) return Reason::kGitmodulesUrl;
  }
  return Reason::kOk;
}

Reason check_submodule_path(std::string_view path) {
  if (path.empty() || path[0] == '-' || is_absolute(path) || has_control(path)) return Reason::kGitmodulesPath;
  if (any_piece(path, [](std::string_view p) { return p == ".." || is_dotgit_any(p); })) return Reason::kGitmodulesPath;
  return Reason::kOk;
}

// A strict reader of the git-config subset a .gitmodules holds: comments, [section] and
// [section "subsection"] headers, key = value lines with git's quoting and escapes, and
// backslash-newline continuations. Anything else is unparsable.
class ConfigReader {
 public:
  explicit ConfigReader(std::string_view text) : s_(text) {}
  // Why run() stopped when it said unparsable: a refused submodule name, or unparsable.
  [[nodiscard]] Reason refused() const { return refused_; }

  Reason run() {
    while (i_ < s_.size()) {
      skip_blank();
      if (i_ >= s_.size()) break;
      const char c = s_[i_];
      if (c == '\n') {
        ++i_;
      } else if (c == '#' || c == ';') {
        skip_line();
      } else if (c == '[') {
        if (!header()) return Reason::kGitmodulesUnparsable;
      } else if (is_alpha(c)) {
        std::string key, value;
        if (!entry(key, value)) return Reason::kGitmodulesUnparsable;
        if (in_submodule_) {
          if (const Reason r = check_key(key, value); r != Reason::kOk) return r;
        }
      } else {
        return Reason::kGitmodulesUnparsable;
      }
    }
    return Reason::kOk;
  }

 private:
  static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static bool is_key_char(char c) { return is_alpha(c) || (c >= '0' && c <= '9') || c == '-'; }
  void skip_blank() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  void skip_line() {
    while (i_ < s_.size() && s_[i_] != '\n') ++i_;
  }
  // After a header or a value: blanks, then a comment or the end of the line.
  bool line_end() {
    skip_blank();
    if (i_ >= s_.size() || s_[i_] == '\n') return true;
    if (s_[i_] == '#' || s_[i_] == ';') {
      skip_line();
      return true;
    }
    return false;
  }

  bool header() {
    ++i_;  // '['
    std::string name;
    while (i_ < s_.size() && (is_key_char(s_[i_]))) name += lower(s_[i_++]);
    if (name.empty() || i_ >= s_.size()) return false;
    subsection_.clear();
    bool has_sub = false;
    if (s_[i_] == ' ' || s_[i_] == '\t') {
      skip_blank();
      if (i_ >= s_.size() || s_[i_] != '"') return false;
      ++i_;
      has_sub = true;
      for (;;) {
        if (i_ >= s_.size() || s_[i_] == '\n') return false;
        char c = s_[i_++];
        if (c == '"') break;
        if (c == '\\') {
          if (i_ >= s_.size() || s_[i_] == '\n') return false;
          c = s_[i_++];
        }
        subsection_ += c;
      }
    }
    if (i_ >= s_.size() || s_[i_] != ']') return false;
    ++i_;
    in_submodule_ = name == "submodule";
    if (in_submodule_) {
      if (!has_sub) return false;
      if (const Reason r = check_submodule_name(subsection_); r != Reason::kOk) {
        refused_ = r;
        return false;
      }
    }
    return line_end();
  }

  bool entry(std::string& key, std::string& value) {
    while (i_ < s_.size() && is_key_char(s_[i_])) key += lower(s_[i_++]);
    skip_blank();
    if (i_ >= s_.size() || s_[i_] == '\n') return true;  // a bare key is boolean true
    if (s_[i_] == '#' || s_[i_] == ';') {
      skip_line();
      return true;
    }
    if (s_[i_] != '=') return false;
    ++i_;
    skip_blank();
    bool quoted = false;
    std::size_t keep = 0;  // value length up to the last character that is not trailing blank
    for (;;) {
      if (i_ >= s_.size() || s_[i_] == '\n') {
        if (quoted) return false;
        break;
      }
      const char c = s_[i_++];
      if (!quoted && (c == '#' || c == ';')) {
        skip_line();
        break;
      }
      if (c == '"') {
        quoted = !quoted;
        keep = value.size();
        continue;
      }
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        const char e = s_[i_++];
        if (e == '\n') continue;  // continuation
        if (e == 'n') value += '\n';
        else if (e == 't') value += '\t';
        else if (e == 'b') value += '\b';
        else if (e == '\\' || e == '"') value += e;
        else return false;
        keep = value.size();
        continue;
      }
      value += c;
      if (quoted || (c != ' ' && c != '\t' && c != '\r')) keep = value.size();
    }
    value.resize(keep);
    return true;
  }

  Reason check_key(const std::string& key, const std::string& value) {
    if (key == "url") return check_submodule_url(value);
    if (key == "path") return check_submodule_path(value);
    if (key == "update" && !value.empty() && value[0] == '!') return Reason::kGitmodulesUpdate;
    return Reason::kOk;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  bool in_submodule_ = false;
  std::string subsection_;
  Reason refused_ = Reason::kGitmodulesUnparsable;
};

}  // namespace

std::string_view reason_word(Reason reason) {
  switch (reason) {
    case Reason::kUnchecked: return "unchecked";
    case Reason::kOk: return "ok";
    case Reason::kMalformedTree: return "malformed-tree";
    case Reason::kEmptyName: return "empty-name";
    case Reason::kDotName: return "dot-name";
    case Reason::kDotDotName: return "dot-dot-name";
    case Reason::kSlashInName: return "slash-in-name";
    case Reason::kBackslashInName: return "backslash-in-name";
    case Reason::kNulInName: return "nul-in-name";
    case Reason::kNameTooLong: return "name-too-long";
    case Reason::kDotGit: return "dot-git";
    case Reason::kDotGitNtfs: return "dot-git-ntfs";
    case Reason::kDotGitHfs: return "dot-git-hfs";
    case Reason::kGitmodulesSpelling: return "gitmodules-spelling";
    case Reason::kDotFileNotFile: return "dot-file-not-a-file";
    case Reason::kBadMode: return "bad-mode";
    case Reason::kDuplicateEntry: return "duplicate-entry";
    case Reason::kTreeNotSorted: return "tree-not-sorted";
    case Reason::kGitmodulesUnparsable: return "gitmodules-unparsable";
    case Reason::kGitmodulesTooLarge: return "gitmodules-too-large";
    case Reason::kGitmodulesName: return "gitmodules-name";
    case Reason::kGitmodulesUrl: return "gitmodules-url";
    case Reason::kGitmodulesPath: return "gitmodules-path";
    case Reason::kGitmodulesUpdate: return "gitmodules-update";
    case Reason::kLinkTargetEmpty: return "link-target-empty";
    case Reason::kLinkTargetNul: return "link-target-nul";
    case Reason::kLinkTargetTooLong: return "link-target-too-long";
    case Reason::kLinkIntoGitDir: return "link-into-git-dir";
  }
  return "unchecked";
}

bool kind_of_mode(std::uint32_t mode, EntryKind& kind) {
  switch (mode) {
    case kModeTree: kind = EntryKind::kTree; return true;
    case kModeBlob: kind = EntryKind::kBlob; return true;
    case kModeExecutable: kind = EntryKind::kExecutable; return true;
    case kModeSymlink: kind = EntryKind::kSymlink; return true;
    case kModeGitlink: kind = EntryKind::kGitlink; return true;
    default: return false;
  }
}

Reason check_name(std::string_view name) {
  if (name.empty()) return Reason::kEmptyName;
  if (name.size() > kMaxEntryNameBytes) return Reason::kNameTooLong;
  if (name.find('\0') != std::string_view::npos) return Reason::kNulInName;
  if (name.find('/') != std::string_view::npos) return Reason::kSlashInName;
  if (name.find('\\') != std::string_view::npos) return Reason::kBackslashInName;
  if (name == ".") return Reason::kDotName;
  if (name == "..") return Reason::kDotDotName;
  if (iequals(name, ".git")) return Reason::kDotGit;
  if (is_ntfs_dotgit(name)) return Reason::kDotGitNtfs;
  if (is_hfs_dot(name, "git")) return Reason::kDotGitHfs;
  if (!is_gitmodules(name) && is_spelling_of(name, kGitmodules)) return Reason::kGitmodulesSpelling;
  return Reason::kOk;
}

bool is_gitmodules(std::string_view name) { return name == ".gitmodules"; }

Reason check_entry(std::string_view name, std::uint32_t mode) {
  if (const Reason r = check_name(name); r != Reason::kOk) return r;
  EntryKind kind = EntryKind::kBlob;
  if (!kind_of_mode(mode, kind)) return Reason::kBadMode;
  switch (kind) {
    case EntryKind::kBlob:
    case EntryKind::kExecutable: return Reason::kOk;
    case EntryKind::kTree:
    case EntryKind::kSymlink:
    case EntryKind::kGitlink:
      for (const DotFile& f : kDotFiles)
        if (is_spelling_of(name, f)) return Reason::kDotFileNotFile;
      return Reason::kOk;
  }
  return Reason::kUnchecked;
}

int compare_entries(std::string_view a, bool a_tree, std::string_view b, bool b_tree) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  unsigned char c1 = n < a.size() ? static_cast<unsigned char>(a[n]) : (a_tree ? '/' : 0);
  unsigned char c2 = n < b.size() ? static_cast<unsigned char>(b[n]) : (b_tree ? '/' : 0);
  return c1 < c2 ? -1 : (c1 > c2 ? 1 : 0);
}

TreeCheck check_tree(std::string_view bytes, std::size_t id_bytes) {
  TreeCheck out;
  std::size_t i = 0;
  while (i < bytes.size()) {
    // Mode: 1 to 6 octal digits, no leading zero (git writes "40000", never "040000").
    std::uint32_t mode = 0;
    const std::size_t mode_start = i;
    while (i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '7' && i - mode_start < 7) mode = mode * 8 + static_cast<std::uint32_t>(bytes[i++] - '0');
    const std::size_t mode_len = i - mode_start;
    if (mode_len == 0 || mode_len > 6 || i >= bytes.size() || bytes[i] != ' ') {
      out.reason = Reason::kMalformedTree;
      out.entry = out.entries.size();
      return out;
    }
    const bool zero_padded = bytes[mode_start] == '0';
    ++i;
    const std::size_t nul = bytes.find('\0', i);
    if (nul == std::string_view::npos || bytes.size() - (nul + 1) < id_bytes) {
      out.reason = Reason::kMalformedTree;
      out.entry = out.entries.size();
      return out;
    }
    Entry e{zero_padded ? 0u : mode, bytes.substr(i, nul - i), bytes.substr(nul + 1, id_bytes)};
    i = nul + 1 + id_bytes;
    out.entries.push_back(e);
  }
  for (std::size_t k = 0; k < out.entries.size(); ++k) {
    const Entry& e = out.entries[k];
    if (const Reason r = check_entry(e.name, e.mode); r != Reason::kOk) {
      out.reason = r;
      out.entry = k;
      return out;
    }
    if (k > 0) {
      const Entry& p = out.entries[k - 1];
      if (compare_entries(p.name, p.mode == kModeTree, e.name, e.mode == kModeTree) >= 0) {
        out.reason = p.name == e.name ? Reason::kDuplicateEntry : Reason::kTreeNotSorted;
        out.entry = k;
        return out;
      }
    }
  }
  // A blob and a tree of one name sort apart ("a" < "a.b" < "a/"): look for equal names too.
  std::vector<std::string_view> names;
  names.reserve(out.entries.size());
  for (const Entry& e : out.entries) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  if (std::adjacent_find(names.begin(), names.end()) != names.end()) {
    const std::string_view twice = *std::adjacent_find(names.begin(), names.end());
    out.reason = Reason::kDuplicateEntry;
    for (std::size_t k = out.entries.size(); k-- > 0;)
      if (out.entries[k].name == twice) {
        out.entry = k;
        break;
      }
    return out;
  }
  out.reason = Reason::kOk;
  return out;
}

Reason check_gitmodules(std::string_view text) {
  if (text.size() > kMaxGitmodulesBytes) return Reason::kGitmodulesTooLarge;
  if (text.find('\0') != std::string_view::npos) return Reason::kGitmodulesUnparsable;
  ConfigReader reader(text);
  const Reason r = reader.run();
  if (r == Reason::kGitmodulesUnparsable) return reader.refused();
  return r;
}

LinkCheck check_link_target(std::string_view link_path, std::string_view target) {
  LinkCheck out;
  if (target.empty()) {
    out.reason = Reason::kLinkTargetEmpty;
    return out;
  }
  if (target.find('\0') != std::string_view::npos) {
    out.reason = Reason::kLinkTargetNul;
    return out;
  }
  if (target.size() > kMaxLinkTargetBytes) {
    out.reason = Reason::kLinkTargetTooLong;
    return out;
  }
  if (any_piece(target, [](std::string_view p) { return is_dotgit_any(p); })) {
    out.reason = Reason::kLinkIntoGitDir;
    return out;
  }
  if (is_absolute(target)) {
    out.leaves_tree = true;
  } else {
    long depth = static_cast<long>(std::count(link_path.begin(), link_path.end(), '/'));
    any_piece(target, [&](std::string_view p) {
      if (p.empty() || p == ".") return false;
      depth += p == ".." ? -1 : 1;
      if (depth < 0) out.leaves_tree = true;
      return depth < 0;
    });
  }
  out.reason = Reason::kOk;
  return out;
}

}  // namespace policy::git_tree
