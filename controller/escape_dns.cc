#include "controller/escape_dns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace controller {
namespace {

constexpr std::size_t kHeader = 12;
constexpr std::size_t kMaxQuery = 512;  // RFC 1035 4.2.1; a question is far smaller
constexpr std::size_t kMaxName = 255;   // RFC 1035 2.3.4
constexpr std::size_t kMaxLabel = 63;
constexpr std::uint16_t kTypeA = 1, kTypeAaaa = 28, kClassIn = 1;
constexpr std::uint16_t kRcodeNxDomain = 3, kRcodeNotImplemented = 4;

std::uint16_t get16(const std::string& b, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(b[at]) << 8) |
                                    static_cast<unsigned char>(b[at + 1]));
}
void put16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

TestResolver::~TestResolver() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

Result<void> TestResolver::start(const std::string& ipv4) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  if (inet_pton(AF_INET, ipv4.c_str(), &sin.sin_addr) != 1) {
    return fail(Code::kInvalidArgument, "test resolver " + ipv4 + ": not an IPv4 address");
  }
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) {
    return fail(Code::kInternal, "test resolver: socket: " + std::string(std::strerror(errno)));
  }
  // Podman (netavark) makes a network's bridge, and with it the host's address there, only when
  // the first container joins: the address may not exist yet when the twin must be told the port.
  // IP_FREEBIND binds it anyway; datagrams arrive once the bridge holds it.
  const int one = 1;
  if (::setsockopt(fd_, IPPROTO_IP, IP_FREEBIND, &one, sizeof one) != 0) {
    return fail(Code::kInternal,
                "test resolver: IP_FREEBIND: " + std::string(std::strerror(errno)));
  }
  socklen_t length = sizeof sin;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&sin), &length) != 0) {
    return fail(Code::kInternal, "test resolver: bind " + ipv4 + ":0: " + std::strerror(errno));
  }
  endpoint_ = ipv4 + ":" + std::to_string(ntohs(sin.sin_port));
  thread_ = std::thread([this] { loop(); });
  return {};
}

void TestResolver::set(const std::string& name, std::vector<std::vector<std::string>> a_sets,
                       std::vector<std::string> aaaa) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = names_[name];
  e.a_sets = std::move(a_sets);
  e.aaaa = std::move(aaaa);
  e.next = 0;
}

std::pair<int, int> TestResolver::questions(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(name);
  return it == names_.end() ? std::pair{0, 0}
                            : std::pair{it->second.a_questions, it->second.aaaa_questions};
}

std::string TestResolver::answer(const std::string& q) {
  if (q.size() < kHeader || q.size() > kMaxQuery) return {};
  const std::uint16_t flags = get16(q, 2);
  // A query (QR 0), one question, nothing else but at most one additional record (EDNS OPT).
  if ((flags & 0x8000) != 0 || get16(q, 4) != 1 || get16(q, 6) != 0 || get16(q, 8) != 0 ||
      get16(q, 10) > 1) {
    return {};
  }
  std::size_t at = kHeader;
  std::string name;
  while (true) {
    if (at >= q.size()) return {};
    const std::size_t len = static_cast<unsigned char>(q[at]);
    if (len == 0) break;
    if (len > kMaxLabel || at + 1 + len > q.size()) return {};  // also refuses compression pointers
    if (!name.empty()) name.push_back('.');
    for (std::size_t i = 0; i < len; ++i) name.push_back(lower(q[at + 1 + i]));
    at += 1 + len;
    if (name.size() > kMaxName) return {};
  }
  ++at;
  if (at + 4 > q.size()) return {};
  const std::uint16_t type = get16(q, at), klass = get16(q, at + 2);
  const std::string question = q.substr(kHeader, at + 4 - kHeader);

  std::string out = q.substr(0, 2);
  const bool opcode_query = ((flags >> 11) & 0xf) == 0;
  std::uint16_t rcode = 0;
  std::vector<std::string> answers;  // rdata
  if (!opcode_query || klass != kClassIn) {
    rcode = kRcodeNotImplemented;
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = names_.find(name);
    if (it == names_.end()) {
      rcode = kRcodeNxDomain;
    } else if (type == kTypeA) {
      Entry& e = it->second;
      ++e.a_questions;
      if (!e.a_sets.empty()) {
        for (const std::string& a : e.a_sets[e.next % e.a_sets.size()]) {
          in_addr v4{};
          if (inet_pton(AF_INET, a.c_str(), &v4) == 1) {
            answers.emplace_back(reinterpret_cast<const char*>(&v4), 4);
          }
        }
        ++e.next;
      }
    } else if (type == kTypeAaaa) {
      ++it->second.aaaa_questions;
      for (const std::string& a : it->second.aaaa) {
        in6_addr v6{};
        if (inet_pton(AF_INET6, a.c_str(), &v6) == 1) {
          answers.emplace_back(reinterpret_cast<const char*>(&v6), 16);
        }
      }
    }
    // Any other type: no data (NOERROR, no answer).
  }
  // QR, AA, the query's opcode and RD; RA 0.
  put16(out, static_cast<std::uint16_t>(0x8000 | 0x0400 | (flags & 0x7900) | rcode));
  put16(out, 1);
  put16(out, static_cast<std::uint16_t>(answers.size()));
  put16(out, 0);
  put16(out, 0);
  out += question;
  for (const std::string& rdata : answers) {
    put16(out, 0xc00c);  // the name of the question
    put16(out, rdata.size() == 4 ? kTypeA : kTypeAaaa);
    put16(out, kClassIn);
    put16(out, 0);  // TTL 0: nobody may keep the answer (the rebinding name changes per query)
    put16(out, 0);
    put16(out, static_cast<std::uint16_t>(rdata.size()));
    out += rdata;
  }
  return out;
}

void TestResolver::loop() {
  char buf[kMaxQuery + 1];
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    sockaddr_storage from{};
    socklen_t from_length = sizeof from;
    const ssize_t n =
        ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n <= 0) continue;
    const std::string reply = answer(std::string(buf, static_cast<std::size_t>(n)));
    if (!reply.empty()) {
      (void)::sendto(fd_, reply.data(), reply.size(), MSG_NOSIGNAL,
                     reinterpret_cast<sockaddr*>(&from), from_length);
    }
  }
}

}  // namespace controller
