// Object and tree checks for code out: what a tree object that comes out of a space may hold
// before any of it reaches the user's repository. Pure: bytes in, a reason word out.
//
// Refused, on every platform (a repository travels; a name harmless on Linux is a route into
// `.git` on a case-insensitive, NTFS or HFS+ checkout):
//   - names that are empty, `.`, `..`, or hold `/`, `\` (a folder separator to Git for Windows)
//     or NUL, or are longer than kMaxEntryNameBytes;
//   - `.git` in any case, its NTFS spellings (`.git` followed by dots or spaces, `git~1`, an
//     alternate data stream `.git::$INDEX_ALLOCATION`) and its HFS+ spellings (ignorable code
//     points U+200C-U+200F, U+202A-U+202E, U+206A-U+206F, U+FEFF anywhere in it)
//     (CVE-2014-9390, CVE-2019-1353);
//   - any spelling of `.gitmodules` other than exactly `.gitmodules` (case, NTFS short names
//     `gitmod~1` and `gi7eba~N`, trailing dots or spaces, HFS+ ignorables): a checkout would read
//     it as `.gitmodules` without its content having been checked (CVE-2018-11235);
//   - `.gitmodules`, `.gitattributes`, `.gitignore` and `.mailmap` (any spelling) as a symlink or
//     a folder (git would read the target; CVE-2021-21300 family);
//   - modes other than the five git writes: 40000, 100644, 100755, 120000, 160000 (a zero-padded
//     040000 or a 100664 is a tree built past git's own checks);
//   - a tree whose entries are not in git's order or name one entry twice.
// `.gitmodules` content (check_gitmodules): unparsable, a submodule name with a `..` piece or an
// absolute one, a url or path that starts with `-` (read as an option by a later git,
// CVE-2018-17456), a url with a control character or naming a transport helper (`ext::`, `fd::`,
// any `<helper>::`), a path with a `..` piece or an absolute one, an `update = !command`.
// Symlink targets (check_link_target) are reported, never followed: empty, NUL, over 4095 bytes,
// or a target through a `.git` folder (any spelling) refuses; absolute or above the top is
// reported as leaving the tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace policy::git_tree {

inline constexpr std::size_t kMaxEntryNameBytes = 4096;
inline constexpr std::size_t kMaxLinkTargetBytes = 4095;          // PATH_MAX less its NUL
inline constexpr std::size_t kMaxGitmodulesBytes = 1u << 20;

// Deny is the zero value: kUnchecked refuses like every reason but kOk.
enum class Reason : std::uint8_t {
  kUnchecked,
  kOk,
  kMalformedTree,        // not `<mode> <name>\0<id>` entries exactly
  kEmptyName,
  kDotName,              // "."
  kDotDotName,           // ".."
  kSlashInName,
  kBackslashInName,
  kNulInName,
  kNameTooLong,
  kDotGit,               // .git in any case
  kDotGitNtfs,           // .git. / .git  / git~1 / .git:stream
  kDotGitHfs,            // .git with HFS+ ignorable code points
  kGitmodulesSpelling,   // another spelling of .gitmodules
  kDotFileNotFile,       // .gitmodules/.gitattributes/.gitignore/.mailmap as link or folder
  kBadMode,
  kDuplicateEntry,
  kTreeNotSorted,
  kGitmodulesUnparsable,
  kGitmodulesTooLarge,
  kGitmodulesName,
  kGitmodulesUrl,
  kGitmodulesPath,
  kGitmodulesUpdate,
  kLinkTargetEmpty,
  kLinkTargetNul,
  kLinkTargetTooLong,
  kLinkIntoGitDir,
};

std::string_view reason_word(Reason reason);  // "ok", "dot-git", "bad-mode", ...

enum class EntryKind : std::uint8_t { kTree, kBlob, kExecutable, kSymlink, kGitlink };

inline constexpr std::uint32_t kModeTree = 040000;
inline constexpr std::uint32_t kModeBlob = 0100644;
inline constexpr std::uint32_t kModeExecutable = 0100755;
inline constexpr std::uint32_t kModeSymlink = 0120000;
inline constexpr std::uint32_t kModeGitlink = 0160000;

// False for any mode but the five git writes.
bool kind_of_mode(std::uint32_t mode, EntryKind& kind);

// One entry name (one path component), whatever its mode.
Reason check_name(std::string_view name);
// Name and mode together: the mode is one of the five, the dot-files are regular files.
Reason check_entry(std::string_view name, std::uint32_t mode);

// Exactly ".gitmodules" (the one spelling allowed; its blob goes to check_gitmodules).
bool is_gitmodules(std::string_view name);

struct Entry {
  std::uint32_t mode = 0;
  std::string_view name;
  std::string_view id;  // raw id bytes (id_bytes long)
};

struct TreeCheck {
  Reason reason = Reason::kUnchecked;
  std::size_t entry = 0;       // index of the entry refused (when it is one)
  std::vector<Entry> entries;  // every entry, views into the bytes given
};

// Parses a raw tree object (no header) strictly and checks every entry, the order and duplicates.
// id_bytes is 20 (SHA-1) or 32 (SHA-256).
TreeCheck check_tree(std::string_view bytes, std::size_t id_bytes);

// git's order: bytes compared, a tree compared as if its name ended in '/'.
int compare_entries(std::string_view a, bool a_tree, std::string_view b, bool b_tree);

Reason check_gitmodules(std::string_view text);

struct LinkCheck {
  Reason reason = Reason::kUnchecked;
  bool leaves_tree = false;  // absolute, or more `..` than the link's depth
};
// link_path: the link's own path from the top ("a/b/link"); target: the blob's bytes.
LinkCheck check_link_target(std::string_view link_path, std::string_view target);

}  // namespace policy::git_tree
