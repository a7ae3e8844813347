// Reproducible from any checkout: a second checkout of the same sources, in another folder, built
// from nothing of this build folder (image/testing/build-elsewhere.sh says what it does and what it
// caches), gives the same gatekeeper and space image IDs as this build. Every source and build
// path is mapped out of the objects (cmake/PathMap.cmake); before that, the gatekeeper binary
// carried about two hundred absolute paths of the BoringSSL source folder and the two gatekeeper
// image IDs differed while the space image IDs matched.
//
// A full second build of the gatekeeper (BoringSSL included, cached under
// build/<preset>/repro-cache once per recipe) costs about two minutes of CPU, so the image IDs
// themselves are compared, not a proxy for them. No Docker engine is needed: the archives are
// written with --no-load and the ID is the sha256 of their config.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "image/testing/archive.h"
#include "image/testing/run.h"

namespace {

namespace fs = std::filesystem;
using image_testing::describe;
using image_testing::read_file;
using image_testing::run;

const std::string kSourceDir = GK_SOURCE_DIR;
const std::string kBinaryDir = GK_BINARY_DIR;
constexpr std::chrono::seconds kSecondBuildTimeout{1700};

// The printable strings (at least 8 bytes) of one binary that the other lacks: what a leaked path
// looks like in a failure message.
std::vector<std::string> strings_only_in(const std::string& a, const std::string& b) {
  auto strings = [](const std::string& bytes) {
    std::set<std::string> out;
    std::string run_of;
    for (const char c : bytes) {
      if (std::isprint(static_cast<unsigned char>(c))) {
        run_of.push_back(c);
        continue;
      }
      if (run_of.size() >= 8) out.insert(run_of);
      run_of.clear();
    }
    return out;
  };
  const std::set<std::string> in_b = strings(b);
  std::vector<std::string> only;
  for (const std::string& s : strings(a))
    if (in_b.count(s) == 0 && only.size() < 10) only.push_back(s);
  return only;
}

TEST(ReproducibleBuildTest, SecondCheckoutInAnotherFolderGivesTheSameImageIds) {
  std::string pattern = (fs::temp_directory_path() / "gk-repro-out-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
  const std::string out = pattern;
  const std::vector<std::string> argv = {"bash", kSourceDir + "/image/testing/build-elsewhere.sh", kSourceDir, kBinaryDir,
                                         kBinaryDir + "/repro-cache", out};
  const image_testing::RunOutcome outcome = run(argv, kSecondBuildTimeout);
  ASSERT_EQ(outcome.exit_code, 0) << describe(argv, outcome) << "\n" << outcome.out;

  for (const std::string name : {"gatekeeper", "space-default"}) {
    const std::string here = read_file(kBinaryDir + "/package-images/" + name + ".id");
    const std::string there = read_file(out + "/" + name + ".id");
    ASSERT_EQ(here.rfind("sha256:", 0), 0u) << kBinaryDir << "/package-images/" << name << ".id: '" << here << "'";
    EXPECT_EQ(here, there) << name << ": this build and the second checkout give different image IDs";
  }
  const std::string binary_here = read_file(kBinaryDir + "/image/stripped/gatekeeper");
  const std::string binary_there = read_file(out + "/gatekeeper");
  ASSERT_FALSE(binary_here.empty());
  if (binary_here != binary_there) {
    std::string only;
    for (const std::string& s : strings_only_in(binary_here, binary_there)) only += "\n  here only: " + s;
    for (const std::string& s : strings_only_in(binary_there, binary_here)) only += "\n  there only: " + s;
    ADD_FAILURE() << "the stripped gatekeeper binaries differ (" << binary_here.size() << " and " << binary_there.size()
                  << " bytes)" << only;
  }
  std::error_code ignored;
  fs::remove_all(out, ignored);
}

}  // namespace
