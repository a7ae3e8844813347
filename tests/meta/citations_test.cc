// Every citation resolves inside the repository (docs/decisions.md#comments-say-why): a path a
// comment or doc names exists, an anchor names a heading of that file, and nothing points at a
// document outside the repository or at an issue number of this project. A newcomer must be able
// to follow every citation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = GK_SOURCE_DIR;

// Files that hold planted paths as test data (bad citations here; the planted checkout of the
// repository invariants' tests), so the repository scan skips them.
bool is_test_data(const std::string& rel) {
  return rel == "tests/meta/citations_test.cc" || rel == "tests/meta/planted_tree_test.cc";
}

// Documents that live outside this repository, and section marks that only make sense in them.
const std::regex kOutside(
    R"re(\.\./shared/|shared/(reference|design)/|reference-(gatekeeper|host-side)(\.md)?\b|)re"
    R"re(peers-egress\.md|escape-and-hardening\.md|anchor-aesthetics\.md|\breference ?§)re",
    std::regex::icase);
// The design notes outside the repository; upper case, so docs/architecture.md is not one.
const std::regex kOutsideDesign(R"re(\b(ARCHITECTURE|STYLE)\.md)re");
// An issue number of this project; upstream projects are cited as owner/name#N and pass.
const std::regex kIssue(R"re(\bissues? ?#[0-9]+)re", std::regex::icase);
// A root-relative citation starts with one of the top-level folders.
const std::regex kRootPath(
    R"re((docs|policy|appliance|controller|escape-suite|image|seccomp-profiles|tests|cmake|)re"
    R"re(\.ci)/)re"
    R"re([A-Za-z0-9_./-]*(#[A-Za-z0-9_-]+)?)re");
const std::regex kMarkdownLink(R"re(\]\(([^)\s]+)\))re");
const std::regex kHeading(R"re(^#{1,6}\s+(.*?)\s*#*\s*$)re");

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces become dashes.
std::string github_slug(std::string_view heading) {
  std::string slug;
  for (const char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 'A' && u <= 'Z') {
      slug.push_back(static_cast<char>(u - 'A' + 'a'));
    } else if ((u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || c == '-' || c == '_') {
      slug.push_back(c);
    } else if (c == ' ') {
      slug.push_back('-');
    } else if (u >= 0x80) {
      slug.push_back(c);  // GitHub keeps letters outside ASCII
    }
  }
  return slug;
}

std::set<std::string> anchors_of(const std::string& markdown) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  std::istringstream lines(markdown);
  std::string line;
  bool fenced = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("```")) fenced = !fenced;
    std::smatch m;
    if (fenced || !std::regex_match(line, m, kHeading)) continue;
    const std::string slug = github_slug(m[1].str());
    const int n = seen[slug]++;
    anchors.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return anchors;
}

// Checks one cited target, `path` already resolved against the repository root.
void check_target(const fs::path& root, const std::string& shown, const fs::path& path,
                  const std::string& anchor, const std::string& where,
                  std::vector<std::string>& problems) {
  const fs::path full = (root / path).lexically_normal();
  const std::string rel = full.lexically_relative(root).generic_string();
  if (rel.empty() || rel.starts_with("..")) {
    problems.push_back(where + ": cites " + shown + ", which is outside the repository");
    return;
  }
  if (!fs::exists(full)) {
    problems.push_back(where + ": cites " + shown + ", which does not exist");
    return;
  }
  if (anchor.empty()) return;
  if (full.extension() != ".md" || !anchors_of(read_file(full)).contains(anchor)) {
    problems.push_back(where + ": cites " + shown + ", but no heading of " + rel + " makes #" +
                       anchor);
  }
}

