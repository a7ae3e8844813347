#include "tests/meta/invariants.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "policy/decision.h"

namespace fs = std::filesystem;

namespace gk_meta {
namespace {

// Product folders: what ships or runs against a space. tests/ and image/testing/ are not.
const char* const kProductFolders[] = {"appliance", "controller", "policy", "escape-suite"};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string inside_repo(const fs::path& root, const fs::path& path) {
  return path.lexically_relative(root).generic_string();
}

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cc" || ext == ".h" || ext == ".c" || ext == ".cpp" || ext == ".hpp";
}

// Skips a string or character literal starting at text[at] (a quote); returns the index after it.
std::size_t skip_literal(const std::string& text, std::size_t at) {
  const char quote = text[at];
  // Raw string R"delim( ... )delim"
  if (quote == '"' && at > 0 && text[at - 1] == 'R') {
    const std::size_t open = text.find('(', at);
    if (open != std::string::npos) {
      const std::string close = ")" + text.substr(at + 1, open - at - 1) + "\"";
      const std::size_t end = text.find(close, open);
      return end == std::string::npos ? text.size() : end + close.size();
    }
  }
  std::size_t i = at + 1;
  while (i < text.size() && text[i] != quote && text[i] != '\n') {
    i += text[i] == '\\' ? 2 : 1;
  }
  return std::min(i + 1, text.size());
}

// The argument text of every EXPECT_*/ASSERT_* macro call in comment-free text.
std::vector<std::string> assertion_arguments(const std::string& text) {
  static const std::regex macro(R"re(\b(EXPECT|ASSERT)_[A-Z_]+\s*\()re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), macro); it != std::sregex_iterator(); ++it) {
    const std::size_t open = static_cast<std::size_t>(it->position() + it->length());
    int depth = 1;
    std::size_t i = open;
    while (i < text.size() && depth > 0) {
      const char c = text[i];
      if (c == '"' || c == '\'') {
        i = skip_literal(text, i);
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')') --depth;
      ++i;
    }
    out.push_back(text.substr(open, i - open));
  }
  return out;
}

}  // namespace

bool is_test_source(const fs::path& root, const fs::path& path) {
  const std::string inside = inside_repo(root, path);
  // testing/ folders hold test support (fixtures, fakes) that no product binary links.
  return path.stem().string().ends_with("_test") || inside.starts_with("tests/") ||
         inside.find("/testing/") != std::string::npos;
}

std::vector<fs::path> sources_under(const fs::path& root, const std::string& folder) {
  std::vector<fs::path> out;
  const fs::path dir = root / folder;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && is_source(entry.path())) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string strip_comments(const std::string& text) {
  std::string out = text;
  std::size_t i = 0;
  while (i < out.size()) {
    const char c = out[i];
    if (c == '"' || c == '\'') {
      // A digit separator (1'000) is not a character literal.
      if (c == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(out[i - 1]))) {
        ++i;
        continue;
      }
      i = skip_literal(out, i);
      continue;
    }
    if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
      continue;
    }
    if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      const std::size_t end = out.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
      continue;
    }
    ++i;
  }
  return out;
}

Violations policy_purity(const fs::path& root) {
  // No <cstdlib> (getenv, system, rand, malloc), <cstdio>, <fstream>, <chrono>, <thread>,
  // <random>, <filesystem>, <iostream>: policy/ is facts in, a decision out.
  static const std::set<std::string> allowed = {
      "algorithm", "array",    "cctype",   "charconv", "cstddef",     "cstdint",          "cstring",
      "limits",    "map",      "memory",   "optional", "set",         "span",             "string",
      "string_view", "utility", "variant", "vector",   "compare",     "iterator",         "type_traits",
      "initializer_list", "functional", "bit", "cassert", "climits",  "tuple",            "unordered_map",
      "unordered_set", "numeric"};
  static const std::regex include_line(R"re(^\s*#\s*include\s*([<"])([^>"]+)[>"])re");
  Violations out;
  const auto sources = sources_under(root, "policy");
  if (sources.empty()) out.push_back("policy/: no source found");
  for (const auto& path : sources) {
    if (is_test_source(root, path)) continue;  // tests may use anything
    std::istringstream lines(read_file(path));
    std::string line;
    while (std::getline(lines, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string header = m[2];
      if (m[1] == "\"" && !header.starts_with("policy/")) {
        out.push_back(inside_repo(root, path) + " includes \"" + header + "\": policy/ includes only policy/ headers");
      } else if (m[1] == "<" && !allowed.count(header)) {
        out.push_back(inside_repo(root, path) + " includes <" + header + ">: not on policy/'s pure-header list");
      }
    }
  }
  // What policy/ links: nothing. A library linked in brings its I/O with it whatever the includes.
  static const std::regex link(R"re(\b(target_link_libraries|link_libraries|target_link_options|link_directories|target_link_directories)\s*\()re",
                               std::regex::icase);
  const fs::path cmake = root / "policy" / "CMakeLists.txt";
  std::istringstream lines(read_file(cmake));
  std::string line;
  while (std::getline(lines, line)) {
    line = line.substr(0, line.find('#'));
    if (std::regex_search(line, link)) {
      out.push_back("policy/CMakeLists.txt links something: " + line);
    }
  }
  return out;
}

