// A recording stand-in for the `docker` CLI (unit tests put it first in PATH as `docker`). Each
// call appends argv and stdin to $FAKE_DOCKER_LOG as: args joined by 0x1f, 0x1e, stdin, 0x1d '\n'.
// Answers: `container inspect` prints $FAKE_DOCKER_ANSWERS/container-inspect[-gatekeeper].json,
// `network inspect` prints network-inspect.json, `exec` prints {"ok":true} (the gatekeeper's
// journal and policy to GET /journal and GET /policy); other calls print an id.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "policy/number.h"

namespace {

bool print_file(const char* dir, const char* name) {
  if (dir == nullptr) return false;
  std::ifstream in(std::string(dir) + "/" + name);
  if (!in) return false;
  std::cout << std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // spacectl puts `--` before positional arguments; the answers below look past it.
  std::vector<char*> kept;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") != 0 || i < 2) kept.push_back(argv[i]);
  }
  const int logged_argc = argc;
  char** const logged_argv = argv;
  argc = static_cast<int>(kept.size());
  kept.push_back(nullptr);
  argv = kept.data();
  std::string stdin_bytes;
  const std::string first = argc > 1 ? argv[1] : "";
  const std::string second = argc > 2 ? argv[2] : "";
  // A held exec (FAKE_DOCKER_EXEC_WAIT_FOR, below) reads no stdin: a streaming exec (a
  // receive-pack) writes only after the answer's first line, so reading would wait for ever. It is
  // logged at once, with no stdin.
  const bool held = first == "exec" && std::getenv("FAKE_DOCKER_EXEC_WAIT_FOR") != nullptr;
  if (first == "exec" && !held) {
    stdin_bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  if (const char* log = std::getenv("FAKE_DOCKER_LOG")) {
    std::ofstream out(log, std::ios::app | std::ios::binary);
    for (int i = 1; i < logged_argc; ++i) out << (i > 1 ? "\x1f" : "") << logged_argv[i];
    out << '\x1e' << stdin_bytes << '\x1d' << '\n';
  }
  // FAKE_DOCKER_MARKS=<dir>: each call leaves <dir>/<first>-<second> when it starts (second only
  // when it is no flag), and FAKE_DOCKER_WAIT_MARK="<first> <second>=<mark>" holds that call until
  // <dir>/<mark> exists (at most 5 s), then appends "met" or "alone" to <dir>/waited: whether the
  // two calls ran at the same time (the held one started while or after the other did).
  if (const char* marks = std::getenv("FAKE_DOCKER_MARKS")) {
    const std::string dir = marks;
    std::ofstream(dir + "/" + first + "-" + (second.rfind('-', 0) == 0 ? "" : second)).put('\n');
    const char* wait = std::getenv("FAKE_DOCKER_WAIT_MARK");
    const std::string rule = wait != nullptr ? wait : "";
    const std::size_t eq = rule.find('=');
    if (eq != std::string::npos && rule.substr(0, eq) == first + " " + second) {
      const std::string mark = dir + "/" + rule.substr(eq + 1);
      int i = 0;
      while (i < 500 && access(mark.c_str(), F_OK) != 0) ::usleep(10000), ++i;
      std::ofstream(dir + "/waited", std::ios::app) << (i < 500 ? "met" : "alone") << "\n";
    }
  }
  const char* answers = std::getenv("FAKE_DOCKER_ANSWERS");
  // FAKE_DOCKER_FAIL="<first> <second>": that call fails as a list or inspect would.
  if (const char* f = std::getenv("FAKE_DOCKER_FAIL"); f != nullptr && first + " " + second == f) {
    std::cerr << "Error response from daemon: fake failure of " << f << "\n";
    return 1;
  }
  // FAKE_DOCKER_SLEEP_ON=<first>: that call hangs (a step a stop signal must interrupt).
  if (const char* f = std::getenv("FAKE_DOCKER_SLEEP_ON"); f != nullptr && first == f) ::sleep(30);
  if (first == "version") {
    std::cout << "20.10.24\n";
    return 0;
  }
  if (first == "info" && argc > 3 && std::strstr(argv[3], "ServerVersion") != nullptr) {
    std::cout << "20.10.24 2\n";  // create's one call for the version and the cores
    return 0;
  }
  if (first == "info" && argc > 3 && std::strstr(argv[3], "NCPU") != nullptr) {
    std::cout << "2\n";  // a two-core place: the space's default quota is one CPU
    return 0;
  }
  if (first == "image" && second == "inspect") {
    // An image ID names itself, as the engine answers; any other reference resolves to all zeros.
    const std::string last = argv[argc - 1];
    const bool by_id = last.size() == 71 && last.rfind("sha256:", 0) == 0;
    const std::string id = by_id ? last : "sha256:" + std::string(64, '0');
    const bool env = argc > 4 && std::strstr(argv[4], "Env") != nullptr;
    const bool with_id = argc > 4 && std::strstr(argv[4], "{{.Id}}") != nullptr;
    std::cout << (env && with_id ? id + " [\"PATH=/bin\"]\n"
                  : env          ? "[\"PATH=/bin\"]\n"
                                 : id + "\n");
    return 0;
  }
  if ((first == "container" && second == "inspect")) {
    const std::string name = argc > 3 ? argv[3] : "";
    const bool gatekeeper =
        name.size() > 11 && name.compare(name.size() - 11, 11, "-gatekeeper") == 0;
    if (gatekeeper && print_file(answers, "container-inspect-gatekeeper.json")) return 0;
    if (print_file(answers, "container-inspect.json")) return 0;
    std::cerr << "Error: No such container: " << (argc > 3 ? argv[3] : "") << "\n";
    return 1;
  }
  // FAKE_DOCKER_NETWORKS=<file>: the engine's networks, a line "<id> <subnet>…" each (printed
  // as they are, so a test can hand spacectl any text): `network ls --no-trunc --format {{.ID}}`
  // lists their IDs, an inspect with the IPAM template prints the lines of the IDs asked for (a
  // missing one: the engine's "No such network" and exit 1 after the others, as Docker does).
  const char* networks = std::getenv("FAKE_DOCKER_NETWORKS");
  if (networks != nullptr && first == "network" &&
      (second == "ls" ||
       (second == "inspect" && argc > 4 && std::strstr(argv[4], "IPAM") != nullptr))) {
    std::vector<std::string> lines;
    {
      std::ifstream in(networks);
      for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    auto id_of = [](const std::string& line) { return line.substr(0, line.find(' ')); };
    if (second == "ls") {
      if (argc < 6 || std::strcmp(argv[3], "--no-trunc") != 0 ||
          std::strcmp(argv[5], "{{.ID}}") != 0) {
        return 0;  // list's label filter: none ours
      }
      for (const std::string& line : lines) std::cout << id_of(line) << "\n";
      return 0;
    }
    int status = 0;
    for (int i = 5; i < argc; ++i) {
      bool found = false;
      for (const std::string& line : lines) {
        if (id_of(line) == argv[i]) std::cout << line << "\n", found = true;
      }
      if (!found) std::cerr << "Error: No such network: " << argv[i] << "\n", status = 1;
    }
    return status;
  }
  if (first == "network" && second == "inspect") {
    if (print_file(answers, "network-inspect.json")) return 0;
    std::cerr << "Error: No such network\n";
    return 1;
  }
  if (first == "volume" && second == "inspect") {
    if (print_file(answers, "volume-inspect.json")) return 0;
    std::cerr << "Error: No such volume\n";
    return 1;
  }
  if (first == "exec" && std::getenv("FAKE_DOCKER_STATE") != nullptr &&
      std::string(argv[argc - 1]) == "/network") {
    // A gatekeeper that takes time: it holds the body after DELAY_BEFORE, answers after
    // DELAY_AFTER.
    auto pause = [](const char* name) {
      if (const char* ms = std::getenv(name)) {
        ::usleep(policy::parse_number<useconds_t>(ms).value_or(0) * 1000);
      }
    };
    pause("FAKE_DOCKER_EXEC_DELAY_BEFORE_MS");
    std::ofstream(std::string(std::getenv("FAKE_DOCKER_STATE")) + "/network", std::ios::app)
        << stdin_bytes << "\n";
    pause("FAKE_DOCKER_EXEC_DELAY_AFTER_MS");
  }
  // FAKE_DOCKER_EXEC_WAIT_FOR=<path>: every exec waits (at most 60 s) until that file exists, so a
  // test can hold a spacectl inside its exec, under its space's lock, for as long as it needs.
  if (const char* wait_for = std::getenv("FAKE_DOCKER_EXEC_WAIT_FOR");
      first == "exec" && wait_for != nullptr) {
    for (int i = 0; i < 6000 && access(wait_for, F_OK) != 0; ++i) ::usleep(10000);
  }
  if (first == "exec") {
    // The gatekeeper's answers: GET /journal and GET /policy as the appliance writes them, {"ok":
    // true, ...} to anything else. FAKE_DOCKER_EXEC_OUT=<file>: the command printed that file
    // instead (a hostile gatekeeper's answer).
    const std::string last = argv[argc - 1];
    const char* out_file = std::getenv("FAKE_DOCKER_EXEC_OUT");
    if (out_file != nullptr) {
      std::ifstream in(out_file);
      std::cout << std::string(std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>());
    } else if (last == "/journal") {
      std::cout << R"({"records":[{"at":"2026-11-30T12:00:00.000Z","listener":"corridor",)"
                   R"("host":"example.com","port":443,"decision":"allow"}],"dropped":0,)"
                   R"("since":"2026-11-30T11:00:00.000Z"})"
                << "\n";
    } else if (last == "/policy") {
      std::cout << R"({"mode":"allowlist","domains":[],"grants":[]})"
                << "\n";
    } else {
      std::cout << "{\"ok\":true,\"ready\":true,\"grants\":[]}\n";
    }
    // FAKE_DOCKER_EXEC_EXIT=N: the command inside exits N; FAKE_DOCKER_EXEC_STDERR: what it
    // printed.
    if (const char* text = std::getenv("FAKE_DOCKER_EXEC_STDERR")) std::cerr << text << "\n";
    if (const char* code = std::getenv("FAKE_DOCKER_EXEC_EXIT")) {
      const std::optional<int> status = policy::parse_number<int>(code);
      if (!status) {
        std::fprintf(stderr, "fake docker: FAKE_DOCKER_EXEC_EXIT=%s is not a number\n", code);
      }
      return status.value_or(125);
    }
    return 0;
  }
  // FAKE_DOCKER_PS_LINES=<file>: `ps` prints that file as it is (any text a test hands list).
  if (const char* lines = std::getenv("FAKE_DOCKER_PS_LINES"); lines != nullptr && first == "ps") {
    std::ifstream in(lines);
    std::cout << std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return 0;
  }
  // FAKE_DOCKER_PS=<id>: `ps` lists that container as a space container (list then inspects it):
  // its ID alone, or the summary list's JSON format asks for.
  if (const char* ps = std::getenv("FAKE_DOCKER_PS"); ps != nullptr && first == "ps") {
    const bool summary = argc > 5 && std::strstr(argv[5], "\"Labels\"") != nullptr;
    if (summary) {
      std::cout << "{\"ID\":\"" << ps
                << "\",\"State\":\"running\",\"Image\":\"\",\"Labels\":{\"spacectl.space.role\":"
                   "\"space\"}}\n";
    } else {
      std::cout << ps << "\n";
    }
    return 0;
  }
  if (first == "ps" || (first == "network" && second == "ls") ||
      (first == "volume" && second == "ls")) {
    return 0;
  }
  std::cout << "0123456789abcdef\n";
  return 0;
}
