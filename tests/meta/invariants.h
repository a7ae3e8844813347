// Repository invariants as functions of a checkout root, so each can be run on the real tree
// (repository_invariants_test.cc) and on a planted tree that breaks it on purpose
// (planted_tree_test.cc): a check that a broken tree cannot turn red is no check.
// Each returns one line per violation, naming the file (relative to the root) and the rule.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gk_meta {

using Violations = std::vector<std::string>;

// Test code is decided by the path inside the repository (tests/..., *_test.*), never by where
// the checkout happens to sit (a checkout under /home/me/tests/ is not all test code).
bool is_test_source(const std::filesystem::path& root, const std::filesystem::path& path);

// Source files (.cc .h .c .cpp .hpp) under root/folder, sorted.
std::vector<std::filesystem::path> sources_under(const std::filesystem::path& root, const std::string& folder);

// Text with // and /* */ comments replaced by spaces; string and character literals kept.
std::string strip_comments(const std::string& text);

// policy/ is pure: standard headers from a fixed list only (no <cstdlib>: getenv, system, rand),
// policy/ headers only, and its CMakeLists.txt links nothing.
Violations policy_purity(const std::filesystem::path& root);

// Product code never runs a shell: no system()/popen(), no sh/bash/dash/zsh by name or absolute
// path, and no shell flag that takes a command (-c, -ec, -xc, -lc, ...).
Violations shell_calls(const std::filesystem::path& root);

// Every decision word is asserted by a test: its string literal appears inside the arguments of an
// EXPECT_*/ASSERT_* macro in a test source, not merely in a table, a helper or a comment.
Violations untested_decision_words(const std::filesystem::path& root);

// The appliance never starts a program or a process through a raw syscall: no SYS_/__NR_ name of
// execve, execveat, fork, vfork, clone or clone3, and no syscall() with their numbers.
Violations raw_exec_syscalls(const std::filesystem::path& root);

// Text with comments and the contents of string and character literals replaced by spaces: what
// the compiler sees as code.
std::string code_only(const std::string& text);

// Text becomes a number only through policy::parse_number (policy/number.h), in every C++ file of
// every top-level folder (product, tests, harnesses, benchmarks): no atoi/atol/atof, strto*,
// std::sto*, *scanf, and no std::from_chars outside that header. Each of those answers 0, a
// clamped value or the digits a text starts with when the text is not a number, or throws.
Violations unchecked_number_reads(const std::filesystem::path& root);

}  // namespace gk_meta