Violations shell_calls(const fs::path& root) {
  // A shell by name ("sh", "bash", ...) or by absolute path ("/bin/sh", "/usr/bin/env bash"),
  // a flag that hands a shell a command string ("-c", "-ec", "-xec", "-lc", "--command"), and
  // system()/popen().
  static const std::regex call(R"re(\b(system|popen)\s*\()re");
  static const std::regex shell(R"re("(/usr)?(/local)?(/s?bin/)?(ba|da|z|k|c|tc|fi|a)?sh")re");
  // git's own `-c name=value` (a configuration value, not a command string) is not a shell's flag.
  static const std::regex command_flag(R"re("-[a-z]*c"(?!\s*,\s*"[A-Za-z0-9_.-]+=)|"--command")re");
  // The one shell we run, a constant script whose arguments are positional ($1…), quoted, never
  // interpolated into its text: the docker-ssh place's disk scripts, run on the engine's host by a
  // one-shot helper container (chroot into the host's root), with spacectl's own paths and numbers
  // as arguments and nothing a space wrote (controller/remote_disk.cc; the host has no spacectl to
  // run). Any other file naming a shell or passing a command flag fails.
  static const std::set<std::string> kInsideSpaceScripts = {"controller/remote_disk.cc"};
  Violations out;
  for (const char* folder : kProductFolders) {
    for (const auto& path : sources_under(root, folder)) {
      if (is_test_source(root, path)) continue;
      const std::string text = strip_comments(read_file(path));
      if (std::regex_search(text, call)) out.push_back(inside_repo(root, path) + " calls system() or popen()");
      const bool names_shell = std::regex_search(text, shell);
      if (names_shell && kInsideSpaceScripts.count(inside_repo(root, path)) != 0) continue;
      if (names_shell) out.push_back(inside_repo(root, path) + " names a shell");
      if (std::regex_search(text, command_flag)) {
        out.push_back(inside_repo(root, path) + " passes a shell's command flag (-c, -ec, ...)");
      }
    }
  }
  return out;
}

Violations untested_decision_words(const fs::path& root) {
  std::string asserted;
  for (const char* folder : {"policy", "appliance", "controller", "escape-suite", "image", "tests"}) {
    for (const auto& path : sources_under(root, folder)) {
      if (!is_test_source(root, path) || path.filename() == "planted_tree_test.cc") continue;
      for (const std::string& args : assertion_arguments(strip_comments(read_file(path)))) {
        asserted += args;
        asserted += '\n';
      }
    }
  }
  Violations out;
  for (policy::Word word : policy::all_words()) {
    const std::string text(policy::word_text(word));
    if (asserted.find("\"" + text) == std::string::npos) {
      out.push_back("decision word '" + text + "' is asserted by no EXPECT_/ASSERT_ in a test");
    }
  }
  return out;
}

std::string code_only(const std::string& text) {
  std::string out = strip_comments(text);
  std::size_t i = 0;
  while (i < out.size()) {
    const char c = out[i];
    if ((c == '"' || c == '\'') &&
        !(c == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(out[i - 1])))) {
      const std::size_t end = skip_literal(out, i);
      for (std::size_t k = i + 1; k + 1 < end; ++k) {
        if (out[k] != '\n') out[k] = ' ';
      }
      i = end;
      continue;
    }
    ++i;
  }
  return out;
}

Violations unchecked_number_reads(const fs::path& root) {
  static const std::regex call(
      R"re(\b(atoi|atol|atoll|atof|strtol|strtoll|strtoul|strtoull|strtod|strtof|strtold|strtoimax|strtoumax|stoi|stol|stoll|stoul|stoull|stof|stod|stold|scanf|fscanf|sscanf|vsscanf|from_chars)\s*\()re");
  // The one checked reader: the whole text is the number or there is none.
  static const std::set<std::string> kTheReader = {"policy/number.h"};
  Violations out;
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && !name.starts_with(".") && !name.starts_with("build")) {
      folders.push_back(name);
    }
  }
  std::sort(folders.begin(), folders.end());
  for (const std::string& folder : folders) {
    for (const auto& path : sources_under(root, folder)) {
      if (kTheReader.count(inside_repo(root, path)) != 0) continue;
      const std::string text = code_only(read_file(path));
      std::smatch m;
      if (std::regex_search(text, m, call)) {
        out.push_back(inside_repo(root, path) + " reads a number with " + m[1].str() +
                      "(): use policy::parse_number (policy/number.h)");
      }
    }
  }
  return out;
}

Violations raw_exec_syscalls(const fs::path& root) {
  // x86-64 numbers: 56 clone, 57 fork, 58 vfork, 59 execve, 322 execveat, 435 clone3.
  static const std::regex named(R"re(\b(SYS|__NR)_(execve|execveat|fork|vfork|clone|clone3)\b)re");
  static const std::regex numbered(R"re(\bsyscall\s*\(\s*(56|57|58|59|322|435)\s*[,)])re");
  Violations out;
  for (const auto& path : sources_under(root, "appliance")) {
    if (is_test_source(root, path)) continue;
    const std::string text = strip_comments(read_file(path));
    if (std::regex_search(text, named) || std::regex_search(text, numbered)) {
      out.push_back(inside_repo(root, path) + " makes a raw exec/fork/clone syscall");
    }
  }
  return out;
}

}  // namespace gk_meta