// Every problem in one file's text; `file` is its path relative to the repository root.
std::vector<std::string> find_problems(const fs::path& root, const std::string& file,
                                       const std::string& text) {
  std::vector<std::string> problems;
  const bool markdown = file.ends_with(".md");
  const fs::path dir = fs::path(file).parent_path();
  const std::set<std::string> own_anchors = markdown ? anchors_of(text) : std::set<std::string>{};
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = file + ":" + std::to_string(number);
    std::smatch m;
    if (std::regex_search(line, m, kOutside) || std::regex_search(line, m, kOutsideDesign)) {
      problems.push_back(where + ": cites a document outside the repository (" + m.str() + ")");
    }
    if (std::regex_search(line, m, kIssue)) {
      problems.push_back(where + ": cites an issue number (" + m.str() +
                         "); write the behaviour it refers to");
    }
    // An #include names a header the compiler already checks (and may be a generated one).
    const bool include = line.find_first_not_of(" \t") != std::string::npos &&
                         line.compare(line.find_first_not_of(" \t"), 8, "#include") == 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kRootPath);
         !include && it != std::sregex_iterator(); ++it) {
      const auto at = static_cast<std::size_t>(it->position());
      if (at > 0) {
        const char before = line[at - 1];
        // Part of a longer path, a URL or a word ("/tmp/tests/x", "foo.docs/"): not a citation.
        if (std::isalnum(static_cast<unsigned char>(before)) || before == '/' || before == '.' ||
            before == '-' || before == '_') {
          continue;
        }
      }
      std::string cited = (*it)[0].str();
      std::string anchor;
      if (const auto hash = cited.find('#'); hash != std::string::npos) {
        anchor = cited.substr(hash + 1);
        cited.resize(hash);
      }
      while (!cited.empty() && (cited.back() == '.' || cited.back() == '/')) cited.pop_back();
      check_target(root, (*it)[0].str(), cited, anchor, where, problems);
    }
    if (!markdown) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kMarkdownLink);
         it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1].str();
      if (target.find("://") != std::string::npos || target.starts_with("mailto:")) continue;
      std::string anchor;
      if (const auto hash = target.find('#'); hash != std::string::npos) {
        anchor = target.substr(hash + 1);
        target.resize(hash);
      }
      if (target.empty()) {
        if (!own_anchors.contains(anchor)) {
          problems.push_back(where + ": links #" + anchor + ", which no heading here makes");
        }
        continue;
      }
      check_target(root, (*it)[1].str(), dir / target, anchor, where, problems);
    }
  }
  return problems;
}

bool is_scanned(const fs::path& rel) {
  static const std::set<std::string> kExtensions = {".cc", ".h",    ".c",  ".cpp", ".hpp",
                                                    ".md", ".txt",  ".cmake", ".json", ".sh",
                                                    ".py", ".manifest"};
  const std::string first = rel.begin()->string();
  return kExtensions.contains(rel.extension().string()) || first == ".ci";
}

