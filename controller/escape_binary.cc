// The suite binary in a space (escape_binary.h).
#include "controller/escape_binary.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "controller/docker_place.h"
#include "controller/escape_runner.h"
#include "controller/process.h"
#include "controller/temp_dir.h"
#include "escape-suite/report.h"
#include "escape-suite/sha256.h"
#include "escape-suite/upstream_answer.h"

namespace controller {

using escape::CaseResult;
using nlohmann::json;

Result<ExecOutput> exec_spelled(Place& place, const std::string& id, bool as_root,
                                const std::vector<std::vector<std::string>>& spellings,
                                const std::string& stdin_bytes) {
  Result<ExecOutput> r = fail(Code::kInternal, "no spelling tried");
  for (const std::vector<std::string>& argv : spellings) {
    r = as_root ? place.privileged_exec()->exec_as_root(id, argv, stdin_bytes, kCopyTimeout)
                : place.exec(id, ExecTarget::kSpace, argv, stdin_bytes, kCopyTimeout);
    if (!r || (r->exit_code != 126 && r->exit_code != 127)) break;
  }
  return r;
}

std::string inside_text(const std::string& text) { return escape::printable(text.substr(0, 200)); }

Result<void> copy_into(Place& place, const std::string& id, const std::string& path,
                       const std::string& bytes, bool executable, bool as_root) {
  Result<ExecOutput> r = exec_spelled(place, id, as_root,
                                      {{"dd", "of=" + path, "bs=65536"},
                                       {"busybox", "dd", "of=" + path, "bs=65536"},
                                       {"tee", path},
                                       {"busybox", "tee", path}},
                                      bytes);
  if (!r) return r.error();
  if (r->exit_code != 0) {
    return fail(Code::kCommandFailed, "copy into " + id + ":" + path + ": exit " +
                                          std::to_string(r->exit_code) + ": " +
                                          inside_text(r->err));
  }
  if (!executable) return {};
  Result<ExecOutput> c = exec_spelled(
      place, id, as_root, {{"chmod", "755", path}, {"busybox", "chmod", "755", path}}, {});
  if (!c) return c.error();
  if (c->exit_code != 0) {
    return fail(Code::kCommandFailed,
                "chmod 755 " + path + " in " + id + ": exit " + std::to_string(c->exit_code));
  }
  return {};
}

Result<std::string> place_binary(Place& place, const std::string& id, const std::string& run,
                                 const std::string& bytes) {
  const std::string dir = "/tmp/escape-suite-" + run;
  Result<ExecOutput> m = exec_spelled(
      place, id, true, {{"mkdir", "-m", "755", dir}, {"busybox", "mkdir", "-m", "755", dir}}, {});
  if (!m) return m.error();
  if (m->exit_code != 0) {
    return fail(Code::kCommandFailed, "mkdir " + dir + " in " + id + " as root: exit " +
                                          std::to_string(m->exit_code) + ": " +
                                          inside_text(m->err));
  }
  const std::string path = dir + "/escape-suite";
  if (Result<void> c = copy_into(place, id, path, bytes, true, true); !c) return c.error();
  return path;
}

std::string start_window_upstream(const DockerCli& cli, const std::string& container,
                                  const std::string& binary, const std::string& key_sha) {
  const std::string path = "/tmp/escape-suite";
  std::string last;
  bool copied = false;
  for (const std::vector<std::string>& copy :
       {std::vector<std::string>{"dd", "of=" + path, "bs=65536"},
        std::vector<std::string>{"busybox", "dd", "of=" + path, "bs=65536"}}) {
    std::vector<std::string> args = {"exec", "--interactive", "--", container};
    args.insert(args.end(), copy.begin(), copy.end());
    Result<ProcessOutcome> o = cli.run_raw(args, container, kCopyTimeout, binary);
    if (o && o->succeeded()) {
      copied = true;
      break;
    }
    last = o ? o->describe() : o.error().message;
  }
  if (!copied) return "copy the suite into " + container + ": " + last;
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{"chmod", "755", path},
        std::vector<std::string>{"nc", "-ll", "-p", "80", "-e", path,
                                 std::string(escape::kAnswerUpstreamMode), "--key-sha256",
                                 key_sha}}) {
    std::vector<std::string> args = {"exec"};
    if (step[0] == "nc") args.emplace_back("--detach");
    args.insert(args.end(), {"--", container});
    args.insert(args.end(), step.begin(), step.end());
    if (Result<std::string> r = cli.run(args, container, kCopyTimeout); !r) {
      return r.error().message;
    }
  }
  return {};
}

std::string placed_sha256(Place& place, const std::string& id, const std::string& path) {
  Result<ExecOutput> r =
      exec_spelled(place, id, true, {{"sha256sum", path}, {"busybox", "sha256sum", path}}, {});
  if (!r || r->exit_code != 0 || r->out.size() < 64) return {};
  return r->out.substr(0, 64);
}

