#include "controller/host_guard.h"

#include <chrono>
#include <sstream>
#include <utility>
#include <vector>

#include "controller/process.h"

namespace controller {
namespace {

constexpr std::chrono::milliseconds kGuardTimeout{20000};
constexpr int kMaxCopies = 16;  // removal stops here: a rule added this often is a bug elsewhere

std::vector<std::string> rule(const char* tool, const char* op, const std::string& iface,
                              const std::string& tag) {
  // -w: wait for the xtables lock (Docker and netavark change rules too).
  return {tool,  "-w", "10",      op,          "INPUT",           "-i",
          iface, "-m", "comment", "--comment", "spacectl:" + tag, "-j",
          "DROP"};
}

ProcessOutcome run(std::vector<std::string> argv) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.timeout = kGuardTimeout;
  return run_process(r);
}

bool valid(const std::string& iface, const std::string& tag) {
  if (!is_interface_name(iface) || tag.empty() || tag.size() > 64) return false;
  for (const char c : tag) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

bool is_interface_name(std::string_view name) {
  if (name.empty() || name.size() > 15 || name.front() == '-') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Bridged frames pass the FORWARD chain when br_netfilter is loaded, and Docker sets its policy to
// DROP: without this rule the space cannot reach its own gatekeeper on the same bridge. Only from
// the bridge back to the same bridge: nothing is routed anywhere else.
std::vector<std::string> same_bridge(const char* op, const std::string& iface,
                                     const std::string& tag) {
  return {"iptables", "-w", "10",      op,          "FORWARD",         "-i", iface,   "-o",
          iface,      "-m", "comment", "--comment", "spacectl:" + tag, "-j", "ACCEPT"};
}

Result<void> guard_add(const std::string& iface, const std::string& tag) {
  if (!valid(iface, tag)) {
    return fail(Code::kInvalidArgument, "host guard " + iface + ": not an interface name and tag");
  }
  for (const char* tool : {"iptables", "ip6tables"}) {
    if (run(rule(tool, "-C", iface, tag)).succeeded()) continue;
    const ProcessOutcome o = run(rule(tool, "-I", iface, tag));
    if (!o.succeeded()) {
      return fail(Code::kPlaceUnusable,
                  std::string(tool) + " -I INPUT -i " + iface + ": " + o.describe());
    }
  }
  if (!run(same_bridge("-C", iface, tag)).succeeded()) {
    const ProcessOutcome o = run(same_bridge("-I", iface, tag));
    if (!o.succeeded()) {
      return fail(Code::kPlaceUnusable,
                  "iptables -I FORWARD -i " + iface + " -o " + iface + ": " + o.describe());
    }
  }
  return {};
}

Result<void> bridge_members_accept(const std::string& iface, const std::string& tag) {
  if (!valid(iface, tag)) {
    return fail(Code::kInvalidArgument, "bridge rule " + iface + ": not an interface name and tag");
  }
  if (run(same_bridge("-C", iface, tag)).succeeded()) return {};
  const ProcessOutcome o = run(same_bridge("-I", iface, tag));
  if (!o.succeeded()) {
    return fail(Code::kPlaceUnusable,
                "iptables -I FORWARD -i " + iface + " -o " + iface + ": " + o.describe());
  }
  return {};
}

Result<bool> guard_present(const std::string& iface, const std::string& tag) {
  if (!valid(iface, tag)) {
    return fail(Code::kInvalidArgument, "host guard " + iface + ": not an interface name and tag");
  }
  for (const char* tool : {"iptables", "ip6tables"}) {
    const ProcessOutcome o = run(rule(tool, "-C", iface, tag));
    if (o.spawn_failed || o.timed_out) {
      return fail(Code::kPlaceUnusable, std::string(tool) + " -C INPUT: " + o.describe());
    }
    if (!o.succeeded()) return false;
  }
  return true;
}

Result<void> guard_remove(const std::string& tag) {
  if (!valid("lo", tag)) return fail(Code::kInvalidArgument, "host guard " + tag + ": not a tag");
  // iptables-nft prints the comment quoted, iptables-legacy does not.
  const std::string plain = " --comment spacectl:" + tag + " ",
                    quoted = " --comment \"spacectl:" + tag + "\" ";
  for (const auto& [tool, chain] : {std::pair{"iptables", "INPUT"}, std::pair{"ip6tables", "INPUT"},
                                    std::pair{"iptables", "FORWARD"}}) {
    const ProcessOutcome listed = run({tool, "-w", "10", "-S", chain});
    if (!listed.succeeded()) {
      return fail(Code::kCommandFailed,
                  std::string(tool) + " -S " + chain + ": " + listed.describe());
    }
    std::istringstream in(listed.out);
    int removed = 0;
    for (std::string line; std::getline(in, line) && removed < kMaxCopies;) {
      if (line.rfind("-A " + std::string(chain) + " ", 0) != 0 ||
          ((line + " ").find(plain) == std::string::npos &&
           (line + " ").find(quoted) == std::string::npos)) {
        continue;
      }
      // Our own rule's words (no quoting: the tag has no spaces): -A becomes -D.
      std::vector<std::string> argv = {tool, "-w", "10"};
      std::istringstream words(line);
      for (std::string w; words >> w;) {
        if (w.size() >= 2 && w.front() == '"' && w.back() == '"') w = w.substr(1, w.size() - 2);
        argv.push_back(argv.size() == 3 && w == "-A" ? "-D" : w);
      }
      const ProcessOutcome o = run(argv);
      if (!o.succeeded()) {
        return fail(Code::kCommandFailed, std::string(tool) + " -D " + line + ": " + o.describe());
      }
      ++removed;
    }
  }
  return {};
}

}  // namespace controller
