// The escape runner's test resolver: a small authoritative DNS server on UDP that only the twin's
// TEST-ONLY gatekeeper asks (`serve --dns-server`), on the host's address of the runner's test
// bridge. It answers the names of escape-suite/resolve_names.h with TTL 0, NXDOMAIN for any other
// name, and counts the questions per name (the proof that a case reached the resolver). Queries
// are read as hostile bytes: one question, bounded labels, no compression; anything else is
// dropped unanswered. Never used by a release gatekeeper.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/errors.h"

namespace controller {

class TestResolver {
 public:
  TestResolver() = default;
  TestResolver(const TestResolver&) = delete;
  TestResolver& operator=(const TestResolver&) = delete;
  ~TestResolver();

  // Binds UDP on `ipv4`:0 and answers on its own thread until destroyed.
  Result<void> start(const std::string& ipv4);
  // "a.b.c.d:port" once started.
  [[nodiscard]] std::string endpoint() const { return endpoint_; }

  // `name`'s A answers: each query takes the next set of `a_sets` in turn (one set: always the
  // same). `aaaa`: the AAAA answer. Addresses are literals; an unparsable one is left out.
  void set(const std::string& name, std::vector<std::vector<std::string>> a_sets,
           std::vector<std::string> aaaa);
  // Questions seen for `name` (A and AAAA): A ones, AAAA ones.
  [[nodiscard]] std::pair<int, int> questions(const std::string& name);

  // The answer to one query, or "" to drop it (exposed for the unit test).
  std::string answer(const std::string& query);

 private:
  struct Entry {
    std::vector<std::vector<std::string>> a_sets;
    std::vector<std::string> aaaa;
    std::size_t next = 0;
    int a_questions = 0, aaaa_questions = 0;
  };
  void loop();

  int fd_ = -1;
  std::string endpoint_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::map<std::string, Entry> names_;
};

}  // namespace controller
