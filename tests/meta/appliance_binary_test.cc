// What the built appliance binary contains (docs/decisions.md#the-appliance-spawns-nothing): no
// libgit2, no way to start a program or a process, and no test-only trigger in the release build.
// Reads the ELF symbol table itself, so the test needs no binutils.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/meta/elf_reader.h"

namespace {

using meta::Elf;
using meta::parse_elf;
using meta::read_file;

const std::string kRelease = GK_BINARY_DIR "/bin/gatekeeper";
const std::string kTestBuild = GK_BINARY_DIR "/bin/gatekeeper-test";

// x86-64 syscall numbers that start a program or a process without clone(2)'s thread flags.
// clone (56) and clone3 (435) stay: glibc's pthread_create makes them.
struct RawSyscall {
  std::uint32_t number;
  const char* name;
};
constexpr RawSyscall kExecOrFork[] = {{57, "fork"}, {58, "vfork"}, {59, "execve"}, {322, "execveat"}};

// Raw syscall instructions (0f 05) that load one of kExecOrFork into eax/rax at most 16 bytes
// before: `mov $N,%eax` (b8 imm32) or `mov $N,%rax` (48 c7 c0 imm32). libc's wrappers are found
// by their symbols; this finds an inline `syscall` that has no symbol.
std::vector<std::string> raw_exec_or_fork_syscalls(const std::string& code) {
  std::vector<std::string> found;
  for (const RawSyscall& call : kExecOrFork) {
    char imm[4];
    std::memcpy(imm, &call.number, 4);  // little-endian
    for (const std::string& load : {std::string("\xb8", 1) + std::string(imm, 4),
                                    std::string("\x48\xc7\xc0", 3) + std::string(imm, 4)}) {
      for (std::size_t at = code.find(load); at != std::string::npos; at = code.find(load, at + 1)) {
        const std::size_t after = at + load.size();
        const std::size_t stop = std::min(code.size(), after + 16);
        for (std::size_t i = after; i + 1 < stop; ++i) {
          if (code[i] == '\x0f' && code[i + 1] == '\x05') {
            found.push_back(std::string(call.name) + " at code offset " + std::to_string(at));
            break;
          }
        }
      }
    }
  }
  return found;
}

// The scanner itself, on machine code that does what the appliance must never do.
TEST(RawSyscallScanTest, FindsInlineExecveAndForkAndIgnoresOtherSyscalls) {
  const std::string execve_eax("\x90\xb8\x3b\x00\x00\x00\x48\x89\xfe\x0f\x05\xc3", 12);
  const std::string fork_rax("\x48\xc7\xc0\x39\x00\x00\x00\x0f\x05", 9);
  const std::string write_eax("\xb8\x01\x00\x00\x00\x0f\x05", 7);
  const std::string execve_far = std::string("\xb8\x3b\x00\x00\x00", 5) + std::string(40, '\x90') + "\x0f\x05";
  EXPECT_EQ(raw_exec_or_fork_syscalls(execve_eax).size(), 1u);
  ASSERT_EQ(raw_exec_or_fork_syscalls(fork_rax).size(), 1u);
  EXPECT_TRUE(raw_exec_or_fork_syscalls(fork_rax)[0].starts_with("fork"));
  EXPECT_TRUE(raw_exec_or_fork_syscalls(write_eax).empty());
  EXPECT_TRUE(raw_exec_or_fork_syscalls(execve_far).empty());
}

class ApplianceBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    release_bytes = read_file(kRelease);
    ASSERT_FALSE(release_bytes.empty()) << kRelease << " is not built";
    release = parse_elf(release_bytes);
    ASSERT_TRUE(release.ok) << kRelease << ": " << release.error;
    // Without a symbol table every absence below would pass vacuously.
    ASSERT_GT(release.symbols.size(), 1000u) << kRelease << " is stripped; the checks need .symtab";
  }
  std::string release_bytes;
  Elf release;
};

TEST_F(ApplianceBinaryTest, IsAStaticPieWithNoInterpreter) {
  if (GK_SANITIZED) GTEST_SKIP() << "sanitizer builds cannot link statically";
  EXPECT_EQ(release.type, ET_DYN) << "a PIE is ET_DYN";
  EXPECT_FALSE(release.has_interpreter) << "static-pie has no PT_INTERP";
}

TEST_F(ApplianceBinaryTest, ContainsNoLibgit2) {
  for (const std::string& name : release.symbols) {
    EXPECT_FALSE(name.starts_with("git_") || name.starts_with("_git_")) << "libgit2 symbol " << name;
  }
  EXPECT_EQ(release_bytes.find("libgit2"), std::string::npos);
}