Result<std::vector<std::string>> host_listed_ids(const std::string& bytes,
                                                 const std::vector<std::string>& only) {
  char tmpl[] = "/tmp/spacectl-escape-list-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (d == nullptr) return fail(Code::kInternal, "escape-test: mkdtemp for the host list failed");
  const std::string dir = d, file = dir + "/escape-suite";
  Result<std::vector<std::string>> out =
      fail(Code::kInternal, "escape-test: escape-suite --list on the host did not run");
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  if (::chmod(file.c_str(), 0700) == 0) {
    ProcessRequest req;
    req.argv = {file, "--list"};
    for (const std::string& g : only) req.argv.insert(req.argv.end(), {"--only", g});
    req.timeout = std::chrono::milliseconds(30000);
    const ProcessOutcome o = run_process(req);
    if (o.succeeded()) {
      out = listed_ids(o.out);
    } else {
      out = fail(Code::kCommandFailed,
                 "escape-test: escape-suite --list on the host: " + o.describe());
    }
  }
  ::unlink(file.c_str());
  ::rmdir(dir.c_str());
  return out;
}

escape::Outcome forged_report_refused(Place& place, const std::string& id, const std::string& path,
                                      const std::string& bytes,
                                      const std::vector<std::string>& expected) {
  std::string ev;
  const std::string forged_script =
      "#!/bin/sh\necho '{\"suite\":\"escape-suite\",\"version\":1,\"cases\":[]}'\n";
  const std::string dir = path.substr(0, path.rfind('/'));
  // A file the space user owns, to move over the binary.
  const std::string own = dir + "-forged";
  if (Result<void> c = copy_into(place, id, own, forged_script, true, false); !c) {
    return escape::inconclusive("the space user could not write " + own + ": " + c.error().message);
  }
  const std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> attempts = {
      {"overwrite", {{"dd", "of=" + path}, {"busybox", "dd", "of=" + path}}},
      {"remove", {{"rm", "-f", path}, {"busybox", "rm", "-f", path}}},
      {"replace", {{"mv", "-f", own, path}, {"busybox", "mv", "-f", own, path}}},
      {"chmod", {{"chmod", "777", dir}, {"busybox", "chmod", "777", dir}}},
  };
  for (const auto& [what, spellings] : attempts) {
    Result<ExecOutput> r = exec_spelled(place, id, false, spellings, forged_script);
    if (!r) {
      return escape::inconclusive("the space user's " + what +
                                  " attempt did not run: " + r.error().message);
    }
    if (r->exit_code == 0) {
      return escape::fail("the space user's " + what + " of " + path + " succeeded");
    }
    ev += what + " refused (exit " + std::to_string(r->exit_code) + "); ";
  }
  (void)exec_spelled(place, id, false, {{"rm", "-f", own}, {"busybox", "rm", "-f", own}}, {});
  const std::string want = escape::sha256_hex(bytes), got = placed_sha256(place, id, path);
  if (got.empty()) {
    return escape::inconclusive(ev + "the placed binary's sha256 could not be read back");
  }
  if (got != want) {
    return escape::fail(ev + "the placed binary changed: sha256 " + got + ", placed " + want);
  }
  ev += "placed binary unchanged (sha256 " + want.substr(0, 16) + "...); ";
  if (expected.size() < 3) {
    return escape::inconclusive(ev + "fewer than 3 listed cases to forge reports with");
  }
  auto report_of = [](const std::vector<std::string>& ids, const std::string& extra_case) {
    json cases = json::array();
    for (const std::string& i : ids) {
      cases.push_back({{"id", i},
                       {"group", i.substr(0, i.find('.'))},
                       {"verdict", "PASS"},
                       {"evidence", "forged"},
                       {"duration_ms", 0}});
    }
    std::string text = json{{"suite", "escape-suite"}, {"version", 1}, {"cases", cases}}.dump();
    if (!extra_case.empty()) text.insert(text.size() - 2, "," + extra_case);
    return text;
  };
  const std::vector<std::pair<std::string, std::string>> forgeries = {
      {"two cases: two passed", report_of({expected[0], expected[1]}, "")},
      {"a duplicate",
       report_of(expected,
                 json{{"id", expected[0]}, {"verdict", "PASS"}, {"evidence", ""}}.dump())},
      {"an unknown id",
       report_of(expected, R"({"id":"fs.forged","verdict":"PASS","evidence":""})")},
      {"an id with a newline and a terminal escape",
       report_of(
           expected,
           json{{"id", "fs.x\n\x1b[2KPASS fs.all"}, {"verdict", "PASS"}, {"evidence", ""}}.dump())},
      {"a wrong-typed group",
       report_of(
           {expected.begin() + 1, expected.end()},
           json{{"id", expected[0]}, {"group", 7}, {"verdict", "PASS"}, {"evidence", ""}}.dump())},
  };
  for (const auto& [what, text] : forgeries) {
    Result<ExecOutput> r = exec_spelled(place, id, false, {{"cat"}, {"busybox", "cat"}}, text);
    if (!r || r->exit_code != 0) {
      return escape::inconclusive(ev + "cat in the space did not print the forged report (" + what +
                                  ")");
    }
    Result<std::vector<CaseResult>> parsed = parse_suite_report(r->out);
    if (parsed && check_reported_ids(*parsed, expected)) {
      return escape::fail(ev + "a forged report with " + what + " was accepted");
    }
    ev += what + " refused; ";
  }
  return escape::pass(ev);
}

}  // namespace controller
