// The one c-ares boundary (docs/decisions.md#one-boundary-per-c-library): a channel driven by the
// uv loop (uv_poll per socket c-ares opens, one uv_timer for its timeouts). Names are resolved
// once, A and AAAA together (AF_UNSPEC, resolver order kept: ARES_AI_NOSORT), with no search
// domains, no /etc/hosts (lookups "b") and our own deadline on top of c-ares' per-try timeout.
#pragma once

#include <uv.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "appliance/serve/options.h"
#include "policy/address.h"
#include "policy/result.h"

struct ares_channeldata;
struct ares_addrinfo;

namespace appliance::serve {

inline constexpr std::uint64_t kDnsDeadlineMs = 5'000;
inline constexpr int kDnsTryTimeoutMs = 1'500;
inline constexpr int kDnsTries = 2;
// Queries in c-ares at once. c-ares cannot cancel one query, so a query whose connection went away
// stays until it is answered or times out (up to kDnsTries × kDnsTryTimeoutMs per server); a
// connect-then-close loop would otherwise grow them without bound. Past the cap a lookup fails
// at once with the detail "busy" (deny:unresolved:busy).
inline constexpr std::size_t kMaxOutstandingQueries = 256;

struct Resolution {
  bool ok = false;
  std::string detail;                      // when !ok: ENOTFOUND, ESERVFAIL, timeout, ...
  std::vector<policy::Address> addresses;  // when ok: every answer in resolver order
};

// What the corridor and the window ask of a resolver: the c-ares Resolver below in `gatekeeper
// serve`, a scripted one in the loop tests (tests/loop/).
class NameResolver {
 public:
  using Callback = void (*)(void* owner, Resolution resolution);
  // One lookup in flight; what it holds is its resolver's business.
  struct Query {
    virtual ~Query() = default;
  };

  virtual ~NameResolver() = default;
  // Starts a lookup. `callback` runs exactly once, unless cancel() is called first; it may run
  // before resolve() returns (then nullptr is returned), e.g. with "busy" at the cap.
  virtual Query* resolve(const std::string& name, Callback callback, void* owner) = 0;
  // The owner goes away: its callback will not run.
  virtual void cancel(Query* query) = 0;
  [[nodiscard]] virtual std::size_t outstanding() const noexcept = 0;
};

class Resolver final : public NameResolver {
 public:
  static policy::Result<std::unique_ptr<Resolver>> create(uv_loop_t* loop,
                                                          const std::vector<DnsServer>& servers);
  ~Resolver() override;
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  Query* resolve(const std::string& name, Callback callback, void* owner) override;
  [[nodiscard]] std::size_t outstanding() const noexcept override { return outstanding_; }
  void cancel(Query* query) override;
  // Ends every query and closes every handle (shutdown).
  void close();

  struct AresQuery;  // one getaddrinfo and its deadline timer (resolver.cc)

 private:
  explicit Resolver(uv_loop_t* loop);
  struct Poll;
  static void on_sock_state(void* data, int fd, int readable, int writable) noexcept;
  static void on_poll(uv_poll_t* handle, int status, int events) noexcept;
  static void on_timer(uv_timer_t* handle) noexcept;
  static void on_answer(void* arg, int status, int timeouts, ::ares_addrinfo* result) noexcept;
  static void on_deadline(uv_timer_t* handle) noexcept;
  void reschedule();
  // Starts watching the sockets c-ares opened or changed while it ran (watch_later_).
  void watch_pending();

  uv_loop_t* loop_;
  ares_channeldata* channel_ = nullptr;
  uv_timer_t timer_{};
  std::map<int, Poll*> polls_;
  // Sockets c-ares asked to be watched, and for what (UV_READABLE | UV_WRITABLE), not yet handed
  // to libuv: a query's socket is watched once c-ares has sent on it, so setting up its poll
  // (libuv's epoll_ctl probe and ioctl) overlaps the name server's answer instead of delaying
  // the query.
  std::map<int, int> watch_later_;
  std::size_t outstanding_ = 0;  // resolve() started, on_answer() not yet run
  bool closed_ = false;
};

}  // namespace appliance::serve
