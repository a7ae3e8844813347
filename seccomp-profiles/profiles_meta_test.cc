// Repository invariants of the seccomp profiles (docs/decisions.md#every-row-has-a-reason,
// docs/decisions.md#invariants-are-tests): every profile parses, every entry says why, every name
// is a real x86_64 syscall, only x86_64 is listed, no call is both allowed and refused, and each
// profile refuses what README.md promises.
#include <gtest/gtest.h>
#include <seccomp.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Json = nlohmann::json;

constexpr int kEopnotsupp = 95;  // the space's refusal errno (README.md "The errno")
constexpr int kEnosys = 38;
// CLONE_NEWNS|CLONE_NEWCGROUP|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET,
// the mask of Docker's default clone rule.
constexpr std::uint64_t kCloneNamespaceFlags = 0x7E020000;

std::filesystem::path profiles_dir() {
  return std::filesystem::path(GK_SOURCE_DIR) / "seccomp-profiles";
}

std::vector<std::filesystem::path> profile_paths() {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(profiles_dir(), ec)) {
    if (entry.path().extension() == ".json") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Parses with exceptions off: a malformed file is a discarded value, not a throw.
Json load(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

// One argument comparison as runc hands it to libseccomp (all 64 bits on x86_64).
struct Cond {
  unsigned index = 0;
  std::string op;
  std::uint64_t value = 0;
  std::uint64_t value_two = 0;
};

struct Rule {
  std::string name;
  bool allows = false;
  std::string action;
  std::optional<int> errno_ret;
  std::vector<Cond> conds;
};

std::vector<Rule> rules_of(const Json& profile) {
  std::vector<Rule> out;
  for (const auto& entry : profile.value("syscalls", Json::array())) {
    std::vector<Cond> conds;
    for (const auto& a : entry.value("args", Json::array())) {
      conds.push_back(Cond{a.value("index", 0u), a.value("op", std::string()),
                           a.value("value", std::uint64_t{0}),
                           a.value("valueTwo", std::uint64_t{0})});
    }
    for (const auto& name : entry.value("names", Json::array())) {
      Rule r;
      r.name = name.get<std::string>();
      r.action = entry.value("action", std::string());
      r.allows = r.action == "SCMP_ACT_ALLOW";
      if (entry.contains("errnoRet")) r.errno_ret = entry["errnoRet"].get<int>();
      r.conds = conds;
      out.push_back(r);
    }
  }
  return out;
}

// The closed interval of argument values a comparison can match; MASKED_EQ also checks bits.
struct Range {
  std::uint64_t lo = 0;
  std::uint64_t hi = UINT64_MAX;
};

std::optional<Range> range_of(const Cond& c) {
  if (c.op == "SCMP_CMP_EQ") return Range{c.value, c.value};
  if (c.op == "SCMP_CMP_GT")
    return c.value == UINT64_MAX ? std::nullopt : std::optional(Range{c.value + 1, UINT64_MAX});
  if (c.op == "SCMP_CMP_GE") return Range{c.value, UINT64_MAX};
  if (c.op == "SCMP_CMP_LT")
    return c.value == 0 ? std::nullopt : std::optional(Range{0, c.value - 1});
  if (c.op == "SCMP_CMP_LE") return Range{0, c.value};
  if (c.op == "SCMP_CMP_MASKED_EQ") return Range{c.value_two, c.value_two | ~c.value};
  return Range{};  // SCMP_CMP_NE and anything unknown: assume it can match anything
}

// True only when no argument value satisfies both comparisons (conservative: unsure means false).
bool provably_disjoint(const Cond& a, const Cond& b) {
  std::optional<Range> ra = range_of(a);
  std::optional<Range> rb = range_of(b);
  if (!ra || !rb) return true;  // a comparison that matches nothing overlaps nothing
  if (ra->hi < rb->lo || rb->hi < ra->lo) return true;
  const bool a_masked = a.op == "SCMP_CMP_MASKED_EQ";
  const bool b_masked = b.op == "SCMP_CMP_MASKED_EQ";
  if (a_masked && b_masked) return ((a.value_two ^ b.value_two) & a.value & b.value) != 0;
  if (a_masked && b.op == "SCMP_CMP_EQ") return (b.value & a.value) != a.value_two;
  if (b_masked && a.op == "SCMP_CMP_EQ") return (a.value & b.value) != b.value_two;
  return false;
}

// Two rules for one syscall can both match unless some argument they both test is disjoint.
bool rules_overlap(const Rule& a, const Rule& b) {
  for (const Cond& ca : a.conds) {
    for (const Cond& cb : b.conds) {
      if (ca.index == cb.index && provably_disjoint(ca, cb)) return false;
    }
  }
  return true;
}

std::vector<std::string> overlaps(const std::vector<Rule>& rules) {
  std::vector<std::string> out;
  for (const Rule& allow : rules) {
    if (!allow.allows) continue;
    for (const Rule& deny : rules) {
      if (deny.allows || deny.name != allow.name) continue;
      if (rules_overlap(allow, deny)) out.push_back(allow.name);
    }
  }
  return out;
}

class ProfileMetaTest : public ::testing::Test {
 protected:
  static Json profile(const char* file) { return load(profiles_dir() / file); }
};

TEST_F(ProfileMetaTest, FindsBothProfiles) {
  std::vector<std::filesystem::path> paths = profile_paths();
  std::set<std::string> names;
  for (const auto& p : paths) names.insert(p.filename().string());
  EXPECT_TRUE(names.count("space.json"));
  EXPECT_TRUE(names.count("gatekeeper.json"));
}

TEST_F(ProfileMetaTest, EveryProfileParsesAsJson) {
  for (const auto& path : profile_paths()) {
    Json j = load(path);
    EXPECT_FALSE(j.is_discarded()) << path;
    EXPECT_TRUE(j.is_object()) << path;
    EXPECT_TRUE(j.contains("defaultAction")) << path;
    EXPECT_TRUE(j.contains("syscalls") && j["syscalls"].is_array()) << path;
  }
}

TEST_F(ProfileMetaTest, EveryEntryAndProfileStatesItsReason) {
  for (const auto& path : profile_paths()) {
    Json j = load(path);
    ASSERT_FALSE(j.is_discarded()) << path;
    EXPECT_FALSE(j.value("comment", std::string()).empty()) << path << ": top-level comment";
    std::size_t i = 0;
    for (const auto& entry : j["syscalls"]) {
      EXPECT_FALSE(entry.value("comment", std::string()).empty())
          << path.filename() << " entry " << i << " " << entry.value("names", Json::array()).dump();
      EXPECT_FALSE(entry.value("names", Json::array()).empty())
          << path.filename() << " entry " << i;
      ++i;
    }
  }
}

TEST_F(ProfileMetaTest, EverySyscallNameExistsOnX8664) {
  for (const auto& path : profile_paths()) {
    Json j = load(path);
    ASSERT_FALSE(j.is_discarded()) << path;
    for (const Rule& r : rules_of(j)) {
      // Negative numbers are libseccomp's pseudo-syscalls (socketcall, umount) absent on x86_64;
      // runc silently skips names it cannot resolve, so a typo would silently drop a rule.
      EXPECT_GE(seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, r.name.c_str()), 0)
          << path.filename() << ": " << r.name;
    }
  }
}

TEST_F(ProfileMetaTest, OnlyTheX8664ArchitectureIsListed) {
  for (const auto& path : profile_paths()) {
    Json j = load(path);
    ASSERT_FALSE(j.is_discarded()) << path;
    EXPECT_FALSE(j.contains("archMap")) << path << ": archMap would add sub-architectures";
    EXPECT_EQ(j.value("architectures", Json::array()), Json::array({"SCMP_ARCH_X86_64"})) << path;
  }
}

TEST_F(ProfileMetaTest, EveryArgumentRuleIsUnambiguous) {
  const std::set<std::string> ops = {"SCMP_CMP_EQ",       "SCMP_CMP_NE", "SCMP_CMP_LT",
                                     "SCMP_CMP_LE",       "SCMP_CMP_GT", "SCMP_CMP_GE",
                                     "SCMP_CMP_MASKED_EQ"};
  for (const auto& path : profile_paths()) {
    Json j = load(path);
    ASSERT_FALSE(j.is_discarded()) << path;
    for (const Rule& r : rules_of(j)) {
      std::set<unsigned> seen;
      for (const Cond& c : r.conds) {
        EXPECT_TRUE(ops.count(c.op)) << path.filename() << ": " << r.name << " op " << c.op;
        EXPECT_LT(c.index, 6u) << r.name;
        // runc turns repeated indexes into separate OR-ed rules (libcontainer/seccomp), not AND.
        EXPECT_TRUE(seen.insert(c.index).second)
            << path.filename() << ": " << r.name << " repeats arg " << c.index;
        if (c.op == "SCMP_CMP_MASKED_EQ") {
          EXPECT_EQ(c.value_two & ~c.value, 0u) << r.name << ": compares bits outside its mask";
        }
      }
    }
  }
}

TEST_F(ProfileMetaTest, NoSyscallIsBothAllowedAndDenied) {
  for (const auto& path : profile_paths()) {
    Json j = load(path);
    ASSERT_FALSE(j.is_discarded()) << path;
    std::vector<std::string> both = overlaps(rules_of(j));
    EXPECT_TRUE(both.empty()) << path.filename() << ": " << ::testing::PrintToString(both);
  }
}

// The checker above must be able to fail.
TEST_F(ProfileMetaTest, OverlapCheckFlagsAnUnconditionalAllowBesideADeny) {
  Rule allow{"socket", true, "SCMP_ACT_ALLOW", std::nullopt, {}};
  Rule deny{"socket", false, "SCMP_ACT_ERRNO", 95, {Cond{0, "SCMP_CMP_EQ", 17, 0}}};
  EXPECT_EQ(overlaps({allow, deny}), std::vector<std::string>{"socket"});
}

TEST_F(ProfileMetaTest, OverlapCheckFlagsAMaskedDenyThatCoversAnAllowedValue) {
  Rule allow{
      "personality", true, "SCMP_ACT_ALLOW", std::nullopt, {Cond{0, "SCMP_CMP_EQ", 0xFFFFFFFF, 0}}};
  // Without bit 31 in the mask this deny would also match the 0xFFFFFFFF query.
  Rule deny{"personality",
            false,
            "SCMP_ACT_ERRNO",
            95,
            {Cond{0, "SCMP_CMP_MASKED_EQ", 0x40000, 0x40000}}};
  EXPECT_EQ(overlaps({allow, deny}), std::vector<std::string>{"personality"});
  deny.conds[0].value = 0x80040000;
  EXPECT_TRUE(overlaps({allow, deny}).empty());
}

TEST_F(ProfileMetaTest, OverlapCheckAcceptsDisjointRanges) {
  Rule allow{"socket",
             true,
             "SCMP_ACT_ALLOW",
             std::nullopt,
             {Cond{0, "SCMP_CMP_EQ", 16, 0}, Cond{2, "SCMP_CMP_EQ", 0, 0}}};
  Rule deny{"socket",
            false,
            "SCMP_ACT_ERRNO",
            95,
            {Cond{0, "SCMP_CMP_EQ", 16, 0}, Cond{2, "SCMP_CMP_GT", 0, 0}}};
  EXPECT_TRUE(overlaps({allow, deny}).empty());
  deny.conds[1] = Cond{2, "SCMP_CMP_GE", 0, 0};  // one past the boundary: now protocol 0 is in both
  EXPECT_EQ(overlaps({allow, deny}), std::vector<std::string>{"socket"});
}

// --- space.json ---

bool refused(const std::vector<Rule>& rules, const std::string& name, int errno_ret) {
  bool denied = false;
  for (const Rule& r : rules) {
    if (r.name != name) continue;
    if (r.allows) return false;
    if (r.conds.empty() && r.action == "SCMP_ACT_ERRNO" && r.errno_ret == errno_ret) denied = true;
  }
  return denied;
}

TEST_F(ProfileMetaTest, SpaceRefusesEachDangerousCallWithTheDistinctiveErrno) {
  std::vector<Rule> rules = rules_of(profile("space.json"));
  const char* const kDenied[] = {"ptrace",
                                 "process_vm_readv",
                                 "process_vm_writev",
                                 "kcmp",
                                 "pidfd_getfd",
                                 "process_madvise",
                                 "io_uring_setup",
                                 "io_uring_enter",
                                 "io_uring_register",
                                 "userfaultfd",
                                 "keyctl",
                                 "add_key",
                                 "request_key",
                                 "bpf",
                                 "perf_event_open",
                                 "unshare",
                                 "setns",
                                 "mount",
                                 "umount2",
                                 "pivot_root",
                                 "move_mount",
                                 "open_tree",
                                 "fsopen",
                                 "fsconfig",
                                 "fsmount",
                                 "fspick",
                                 "mount_setattr",
                                 "kexec_load",
                                 "kexec_file_load",
                                 "init_module",
                                 "finit_module",
                                 "delete_module",
                                 "open_by_handle_at",
                                 "name_to_handle_at",
                                 "chroot",
                                 "reboot",
                                 "syslog",
                                 "acct",
                                 "swapon",
                                 "settimeofday",
                                 "clock_settime",
                                 "sethostname",
                                 "iopl",
                                 "ioperm",
                                 "fanotify_init"};
  for (const char* name : kDenied) EXPECT_TRUE(refused(rules, name, kEopnotsupp)) << name;
}

TEST_F(ProfileMetaTest, SpaceRefusalsAllUseEopnotsuppExceptClone3) {
  Json j = profile("space.json");
  EXPECT_EQ(j.value("defaultAction", std::string()), "SCMP_ACT_ERRNO");
  EXPECT_EQ(j.value("defaultErrnoRet", 0), kEopnotsupp);
  for (const Rule& r : rules_of(j)) {
    if (r.allows) continue;
    EXPECT_EQ(r.action, "SCMP_ACT_ERRNO") << r.name;
    EXPECT_EQ(r.errno_ret, r.name == "clone3" ? kEnosys : kEopnotsupp) << r.name;
  }
}

TEST_F(ProfileMetaTest, SpaceAllowsCloneOnlyWithoutNamespaceFlags) {
  std::vector<Rule> rules = rules_of(profile("space.json"));
  std::uint64_t denied_flags = 0;
  int allow_rules = 0;
  for (const Rule& r : rules) {
    if (r.name != "clone") continue;
    ASSERT_EQ(r.conds.size(), 1u) << "clone rules test the flags argument only";
    const Cond& c = r.conds[0];
    EXPECT_EQ(c.index, 0u);
    EXPECT_EQ(c.op, "SCMP_CMP_MASKED_EQ");
    if (r.allows) {
      ++allow_rules;
      EXPECT_EQ(c.value & kCloneNamespaceFlags, kCloneNamespaceFlags);
      EXPECT_EQ(c.value_two & kCloneNamespaceFlags, 0u);
    } else {
      denied_flags |= c.value_two;
    }
  }
  EXPECT_EQ(allow_rules, 1);
  EXPECT_EQ(denied_flags, kCloneNamespaceFlags) << "each CLONE_NEW* flag has its own refusal";
  EXPECT_TRUE(refused(rules, "clone3", kEnosys));
}

TEST_F(ProfileMetaTest, SpaceAllowsOrdinaryDevelopmentCalls) {
  std::vector<Rule> rules = rules_of(profile("space.json"));
  const char* const kAllowed[] = {"openat", "read",        "write",   "execve",    "wait4",
                                  "pipe2",  "epoll_pwait", "connect", "getrandom", "futex",
                                  "mmap",   "statx",       "rename",  "seccomp"};
  for (const char* name : kAllowed) {
    bool unconditional = false;
    for (const Rule& r : rules) unconditional |= r.name == name && r.allows && r.conds.empty();
    EXPECT_TRUE(unconditional) << name;
  }
}

// What the profile answers for one call with concrete arguments, as the kernel's filter would:
// the rules of a name are disjoint (NoSyscallIsBothAllowedAndDenied), so the first match decides;
// nullopt when no rule matches (the default action, EPERM on Docker 20.10: not the profile's 95).
struct Answer {
  bool allowed = false;
  int errno_ret = 0;
};

bool cond_matches(const Cond& c, std::uint64_t v) {
  if (c.op == "SCMP_CMP_EQ") return v == c.value;
  if (c.op == "SCMP_CMP_NE") return v != c.value;
  if (c.op == "SCMP_CMP_LT") return v < c.value;
  if (c.op == "SCMP_CMP_LE") return v <= c.value;
  if (c.op == "SCMP_CMP_GT") return v > c.value;
  if (c.op == "SCMP_CMP_GE") return v >= c.value;
  if (c.op == "SCMP_CMP_MASKED_EQ") return (v & c.value) == c.value_two;
  return false;
}

std::optional<Answer> evaluate(const std::vector<Rule>& rules, const std::string& name,
                               const std::vector<std::uint64_t>& args) {
  for (const Rule& r : rules) {
    if (r.name != name) continue;
    bool all = true;
    for (const Cond& c : r.conds) all = all && cond_matches(c, c.index < args.size() ? args[c.index] : 0);
    if (all) return Answer{r.allows, r.errno_ret.value_or(0)};
  }
  return std::nullopt;
}

constexpr std::uint64_t kAfInet = 2, kAfInet6 = 10, kStream = 1, kDgram = 2;
constexpr std::uint64_t kNonblockCloexec = 0x80000 | 0x800;

TEST_F(ProfileMetaTest, SpaceSocketAllowsOnlyTcpAndUdpProtocols) {
  const std::vector<Rule> rules = rules_of(profile("space.json"));
  for (std::uint64_t family : {kAfInet, kAfInet6}) {
    for (std::uint64_t flags : {std::uint64_t{0}, kNonblockCloexec}) {
      const auto allowed = [&](std::uint64_t type, std::uint64_t proto) {
        const std::optional<Answer> a = evaluate(rules, "socket", {family, type | flags, proto});
        return a && a->allowed;
      };
      EXPECT_TRUE(allowed(kStream, 0)) << family;
      EXPECT_TRUE(allowed(kStream, 6)) << family;   // IPPROTO_TCP
      EXPECT_TRUE(allowed(kDgram, 0)) << family;
      EXPECT_TRUE(allowed(kDgram, 17)) << family;   // IPPROTO_UDP
      // Every other protocol number, and 0/6/17 with high bits the kernel would drop, is the
      // profile's refusal (never the default action, which Docker 20.10 turns into EPERM).
      for (std::uint64_t type : {kStream, kDgram}) {
        for (std::uint64_t proto = 0; proto <= 300; ++proto) {
          const bool ok = proto == 0 || proto == (type == kStream ? 6u : 17u);
          for (std::uint64_t high : {std::uint64_t{0}, std::uint64_t{1} << 32}) {
            const std::optional<Answer> a = evaluate(rules, "socket", {family, type | flags, proto | high});
            ASSERT_TRUE(a.has_value()) << family << "/" << type << "/" << (proto | high) << " falls to the default action";
            if (ok && high == 0) {
              EXPECT_TRUE(a->allowed) << family << "/" << type << "/" << proto;
            } else {
              EXPECT_FALSE(a->allowed) << family << "/" << type << "/" << (proto | high);
              EXPECT_EQ(a->errno_ret, kEopnotsupp) << family << "/" << type << "/" << (proto | high);
            }
          }
        }
      }
    }
  }
  // The ones the kernel would load a module for, named: SCTP, L2TP, UDP-Lite, MPTCP, ICMP, ICMPv6.
  for (auto [type, proto] : {std::pair{kStream, 132u}, std::pair{kDgram, 115u}, std::pair{kDgram, 136u},
                             std::pair{kStream, 262u}, std::pair{kDgram, 1u}, std::pair{kDgram, 58u}}) {
    const std::optional<Answer> a = evaluate(rules, "socket", {kAfInet6, type, proto});
    ASSERT_TRUE(a.has_value()) << proto;
    EXPECT_FALSE(a->allowed) << proto;
  }
}

TEST_F(ProfileMetaTest, SpaceRefusesTiocstiAndTioclinuxWhateverTheHighBits) {
  const std::vector<Rule> rules = rules_of(profile("space.json"));
  constexpr std::uint64_t kTiocsti = 0x5412, kTioclinux = 0x541C;
  for (std::uint64_t request : {kTiocsti, kTioclinux}) {
    for (std::uint64_t high : {std::uint64_t{0}, std::uint64_t{1} << 32, std::uint64_t{0xFFFFFFFF} << 32}) {
      const std::optional<Answer> a = evaluate(rules, "ioctl", {0, request | high});
      ASSERT_TRUE(a.has_value()) << std::hex << (request | high);
      EXPECT_FALSE(a->allowed) << std::hex << (request | high);
      EXPECT_EQ(a->errno_ret, kEopnotsupp);
    }
  }
  // Every other request stays allowed: the neighbours of both, the usual ones, and a spread over
  // the whole 32-bit range (with and without high bits).
  std::vector<std::uint64_t> others = {0x5401 /*TCGETS*/, 0x5421 /*FIONBIO*/, 0x5451 /*FIOCLEX*/,
                                       0x541B /*FIONREAD*/, 0x5413 /*TIOCGWINSZ*/, 0x5411, 0x541D,
                                       0x5410, 0x541F, 0x80045430 /*TIOCGPTN*/, 0, 0xFFFFFFFF};
  for (std::uint64_t v = 1; v < (std::uint64_t{1} << 32); v = v * 3 + 7) others.push_back(v);
  for (std::uint64_t request : others) {
    if (request == kTiocsti || request == kTioclinux) continue;
    for (std::uint64_t high : {std::uint64_t{0}, std::uint64_t{1} << 32}) {
      const std::optional<Answer> a = evaluate(rules, "ioctl", {0, request | high});
      ASSERT_TRUE(a.has_value()) << std::hex << (request | high) << " falls to the default action";
      EXPECT_TRUE(a->allowed) << std::hex << (request | high);
    }
  }
}

// The evaluator the two tests above lean on must be able to say "refused" and "no rule".
TEST_F(ProfileMetaTest, EvaluatorTellsAllowRefusalAndNoRuleApart) {
  const std::vector<Rule> rules = {
      Rule{"socket", true, "SCMP_ACT_ALLOW", std::nullopt, {Cond{2, "SCMP_CMP_EQ", 6, 0}}},
      Rule{"socket", false, "SCMP_ACT_ERRNO", 95, {Cond{2, "SCMP_CMP_GT", 6, 0}}}};
  EXPECT_TRUE(evaluate(rules, "socket", {2, 1, 6})->allowed);
  EXPECT_FALSE(evaluate(rules, "socket", {2, 1, 132})->allowed);
  EXPECT_FALSE(evaluate(rules, "socket", {2, 1, 5}).has_value());
  EXPECT_FALSE(evaluate(rules, "ioctl", {0, 0}).has_value());
}

// --- gatekeeper.json ---

TEST_F(ProfileMetaTest, GatekeeperDefaultActionKillsTheProcess) {
  Json j = profile("gatekeeper.json");
  EXPECT_EQ(j.value("defaultAction", std::string()), "SCMP_ACT_KILL_PROCESS");
  EXPECT_FALSE(j.contains("defaultErrnoRet"));
}

TEST_F(ProfileMetaTest, GatekeeperAnswersIoUringAndClone3WithEnosys) {
  std::vector<Rule> rules = rules_of(profile("gatekeeper.json"));
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register", "clone3"}) {
    EXPECT_TRUE(refused(rules, name, kEnosys)) << name;
  }
}

