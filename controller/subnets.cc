#include "controller/subnets.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "controller/records.h"

namespace controller {

namespace {

std::optional<Ipv4Net> parse_net(std::string_view text, bool host_bits_allowed) {
  if (text.size() > 18) return std::nullopt;
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::uint32_t address = 0;
  std::string_view rest = text.substr(0, slash);
  for (int octet = 0; octet < 4; ++octet) {
    const std::size_t dot = octet < 3 ? rest.find('.') : rest.size();
    if (dot == std::string_view::npos || dot == 0 || dot > 3) return std::nullopt;
    const std::string_view digits = rest.substr(0, dot);
    if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
    unsigned value = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 255) return std::nullopt;
    address = (address << 8) | value;
    rest = octet < 3 ? rest.substr(dot + 1) : std::string_view();
  }
  const std::string_view p = text.substr(slash + 1);
  if (p.empty() || p.size() > 2 || (p.size() > 1 && p[0] == '0')) return std::nullopt;
  int prefix = 0;
  for (const char c : p) {
    if (c < '0' || c > '9') return std::nullopt;
    prefix = prefix * 10 + (c - '0');
  }
  if (prefix > 32) return std::nullopt;
  const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  if (!host_bits_allowed && (address & ~mask) != 0) return std::nullopt;
  return Ipv4Net{address & mask, prefix};
}

bool inside(const Ipv4Net& inner, const Ipv4Net& outer) {
  return inner.base >= outer.base && inner.end() <= outer.end();
}

// The pool lock: held for the few milliseconds of one allocation, so a second spacectl waits for
// it (bounded) instead of being turned away like a second action on one space.
class PoolLock {
 public:
  static Result<PoolLock> acquire(const std::string& state) {
    if (Result<void> r = ensure_private_dir(state); !r) return r.error();
    const std::string locks = state + "/locks";
    if (Result<void> r = ensure_private_dir(locks); !r) return r.error();
    const std::string path = locks + "/subnets.lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail(Code::kRecordUnreadable, "open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022) != 0) {
      close(fd);
      return fail(Code::kRecordUnreadable,
                  "lock " + path + ": not a private regular file of this user");
    }
    // 30 s: an allocation is a directory of small records read under it, never an engine call.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EINTR && errno != EWOULDBLOCK) {
        const std::string why = std::strerror(errno);
        close(fd);
        return fail(Code::kRecordUnreadable, "flock " + path + ": " + why);
      }
      if (std::chrono::steady_clock::now() > deadline) {
        close(fd);
        return fail(Code::kSpaceBusy,
                    "subnet allocation: " + path + " was held for 30 s by another spacectl");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return PoolLock(fd);
  }
  PoolLock(PoolLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  PoolLock& operator=(PoolLock&&) = delete;
  PoolLock(const PoolLock&) = delete;
  PoolLock& operator=(const PoolLock&) = delete;
  ~PoolLock() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  explicit PoolLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace

std::optional<Ipv4Net> parse_ipv4_net(std::string_view text) { return parse_net(text, false); }
std::optional<Ipv4Net> parse_ipv4_net_loose(std::string_view text) { return parse_net(text, true); }

std::string to_string(const Ipv4Net& net) {
  return std::to_string(net.base >> 24) + "." + std::to_string((net.base >> 16) & 255) + "." +
         std::to_string((net.base >> 8) & 255) + "." + std::to_string(net.base & 255) + "/" +
         std::to_string(net.prefix);
}

bool overlaps(const Ipv4Net& a, const Ipv4Net& b) { return a.base < b.end() && b.base < a.end(); }

int prefix_for_hosts(int hosts) {
  int prefix = 30;  // the smallest block with a host address besides network and broadcast
  while (prefix > 0 && (std::int64_t{1} << (32 - prefix)) - 2 < hosts) --prefix;
  return prefix;
}

Result<Ipv4Net> parse_subnet_pool(std::string_view text) {
  const std::optional<Ipv4Net> pool = parse_ipv4_net(text);
  const std::string shown(text.substr(0, 40));
  if (!pool) {
    return fail(Code::kInvalidArgument,
                "subnet pool " + shown + ": not an IPv4 network a.b.c.d/n with its host bits zero");
  }
  if (pool->prefix < kMinPoolPrefix || pool->prefix > kMaxPoolPrefix) {
    return fail(Code::kInvalidArgument, "subnet pool " + shown + ": the prefix must be /" +
                                            std::to_string(kMinPoolPrefix) + " to /" +
                                            std::to_string(kMaxPoolPrefix));
  }
  // RFC 1918 private ranges and RFC 6598 shared address space: never routed on the internet.
  for (const std::string_view allowed :
       {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"}) {
    if (inside(*pool, *parse_ipv4_net(allowed))) return *pool;
  }
  return fail(Code::kInvalidArgument,
              "subnet pool " + shown +
                  ": must lie inside 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 (RFC 1918) or "
                  "100.64.0.0/10 (RFC 6598); a public range would take the host's own traffic");
}

Result<Ipv4Net> first_free_block(const Ipv4Net& pool, int prefix,
                                 const std::vector<Ipv4Net>& used) {
  if (prefix < pool.prefix || prefix > 32) {
    return fail(Code::kInvalidArgument,
                "subnet pool " + to_string(pool) + ": cannot hold a /" + std::to_string(prefix));
  }
  std::vector<Ipv4Net> sorted;
  for (const Ipv4Net& u : used) {
    if (overlaps(u, pool)) sorted.push_back(u);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Ipv4Net& a, const Ipv4Net& b) { return a.base < b.base; });
  const std::uint64_t size = std::uint64_t{1} << (32 - prefix);
  std::uint64_t candidate = pool.base;
  for (const Ipv4Net& u : sorted) {
    if (candidate + size > pool.end()) break;
    if (u.end() <= candidate) continue;
    if (u.base >= candidate + size) break;  // sorted: nothing later overlaps this candidate
    // Overlaps: the next aligned block after it.
    candidate = (u.end() + size - 1) / size * size;
  }
  if (candidate + size > pool.end()) {
    return fail(Code::kPlaceUnusable,
                "subnet pool " + to_string(pool) + ": no free /" + std::to_string(prefix) +
                    " left (" + std::to_string(sorted.size()) +
                    " networks in it); remove spaces or set a larger pool with --subnet-pool");
  }
  return Ipv4Net{static_cast<std::uint32_t>(candidate), prefix};
}

Result<std::vector<std::pair<std::string, Ipv4Net>>> recorded_subnets(const std::string& state) {
  Result<std::vector<std::string>> ids = record_ids(state);
  if (!ids) return ids.error();
  std::vector<std::pair<std::string, Ipv4Net>> out;
  for (const std::string& id : *ids) {
    Result<SpaceRecord> record = read_record(state, id);
    // An unreadable record may hold blocks nobody can see: refuse rather than hand them out twice.
    if (!record) return record.error();
    for (const std::string* s : {&record->subnets.inner, &record->subnets.outer}) {
      if (const std::optional<Ipv4Net> net = parse_ipv4_net(*s); net) out.emplace_back(id, *net);
    }
  }
  return out;
}

Result<SpaceSubnets> allocate_space_subnets(const std::string& state, const std::string& id,
                                            std::string_view pool_text,
                                            const std::vector<std::string>& engine_subnets) {
  Result<Ipv4Net> pool = parse_subnet_pool(pool_text);
  if (!pool) return pool.error();
  std::vector<Ipv4Net> used;
  // IPv6 subnets never overlap an IPv4 pool: they do not parse and are left out.
  for (const std::string& s : engine_subnets) {
    if (const std::optional<Ipv4Net> net = parse_ipv4_net_loose(s); net) used.push_back(*net);
  }
  Result<PoolLock> lock = PoolLock::acquire(state);
  if (!lock) return lock.error();
  Result<std::vector<std::pair<std::string, Ipv4Net>>> recorded = recorded_subnets(state);
  if (!recorded) return recorded.error();
  for (const auto& [holder, net] : *recorded) {
    if (holder != id) used.push_back(net);
  }
  Result<Ipv4Net> inner = first_free_block(*pool, prefix_for_hosts(kInnerHosts), used);
  if (!inner) return inner.error();
  used.push_back(*inner);
  Result<Ipv4Net> outer = first_free_block(*pool, prefix_for_hosts(kOuterHosts), used);
  if (!outer) return outer.error();
  Result<SpaceRecord> record = read_record(state, id);
  if (!record) return record.error();
  record->subnets = {to_string(*inner), to_string(*outer)};
  if (Result<void> w = write_record(state, id, *record); !w) return w.error();
  return SpaceSubnets{record->subnets.inner, record->subnets.outer};
}

}  // namespace controller
