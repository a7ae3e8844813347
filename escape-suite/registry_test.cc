// Repository invariants of the case registry: enough cases, stable unique ids, and every case says
// what it defends against, how it attacks and what proves "cannot".
#include <cstdlib>

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "escape-suite/case.h"

namespace escape {
namespace {

TEST(RegistryTest, HasAtLeast390Cases) { EXPECT_GE(all_cases().size(), 390u); }

TEST(RegistryTest, IdsAreUniqueAndStable) {
  std::set<std::string> seen;
  const std::regex shape("^[a-z0-9]+\\.[a-z0-9-]+$");
  for (const Case& c : all_cases()) {
    EXPECT_TRUE(seen.insert(c.id).second) << "duplicate id " << c.id;
    EXPECT_TRUE(std::regex_match(c.id, shape)) << c.id;
  }
}

TEST(RegistryTest, EveryCaseHasThreatTechniqueProofAndCode) {
  for (const Case& c : all_cases()) {
    EXPECT_FALSE(c.threat.empty()) << c.id;
    EXPECT_FALSE(c.technique.empty()) << c.id;
    EXPECT_FALSE(c.proof.empty()) << c.id;
    EXPECT_TRUE(static_cast<bool>(c.run)) << c.id;
  }
}

TEST(RegistryTest, GroupIsTheIdPrefixAndKnown) {
  const std::set<std::string> groups = {"identity", "leak", "signal", "secret", "fs", "proc", "sys",
                                        "cgroup", "dev", "syscall", "net", "dns", "corridor",
                                        "window", "res"};
  for (const Case& c : all_cases()) {
    EXPECT_EQ(c.id.substr(0, c.id.find('.')), c.group);
    EXPECT_EQ(groups.count(c.group), 1u) << c.group;
  }
}

TEST(RegistryTest, CoversTheIssueItems) {
  std::set<std::string> ids;
  for (const Case& c : all_cases()) ids.insert(c.id);
  for (const char* id : {"net.raw-socket-ipv4", "net.packet-socket-raw", "net.icmp-test-net",
                         "net.udp-test-net", "net.ipv6-link-local-all-nodes", "dns.direct-resolver-udp",
                         "corridor.metadata-integer", "proc.core-pattern", "proc.sysrq-trigger",
                         "proc.binfmt-misc-register", "sys.uevent-helper", "proc.modprobe",
                         "dev.mknod-char-mem", "cgroup.release-agent", "cgroup.devices-allow",
                         "syscall.keyctl", "syscall.ptrace-sibling", "syscall.process-vm-readv-sibling",
                         "syscall.bpf", "syscall.userfaultfd", "syscall.io-uring-setup",
                         "syscall.perf-event-open", "syscall.unshare-user", "syscall.setns-pid1-net",
                         "syscall.kexec-load", "syscall.init-module", "syscall.personality-no-aslr",
                         "leak.startup-descriptors", "signal.gatekeeper-not-visible",
                         "fs.no-runtime-socket-var-run-docker-sock", "fs.no-runtime-abstract-socket",
                         "res.fork-bomb-held", "res.memory-kills-only-offender", "res.disk-fill-tmp",
                         "res.disk-fill-home", "res.disk-fill-workspace", "fs.home-nosuid", "fs.home-nodev",
                         "fs.workspace-nosuid", "fs.workspace-nodev", "net.neighbours-only-gatekeeper",
                         "res.log-flood-delivered", "net.control-channel-tcp", "window.no-key",
                         "window.wrong-key", "fs.readonly-root", "fs.writable-tmp",
                         "fs.no-host-paths-in-mounts", "secret.key-not-in-proc-environ",
                         "identity.no-new-privs", "identity.cap-bounding-zero",
                         "identity.seccomp-filter-mode", "net.other-space-direct", "corridor.other-space"}) {
    EXPECT_EQ(ids.count(id), 1u) << "missing " << id;
  }
}

// Cases that could not fail as written are gone, not kept passing.
TEST(RegistryTest, NoCaseSignalsPidsItCannotName) {
  for (const Case& c : all_cases()) EXPECT_NE(c.id, "signal.only-own-namespace-pids");
}

// An unbounded volume is a FAIL, never N/A: without --home-quota, or on a filesystem larger than
// the quota (ENOSPC there would be the shared disk's), the fill cases fail before writing a byte.
TEST(RegistryTest, ADiskFillOnAnUnboundedVolumeFails) {
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home != nullptr ? old_home : "";
  ::setenv("HOME", "/", 1);  // the root filesystem: far larger than the quota below
  auto run_one = [](const std::string& id, std::uint64_t quota) {
    std::vector<Case> one;
    for (const Case& c : all_cases())
      if (c.id == id) one.push_back(c);
    EXPECT_EQ(one.size(), 1u) << id;
    Context ctx;
    ctx.opts.allow_exhaustion = true;
    ctx.opts.home_quota = quota;
    ctx.opts.space_id = "0123456789ab";  // no /spaces here: statvfs fails, which is a FAIL too
    const std::vector<CaseResult> r = run_cases(ctx, one);
    return r.empty() ? CaseResult{} : r[0];
  };
  for (const char* id : {"res.disk-fill-home", "res.disk-fill-workspace"}) {
    const CaseResult none = run_one(id, 0);
    EXPECT_EQ(verdict_word(none.verdict), "FAIL") << id << ": " << none.evidence;
    const CaseResult shared = run_one(id, 1 << 20);
    EXPECT_EQ(verdict_word(shared.verdict), "FAIL") << id << ": " << shared.evidence;
    if (std::string(id) == "res.disk-fill-home") {
      EXPECT_NE(shared.evidence.find("larger than"), std::string::npos) << shared.evidence;
    }
  }
  if (old_home != nullptr) ::setenv("HOME", saved.c_str(), 1);
}

TEST(RegistryTest, AVerdictNobodySetIsInconclusive) {
  EXPECT_EQ(Verdict{}, Verdict::kInconclusive);
  EXPECT_EQ(Outcome{}.verdict, Verdict::kInconclusive);
  EXPECT_EQ(CaseResult{}.verdict, Verdict::kInconclusive);
  // A case whose code returns without setting anything is reported INCONCLUSIVE, never PASS.
  std::vector<Case> cases;
  add_case(cases, "res.sets-nothing", "t", "t", "t", [](Context&) { return Outcome{}; });
  add_case(cases, "res.sets-evidence-only", "t", "t", "t", [](Context&) {
    Outcome o;
    o.evidence = "looked fine";
    return o;
  });
  Context ctx;
  const std::vector<CaseResult> r = run_cases(ctx, cases);
  ASSERT_EQ(r.size(), 2u);
  for (const CaseResult& x : r) EXPECT_EQ(verdict_word(x.verdict), "INCONCLUSIVE") << x.id;
}

TEST(RegistryTest, CoversCoreDumpsAndCpu) {
  std::set<std::string> ids;
  for (const Case& c : all_cases()) ids.insert(c.id);
  for (const char* id : {"res.core-limit-zero", "res.core-raise-hard-refused", "res.core-raise-soft-refused",
                         "res.crash-dumps-no-core", "res.cpu-quota-set", "res.cpu-spin-held",
                         "res.cpu-spin-corridor-answers", "net.proto-sctp", "net.proto-l2tp", "net.proto-icmp-ping",
                         "net.proto-tcp-high-bits", "syscall.ioctl-tiocsti", "syscall.ioctl-tiocsti-high-bits",
                         "syscall.ioctl-tioclinux"})
    EXPECT_EQ(ids.count(id), 1u) << "missing " << id;
}

TEST(RegistryTest, GlobSelectsSubsets) {
  EXPECT_TRUE(glob_match("net.*", "net.raw-socket-ipv4"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("corridor.metadata-?nteger", "corridor.metadata-integer"));
  EXPECT_TRUE(glob_match("*.metadata-*", "corridor.metadata-hex"));
  EXPECT_FALSE(glob_match("net.*", "dns.public-name-a"));
  EXPECT_FALSE(glob_match("net", "net.raw-socket-ipv4"));
  EXPECT_FALSE(glob_match(std::string(64, '*') + "b", std::string(10000, 'a')));  // no blow-up
  Options o;
  o.only = {"dns.*", "fs.writable-tmp"};
  EXPECT_TRUE(selected(o, "dns.public-name-a"));
  EXPECT_TRUE(selected(o, "fs.writable-tmp"));
  EXPECT_FALSE(selected(o, "fs.writable-home"));
}

}  // namespace
}  // namespace escape

namespace escape {
namespace {

// --progress: one "case <id> <VERDICT>" line per case on stderr as it ends, in run order; none
// without it (the report itself stays on stdout).
TEST(RegistryTest, ProgressPrintsOneLinePerCaseOnlyWhenAsked) {
  std::vector<Case> cases;
  add_case(cases, "res.progress-pass", "t", "t", "t", [](Context&) { return pass("ok"); });
  add_case(cases, "res.progress-fail", "t", "t", "t", [](Context&) { return fail("no"); });
  Context quiet;
  ::testing::internal::CaptureStderr();
  (void)run_cases(quiet, cases);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  Context ctx;
  ctx.opts.progress = true;
  ::testing::internal::CaptureStderr();
  (void)run_cases(ctx, cases);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "case res.progress-pass PASS\ncase res.progress-fail FAIL\n");
}

}  // namespace
}  // namespace escape