TEST_F(ProfileMetaTest, GatekeeperAllowsNoEscapePrimitive) {
  std::vector<Rule> rules = rules_of(profile("gatekeeper.json"));
  const char* const kNever[] = {"ptrace",
                                "process_vm_readv",
                                "process_vm_writev",
                                "execveat",
                                "fork",
                                "vfork",
                                "unshare",
                                "setns",
                                "mount",
                                "umount2",
                                "pivot_root",
                                "open_tree",
                                "fsopen",
                                "bpf",
                                "keyctl",
                                "add_key",
                                "userfaultfd",
                                "perf_event_open",
                                "init_module",
                                "finit_module",
                                "kexec_load",
                                "socketpair",
                                "memfd_create",
                                "chroot",
                                "personality"};
  for (const char* name : kNever) {
    for (const Rule& r : rules) EXPECT_FALSE(r.name == name && r.allows) << name;
  }
  // socket, clone, ioctl and prctl are allowed only for named argument values.
  for (const Rule& r : rules) {
    if (r.allows &&
        (r.name == "socket" || r.name == "clone" || r.name == "ioctl" || r.name == "prctl")) {
      EXPECT_FALSE(r.conds.empty()) << r.name << " allowed unconditionally";
    }
  }
}

TEST_F(ProfileMetaTest, GatekeeperCloneRuleRequiresThreadFlagsAndNoNamespace) {
  constexpr std::uint64_t kThread = 0x100 | 0x800 | 0x10000;  // CLONE_VM|CLONE_SIGHAND|CLONE_THREAD
  int seen = 0;
  for (const Rule& r : rules_of(profile("gatekeeper.json"))) {
    if (r.name != "clone" || !r.allows) continue;
    ++seen;
    ASSERT_EQ(r.conds.size(), 1u);
    EXPECT_EQ(r.conds[0].op, "SCMP_CMP_MASKED_EQ");
    EXPECT_EQ(r.conds[0].value, kThread | kCloneNamespaceFlags);
    EXPECT_EQ(r.conds[0].value_two, kThread);
  }
  EXPECT_EQ(seen, 1);
}

}  // namespace
