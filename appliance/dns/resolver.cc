#include "appliance/dns/resolver.h"

#include <ares.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "appliance/loop/handle.h"
#include "appliance/serve/interfaces.h"

namespace appliance::serve {

struct Resolver::Poll {
  uv_poll_t handle{};
  Resolver* resolver = nullptr;
  int fd = -1;
};

struct Resolver::AresQuery final : NameResolver::Query {
  Resolver* resolver = nullptr;
  Callback callback = nullptr;
  void* owner = nullptr;
  uv_timer_t deadline{};
  bool answered = false;      // c-ares called back
  bool timer_closed = false;  // the deadline timer's close callback ran
};

namespace {

std::string ares_detail(int status) {
  switch (status) {
    case ARES_ENOTFOUND:
      return "ENOTFOUND";
    case ARES_ENODATA:
      return "ENODATA";
    case ARES_ESERVFAIL:
      return "ESERVFAIL";
    case ARES_EREFUSED:
      return "EREFUSED";
    case ARES_ETIMEOUT:
      return "ETIMEOUT";
    case ARES_ECONNREFUSED:
      return "ECONNREFUSED";
    case ARES_EBADNAME:
      return "EBADNAME";
    case ARES_EFORMERR:
      return "EFORMERR";
    case ARES_ENOTIMP:
      return "ENOTIMP";
    case ARES_EBADRESP:
      return "EBADRESP";
    case ARES_EDESTRUCTION:
      return "EDESTRUCTION";
    case ARES_ECANCELLED:
      return "ECANCELLED";
    default:
      return "other";  // int status, not an enum: c-ares has dozens of codes
  }
}

void maybe_free(Resolver::AresQuery* q) {
  if (q->answered && q->timer_closed) delete q;
}

// c-ares' own socket set-up is socket(2) and then three fcntl(2) calls (read the flags, set
// O_NONBLOCK, set FD_CLOEXEC); with these functions socket(2) takes both flags at once and c-ares
// configures nothing itself. The rest is what c-ares would call: still a fresh socket (a source
// port the kernel picks) for each burst of queries, closed once they are answered, and every
// answer read with recvfrom so c-ares checks that it came from the server it asked.
ares_socket_t open_socket(int family, int type, int protocol, void*) noexcept {
  return ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
}

int close_socket(ares_socket_t fd, void*) noexcept { return ::close(fd); }

int connect_socket(ares_socket_t fd, const sockaddr* address, ares_socklen_t length,
                   void*) noexcept {
  return ::connect(fd, address, length);
}

ares_ssize_t receive_from(ares_socket_t fd, void* buffer, std::size_t length, int flags,
                          sockaddr* from, ares_socklen_t* from_length, void*) noexcept {
  return ::recvfrom(fd, buffer, length, flags, from, from_length);
}

ares_ssize_t send_vector(ares_socket_t fd, const iovec* pieces, int count, void*) noexcept {
  // A UDP query is one piece: send(2), as c-ares sends it itself; a TCP query, writev(2).
  if (count == 1) return ::send(fd, pieces[0].iov_base, pieces[0].iov_len, MSG_NOSIGNAL);
  return ::writev(fd, pieces, count);
}

constexpr ares_socket_functions kSocketFunctions = {open_socket, close_socket, connect_socket,
                                                    receive_from, send_vector};

}  // namespace

Resolver::Resolver(uv_loop_t* loop) : loop_(loop) {}

policy::Result<std::unique_ptr<Resolver>> Resolver::create(uv_loop_t* loop,
                                                           const std::vector<DnsServer>& servers) {
  static const int library = ares_library_init(ARES_LIB_INIT_ALL);
  if (library != ARES_SUCCESS) {
    return policy::Error{std::string("ares_library_init: ") + ares_strerror(library)};
  }
  std::unique_ptr<Resolver> self(new Resolver(loop));
  ares_options options{};
  // No search domains (a single label must never become metadata.<search>), no aliases file.
  options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
  options.timeout = kDnsTryTimeoutMs;
  options.tries = kDnsTries;
  char lookups[] = "b";  // DNS only, never /etc/hosts
  options.lookups = lookups;
  options.sock_state_cb = on_sock_state;
  options.sock_state_cb_data = self.get();
  const int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS |
                   ARES_OPT_SOCK_STATE_CB;
  int rc = ares_init_options(&self->channel_, &options, mask);
  if (rc != ARES_SUCCESS) {
    return policy::Error{std::string("ares_init_options: ") + ares_strerror(rc)};
  }
  ares_set_socket_functions(self->channel_, &kSocketFunctions, nullptr);
  if (!servers.empty()) {
    std::string csv;
    for (const DnsServer& s : servers) {
      if (!csv.empty()) csv += ',';
      const bool v6 = s.address.find(':') != std::string::npos;
      csv += v6 ? "[" + s.address + "]" : s.address;
      csv += ':' + std::to_string(s.port);
    }
    rc = ares_set_servers_ports_csv(self->channel_, csv.c_str());
    if (rc != ARES_SUCCESS) {
      ares_destroy(self->channel_);
      self->channel_ = nullptr;
      return policy::Error{"ares_set_servers_ports_csv(" + csv + "): " + ares_strerror(rc)};
    }
  }
  uv_timer_init(loop, &self->timer_);
  self->timer_.data = self.get();
  return self;
}

Resolver::~Resolver() = default;

void Resolver::close() {
  if (closed_) return;
  closed_ = true;
  // Destroying the channel answers every pending query with ARES_EDESTRUCTION and reports every
  // socket closed (which closes its poll handle).
  if (channel_ != nullptr) ares_destroy(channel_);
  channel_ = nullptr;
  watch_later_.clear();
  uv_close(loop::as_handle(&timer_), nullptr);
}

void Resolver::on_sock_state(void* data, int fd, int readable, int writable) noexcept {
  auto* self = static_cast<Resolver*>(data);
  auto it = self->polls_.find(fd);
  if (!readable && !writable) {
    self->watch_later_.erase(fd);
    if (it == self->polls_.end()) return;
    Poll* poll = it->second;
    self->polls_.erase(it);
    uv_poll_stop(&poll->handle);
    uv_close(loop::as_handle(&poll->handle),
             [](uv_handle_t* h) noexcept { delete static_cast<Poll*>(h->data); });
    return;
  }
  const int events = (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0);
  if (it == self->polls_.end()) {
    // c-ares is running (a query being sent, an answer being read): watched when it returns.
    self->watch_later_[fd] = events;
    return;
  }
  // uv_poll_start fails only for a closing handle or a bad descriptor c-ares just handed over;
  // a socket that cannot be watched leaves its query to our deadline (deny:unresolved:timeout).
  (void)uv_poll_start(&it->second->handle, events, on_poll);
}

void Resolver::watch_pending() {
  while (!watch_later_.empty()) {
    const auto [fd, events] = *watch_later_.begin();
    watch_later_.erase(watch_later_.begin());
    auto* poll = new Poll;
    poll->resolver = this;
    poll->fd = fd;
    if (uv_poll_init_socket(loop_, &poll->handle, fd) != 0) {
      delete poll;
      continue;  // unwatched: its query ends at our deadline (deny:unresolved:timeout)
    }
    poll->handle.data = poll;
    polls_[fd] = poll;
    // Fails only for a closing handle or a bad descriptor: as for an unwatched socket above.
    (void)uv_poll_start(&poll->handle, events, on_poll);
  }
}

void Resolver::on_poll(uv_poll_t* handle, int status, int events) noexcept {
  auto* poll = static_cast<Poll*>(handle->data);
  Resolver* self = poll->resolver;
  const int fd = poll->fd;
  ares_socket_t read_fd = ARES_SOCKET_BAD;
  ares_socket_t write_fd = ARES_SOCKET_BAD;
  // On a poll error let c-ares read and write, so it sees the socket error itself.
  if (status < 0 || (events & UV_READABLE)) read_fd = fd;
  if (status < 0 || (events & UV_WRITABLE)) write_fd = fd;
  ares_process_fd(self->channel_, read_fd, write_fd);
  self->watch_pending();
  self->reschedule();
}

void Resolver::on_timer(uv_timer_t* handle) noexcept {
  auto* self = static_cast<Resolver*>(handle->data);
  if (self->channel_ == nullptr) return;
  ares_process_fd(self->channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
  self->watch_pending();
  self->reschedule();
}

void Resolver::reschedule() {
  if (channel_ == nullptr) return;
  timeval tv{};
  if (ares_timeout(channel_, nullptr, &tv) == nullptr) {
    uv_timer_stop(&timer_);
    return;
  }
  const std::uint64_t ms = static_cast<std::uint64_t>(tv.tv_sec) * 1000 +
                           static_cast<std::uint64_t>(tv.tv_usec) / 1000 + 1;
  uv_timer_start(&timer_, on_timer, ms, 0);
}

NameResolver::Query* Resolver::resolve(const std::string& name, Callback callback, void* owner) {
  if (outstanding_ >= kMaxOutstandingQueries || channel_ == nullptr) {
    callback(owner, Resolution{false, "busy", {}});
    return nullptr;
  }
  ++outstanding_;
  auto* q = new AresQuery;
  q->resolver = this;
  q->callback = callback;
  q->owner = owner;
  uv_timer_init(loop_, &q->deadline);
  q->deadline.data = q;
  uv_timer_start(&q->deadline, on_deadline, kDnsDeadlineMs, 0);
  ares_addrinfo_hints hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = ARES_AI_NOSORT;
  ares_getaddrinfo(channel_, name.c_str(), nullptr, &hints, on_answer, q);
  watch_pending();
  reschedule();
  // c-ares may answer synchronously; then the callback already ran and there is nothing to
  // cancel (the query frees itself once its timer's close callback ran).
  return q->answered ? nullptr : q;
}

void Resolver::cancel(Query* query) {
  auto* q = static_cast<AresQuery*>(query);
  q->callback = nullptr;
  q->owner = nullptr;
}

void Resolver::on_deadline(uv_timer_t* handle) noexcept {
  auto* q = static_cast<AresQuery*>(handle->data);
  if (q->callback != nullptr) {
    Callback cb = q->callback;
    void* owner = q->owner;
    q->callback = nullptr;
    cb(owner, Resolution{false, "timeout", {}});
  }
  uv_close(loop::as_handle(&q->deadline), [](uv_handle_t* h) noexcept {
    auto* query = static_cast<AresQuery*>(h->data);
    query->timer_closed = true;
    maybe_free(query);
  });
}

void Resolver::on_answer(void* arg, int status, int, ares_addrinfo* result) noexcept {
  auto* q = static_cast<AresQuery*>(arg);
  Resolution resolution;
  if (status == ARES_SUCCESS && result != nullptr) {
    resolution.ok = true;
    for (ares_addrinfo_node* node = result->nodes; node != nullptr; node = node->ai_next) {
      if (auto a = address_of(node->ai_addr)) resolution.addresses.push_back(*a);
    }
  } else {
    resolution.detail = ares_detail(status);
  }
  if (result != nullptr) ares_freeaddrinfo(result);
  q->answered = true;
  --q->resolver->outstanding_;
  if (q->callback != nullptr) {
    Callback cb = q->callback;
    void* owner = q->owner;
    q->callback = nullptr;
    cb(owner, std::move(resolution));
  }
  if (!uv_is_closing(loop::as_handle(&q->deadline))) {
    uv_close(loop::as_handle(&q->deadline), [](uv_handle_t* h) noexcept {
      auto* query = static_cast<AresQuery*>(h->data);
      query->timer_closed = true;
      maybe_free(query);
    });
  } else {
    maybe_free(q);
  }
}

}  // namespace appliance::serve