std::vector<fs::path> repository_files() {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path rel = it->path().lexically_relative(kRoot);
    const std::string first = rel.begin()->string();
    if (it->is_directory() && std::distance(rel.begin(), rel.end()) == 1 &&
        (first == ".git" || first == "build" || first == ".cache")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_scanned(rel) && !is_test_data(rel.generic_string())) {
      files.push_back(rel);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(DocsCitationsTest, EveryCitationResolvesInsideTheRepository) {
  const auto files = repository_files();
  ASSERT_GT(files.size(), 100u) << "the scan found too few files under " << kRoot;
  std::vector<std::string> problems;
  for (const auto& rel : files) {
    auto found = find_problems(kRoot, rel.generic_string(), read_file(kRoot / rel));
    problems.insert(problems.end(), found.begin(), found.end());
  }
  std::string report;
  for (const auto& p : problems) report += p + "\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " citation problems:\n" << report;
}

// The docs this project's comments cite exist and hold the sections code relies on.
TEST(DocsCitationsTest, DocsHoldTheCitedSections) {
  const auto anchors = anchors_of(read_file(kRoot / "docs" / "reference-behaviour.md"));
  for (const char* a : {"corridor-port-parsing", "corridor-order-of-checks", "journal",
                        "decision-words", "window-path-rule", "blocked-addresses"}) {
    EXPECT_TRUE(anchors.contains(a)) << "docs/reference-behaviour.md lost section #" << a;
  }
}

// The checker itself, on planted citations: each of these must be caught.
TEST(DocsCitationsTest, FlagsAPlantedPathThatDoesNotExist) {
  const auto p = find_problems(kRoot, "policy/x.cc", "// see policy/no_such_file.cc for why\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("policy/x.cc:1: cites policy/no_such_file.cc, which does not exist"),
            std::string::npos)
      << p[0];
}

TEST(DocsCitationsTest, FlagsAPlantedAnchorNoHeadingMakes) {
  const auto p =
      find_problems(kRoot, "policy/x.cc", "// docs/reference-behaviour.md#no-such-section\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("no heading of docs/reference-behaviour.md makes #no-such-section"),
            std::string::npos)
      << p[0];
}

TEST(DocsCitationsTest, FlagsPlantedCitationsOutsideTheRepository) {
  for (const char* line :
       {"// ../shared/reference/notes.md", "// reference-gatekeeper.md §2.1",
        "// (reference §4.2)", "// STYLE.md rule 4", "# ARCHITECTURE.md \"Folders\"",
        "// peers-egress.md §5.3", "// escape-and-hardening.md 2.2",
        "// reference-host-side §5.4"}) {
    EXPECT_EQ(find_problems(kRoot, "policy/x.cc", line).size(), 1u) << line;
  }
}

TEST(DocsCitationsTest, FlagsAPlantedIssueNumber) {
  EXPECT_EQ(find_problems(kRoot, "policy/x.cc", "// fixed for issue #12\n").size(), 1u);
  EXPECT_EQ(find_problems(kRoot, "policy/x.cc", "# Issue #5 item 1: confined\n").size(), 1u);
  EXPECT_TRUE(find_problems(kRoot, "policy/x.cc", "// see moby#46762\n").empty());
}

TEST(DocsCitationsTest, FlagsAPlantedMarkdownLinkThatDoesNotResolve) {
  EXPECT_EQ(find_problems(kRoot, "policy/README.md", "[x](../docs/nope.md)\n").size(), 1u);
  EXPECT_EQ(find_problems(kRoot, "policy/README.md", "[x](#nowhere)\n").size(), 1u);
  EXPECT_EQ(find_problems(kRoot, "policy/README.md", "[x](../../outside.md)\n").size(), 1u);
}

TEST(DocsCitationsTest, AcceptsCitationsThatResolve) {
  EXPECT_TRUE(find_problems(kRoot, "policy/x.cc",
                            "// docs/reference-behaviour.md#corridor-port-parsing, policy/.\n")
                  .empty());
  EXPECT_TRUE(find_problems(kRoot, "policy/README.md",
                            "# Title\n[a](../docs/decisions.md#policy-is-pure) [b](#title)\n")
                  .empty());
  // An #include is the compiler's to check, and may name a header the build generates.
  EXPECT_TRUE(
      find_problems(kRoot, "policy/x.cc", "#include \"tests/generated_by_build.h\"\n").empty());
  // Paths inside longer paths and URLs are not citations.
  EXPECT_TRUE(find_problems(kRoot, "policy/x.cc",
                            "// /tmp/tests/none https://example.com/docs/none.md\n")
                  .empty());
}

TEST(DocsCitationsTest, SlugsFollowGitHub) {
  EXPECT_EQ(github_slug("Create, start and stop order"), "create-start-and-stop-order");
  EXPECT_EQ(github_slug("`gatekeeper serve`"), "gatekeeper-serve");
  EXPECT_EQ(github_slug("glibc static link and NSS"), "glibc-static-link-and-nss");
}

}  // namespace
