// A recording stand-in for the `docker` CLI (unit tests put it first in PATH as `docker`). Each
// call appends argv and stdin to $FAKE_DOCKER_LOG as: args joined by 0x1f, 0x1e, stdin, 0x1d '\n'.
// Answers: `container inspect` prints $FAKE_DOCKER_ANSWERS/container-inspect[-gatekeeper].json,
// `network inspect` prints network-inspect.json, `exec` prints {"ok":true}; other calls print an id.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

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
  std::string stdin_bytes;
  const std::string first = argc > 1 ? argv[1] : "";
  const std::string second = argc > 2 ? argv[2] : "";
  if (first == "exec") stdin_bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (const char* log = std::getenv("FAKE_DOCKER_LOG")) {
    std::ofstream out(log, std::ios::app | std::ios::binary);
    for (int i = 1; i < argc; ++i) out << (i > 1 ? "\x1f" : "") << argv[i];
    out << '\x1e' << stdin_bytes << '\x1d' << '\n';
  }
  const char* answers = std::getenv("FAKE_DOCKER_ANSWERS");
  if (first == "version") {
    std::cout << "20.10.24\n";
    return 0;
  }
  if (first == "image" && second == "inspect") {
    std::cout << (argc > 4 && std::strstr(argv[4], "Env") != nullptr ? "[\"PATH=/bin\"]\n" : "sha256:00\n");
    return 0;
  }
  if ((first == "container" && second == "inspect")) {
    const std::string name = argc > 3 ? argv[3] : "";
    const bool gatekeeper = name.size() > 11 && name.compare(name.size() - 11, 11, "-gatekeeper") == 0;
    if (gatekeeper && print_file(answers, "container-inspect-gatekeeper.json")) return 0;
    if (print_file(answers, "container-inspect.json")) return 0;
    std::cerr << "Error: No such container: " << (argc > 3 ? argv[3] : "") << "\n";
    return 1;
  }
  if (first == "network" && second == "inspect") {
    if (print_file(answers, "network-inspect.json")) return 0;
    std::cerr << "Error: No such network\n";
    return 1;
  }
  if (first == "exec") {
    std::cout << "{\"ok\":true,\"ready\":true,\"grants\":[]}\n";
    return 0;
  }
  if (first == "ps" || (first == "network" && second == "ls") || (first == "volume" && second == "ls")) return 0;
  std::cout << "0123456789abcdef\n";
  return 0;
}