// No exec and no fork: libuv's process.c is kept out by serve/no_process.cc, and nothing calls
// system(3), popen(3) or posix_spawn(3). clone stays: glibc's pthread_create refers to it.
TEST_F(ApplianceBinaryTest, ContainsNoExecOrForkSymbol) {
  if (GK_SANITIZED) GTEST_SKIP() << "the sanitizer runtime forks its symbolizer";
  for (const char* name : {"execve", "execveat", "fexecve", "execv", "execvp", "execvpe", "execl",
                           "execlp", "execle", "fork", "vfork", "_Fork", "__libc_fork", "posix_spawn",
                           "posix_spawnp", "__spawni", "system", "__libc_system", "popen", "_IO_proc_open",
                           "uv_spawn"}) {
    EXPECT_EQ(release.symbols.count(name), 0u) << kRelease << " contains " << name;
  }
}

TEST_F(ApplianceBinaryTest, MachineCodeHasNoInlineExecOrForkSyscall) {
  ASSERT_GT(release.code.size(), 100'000u) << "no executable segment found in " << kRelease;
  const std::vector<std::string> found = raw_exec_or_fork_syscalls(release.code);
  EXPECT_TRUE(found.empty()) << kRelease << " makes a raw " << (found.empty() ? "" : found.front());
}

// The test-only switches (forbidden syscall, descriptor limit) exist only in the test build
// (serve/confine.h).
TEST_F(ApplianceBinaryTest, TestOnlyTriggerIsInTheTestBuildOnly) {
  const std::string trigger = std::string("--test-forbidden-") + "syscall-after-ready";
  EXPECT_EQ(release_bytes.find(trigger), std::string::npos) << kRelease << " contains the test trigger";
  const std::string test_bytes = read_file(kTestBuild);
  ASSERT_FALSE(test_bytes.empty()) << kTestBuild << " is not built";
  EXPECT_NE(test_bytes.find(trigger), std::string::npos) << "the test build must carry the trigger";
  const std::string limit = std::string("--test-descriptor-") + "limit";
  EXPECT_EQ(release_bytes.find(limit), std::string::npos) << kRelease << " contains the descriptor-limit switch";
  EXPECT_NE(test_bytes.find(limit), std::string::npos) << "the test build must carry the descriptor-limit switch";
}

// The switch that serves without confinement exists only in the sanitizer test build (for the
// leak check): never in the release binary, never in the test build that goes into an image.
TEST_F(ApplianceBinaryTest, NoConfinementSwitchIsInTheSanitizerTestBuildOnly) {
  const std::string flag = std::string("--unsafe-test-") + "no-confinement";
  EXPECT_EQ(release_bytes.find(flag), std::string::npos) << kRelease << " can serve unconfined";
  const std::string test_bytes = read_file(kTestBuild);
  ASSERT_FALSE(test_bytes.empty()) << kTestBuild << " is not built";
  EXPECT_EQ(test_bytes.find(flag) != std::string::npos, static_cast<bool>(GK_SANITIZED)) << kTestBuild;
}

// Reproducible from any checkout (cmake/PathMap.cmake): no folder of the build host reaches the
// binaries, neither as given nor as a real path (build/deps is often a symlink). Before the
// source paths were mapped, BoringSSL's __FILE__ strings alone put about two hundred absolute
// paths of the BoringSSL source folder into the release binary. Both the unstripped binaries and
// the stripped ones the images carry are read.
TEST(ApplianceBinaryPathsTest, NamesNoFolderOfTheBuildHost) {
  namespace fs = std::filesystem;
  std::vector<std::string> folders;
  for (const std::string& dir : {std::string(GK_SOURCE_DIR), std::string(GK_BINARY_DIR), std::string(GK_DEPS_DIR),
                                 std::string(GK_LLHTTP_SOURCE_DIR)}) {
    folders.push_back(dir);
    std::error_code error;
    const fs::path real = fs::canonical(dir, error);
    if (!error) folders.push_back(real.string());
  }
  // The BoringSSL source folder's own name, wherever it was unpacked.
  folders.push_back(std::string("android-platform-external-") + "boringssl");
  std::vector<std::string> binaries = {kRelease, kTestBuild};
  if (!GK_SANITIZED) {
    binaries.push_back(GK_BINARY_DIR "/image/stripped/gatekeeper");
    binaries.push_back(GK_BINARY_DIR "/image/stripped/gatekeeper-test");
  }
  for (const std::string& binary : binaries) {
    const std::string bytes = read_file(binary);
    ASSERT_FALSE(bytes.empty()) << binary << " is not built";
    for (const std::string& folder : folders) {
      const std::size_t at = bytes.find(folder);
      if (at == std::string::npos) continue;
      // The whole printable string around the hit, for the message.
      std::size_t begin = at, end = at;
      while (begin > 0 && std::isprint(static_cast<unsigned char>(bytes[begin - 1]))) --begin;
      while (end < bytes.size() && std::isprint(static_cast<unsigned char>(bytes[end]))) ++end;
      ADD_FAILURE() << binary << " names " << folder << ": \"" << bytes.substr(begin, std::min<std::size_t>(end - begin, 300))
                    << "\" (" << std::count_if(folders.begin(), folders.end(), [&](const std::string& f) {
                         return bytes.find(f) != std::string::npos;
                       }) << " of the folders appear)";
    }
  }
}

}  // namespace
