// Identity and privilege: the space runs as an unprivileged uid with no capabilities, under
// no-new-privileges and a seccomp filter, and cannot become root by any credential call.
// (the reference suite's "not root" and "no capabilities" cases; CIS Docker 5.4/5.25;
// SandboxEscapeBench "privileged" scenarios.)
#include <grp.h>
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {
namespace {

Outcome status_equals(std::string_view field, std::string_view want) {
  const FileRead f = read_bounded("/proc/self/status");
  if (!f.ok) return inconclusive("read /proc/self/status: " + errno_name(f.err));
  const std::string v = status_field(f.data, field);
  if (v.empty()) return fail(std::string(field) + ": missing from /proc/self/status");
  const std::string line = std::string(field) + ": " + v;
  return v == want ? pass(line) : fail(line + " (want " + std::string(want) + ")");
}

// Setuid/setgid files on the executable paths: with no-new-privileges they would not elevate,
// but their presence means one flag stands between the agent and root (CIS 4.8).
Outcome scan_setuid() {
  std::string found;
  int scanned = 0;
  for (const char* dir : {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin",
                          "/usr/local/sbin", "/usr/libexec", "/usr/lib/openssh"}) {
    for (const std::string& name : list_dir(dir, 8192)) {
      const std::string path = std::string(dir) + "/" + name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      ++scanned;
      if ((st.st_mode & (S_ISUID | S_ISGID)) != 0) found += path + " ";
    }
  }
  if (!found.empty()) return fail("setuid/setgid files: " + found);
  return pass("no setuid/setgid file among " + std::to_string(scanned) + " executables");
}

}  // namespace

void add_identity_cases(std::vector<Case>& out) {
  add_case(out, "identity.uid-not-root", "run as root inside the space",
           "getresuid()", "real, effective and saved uid all equal --expect-uid and none is 0",
           [](Context& ctx) {
             uid_t r = 0, e = 0, s = 0;
             if (::getresuid(&r, &e, &s) != 0) return inconclusive("getresuid: " + errno_name(errno));
             const std::string ev = "uid " + std::to_string(r) + "/" + std::to_string(e) + "/" +
                                    std::to_string(s);
             if (r == 0 || e == 0 || s == 0) return fail(ev + " (root)");
             if (r != ctx.opts.expect_uid || e != r || s != r) return fail(ev + " (unexpected uid)");
             return pass(ev);
           });
  add_case(out, "identity.gid-not-root", "root group rights", "getresgid()",
           "no gid is 0", [](Context&) {
             gid_t r = 0, e = 0, s = 0;
             if (::getresgid(&r, &e, &s) != 0) return inconclusive("getresgid: " + errno_name(errno));
             const std::string ev = "gid " + std::to_string(r) + "/" + std::to_string(e) + "/" +
                                    std::to_string(s);
             return r == 0 || e == 0 || s == 0 ? fail(ev) : pass(ev);
           });
  add_case(out, "identity.no-root-supplementary-group",
           "group 0 (root) or a runtime group grants file access", "getgroups()",
           "no supplementary group is 0", [](Context&) {
             gid_t groups[256];
             const int n = ::getgroups(256, groups);
             if (n < 0) return inconclusive("getgroups: " + errno_name(errno));
             std::string ev = std::to_string(n) + " supplementary groups:";
             for (int i = 0; i < n; ++i) {
               ev += " " + std::to_string(groups[i]);
               if (groups[i] == 0) return fail(ev + " (includes 0)");
             }
             return pass(ev);
           });

  struct CredCall {
    const char* id;
    const char* technique;
    long (*call)();
  };
  static constexpr CredCall kCredCalls[] = {
      {"identity.setuid-root-refused", "setuid(0)", [] { return long{::setuid(0)}; }},
      {"identity.setresuid-root-refused", "setresuid(0,0,0)",
       [] { return long{::setresuid(0, 0, 0)}; }},
      {"identity.setreuid-root-refused", "setreuid(0,0)", [] { return long{::setreuid(0, 0)}; }},
      {"identity.setgid-root-refused", "setgid(0)", [] { return long{::setgid(0)}; }},
      {"identity.setresgid-root-refused", "setresgid(0,0,0)",
       [] { return long{::setresgid(0, 0, 0)}; }},
      {"identity.setgroups-root-refused", "setgroups(1, {0})", [] {
         const gid_t zero = 0;
         return long{::setgroups(1, &zero)};
       }},
      {"identity.setfsuid-root-refused", "setfsuid(0) then setfsuid(-1) reads back the fsuid", [] {
         ::setfsuid(0);
         const int now = ::setfsuid(static_cast<uid_t>(-1));  // returns the current fsuid
         if (now == 0) return 0L;
         errno = EPERM;
         return -1L;
       }},
  };
  for (const CredCall& c : kCredCalls) {
    add_case(out, c.id, "become root through a credential call", c.technique,
             "the call fails with EPERM (no CAP_SETUID/CAP_SETGID); run in a child",
             [c](Context& ctx) { return syscall_in_child(ctx.opts, c.technique, c.call); });
  }

  add_case(out, "identity.no-new-privs", "gain privileges through a setuid or file-capability exec",
           "read NoNewPrivs from /proc/self/status", "NoNewPrivs: 1",
           [](Context&) { return status_equals("NoNewPrivs", "1"); });
  struct CapField {
    const char* id;
    const char* field;
  };
  static constexpr CapField kCaps[] = {
      {"identity.cap-effective-zero", "CapEff"},  {"identity.cap-permitted-zero", "CapPrm"},
      {"identity.cap-inheritable-zero", "CapInh"}, {"identity.cap-bounding-zero", "CapBnd"},
      {"identity.cap-ambient-zero", "CapAmb"},
  };
  for (const CapField& c : kCaps) {
    add_case(out, c.id, "use a capability (SYS_ADMIN, NET_RAW, DAC_READ_SEARCH, ...)",
             std::string("read ") + c.field + " from /proc/self/status",
             std::string(c.field) + ": 0000000000000000 (--cap-drop ALL)",
             [c](Context&) { return status_equals(c.field, "0000000000000000"); });
  }
  add_case(out, "identity.seccomp-filter-mode", "call the kernel without a syscall filter",
           "read Seccomp from /proc/self/status", "Seccomp: 2 (filter mode)",
           [](Context&) { return status_equals("Seccomp", "2"); });
  add_case(out, "identity.capset-raise-refused", "raise a capability with capset",
           "capset(effective = CAP_SYS_ADMIN) in a child", "EPERM: nothing permitted to raise",
           [](Context& ctx) {
             return syscall_in_child(ctx.opts, "capset(CAP_SYS_ADMIN)", [] {
               __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
               __user_cap_data_struct data[2] = {};
               data[0].effective = 1u << CAP_SYS_ADMIN;
               data[0].permitted = 1u << CAP_SYS_ADMIN;
               return ::syscall(SYS_capset, &hdr, data);
             });
           });
  add_case(out, "identity.ambient-raise-refused", "raise an ambient capability for exec'd children",
           "prctl(PR_CAP_AMBIENT_RAISE, CAP_NET_RAW) in a child",
           "EPERM: the capability is not permitted", [](Context& ctx) {
             return syscall_in_child(ctx.opts, "prctl(PR_CAP_AMBIENT_RAISE)", [] {
               return long{::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0)};
             });
           });
  add_case(out, "identity.no-setuid-files", "exec a setuid-root helper (su, sudo, mount)",
           "lstat every file in the bin/sbin/libexec directories",
           "no file carries the setuid or setgid bit", [](Context&) { return scan_setuid(); });
}

}  // namespace escape
