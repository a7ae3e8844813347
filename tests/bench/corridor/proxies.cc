#include "tests/bench/corridor/proxies.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tests/bench/common/gatekeeper.h"
#include "tests/bench/common/process.h"
#include "tests/bench/common/socket.h"

namespace bench {
namespace {

// A port the kernel just gave us on 127.0.0.1 (closed again; the proxy binds it right after).
std::uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
  socklen_t len = sizeof sin;
  std::uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) == 0) {
    port = ntohs(sin.sin_port);
  }
  close(fd);
  return port;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

bool exited(pid_t pid) { return waitpid(pid, nullptr, WNOHANG) == pid; }

// Waits until 127.0.0.1:port accepts a connection (no tunnel yet: the caller reads the RSS at
// start first).
void await_listen(Proxy& p) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStartSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (exited(p.pid)) {
      p.error = p.name + " exited during start-up";
      forget(p.pid);
      p.pid = -1;
      return;
    }
    const int fd = connect_loopback(p.port);
    if (fd >= 0) {
      close(fd);
      return;
    }
    usleep(20000);
  }
  p.error = p.name + " did not listen on 127.0.0.1:" + std::to_string(p.port) + " within " +
            std::to_string(kStartSeconds) + " s";
}

}  // namespace

Proxy start_gatekeeper(const ProxySetup& setup) {
  Proxy p;
  p.name = "gatekeeper";
  p.target = setup.upstream_name + ":443";
  const GatekeeperChild g = start_gatekeeper_child(setup.gatekeeper_binary, {"--dns-server", setup.dns_server},
                                                   setup.workdir + "/gatekeeper.err");
  p.pid = g.pid;
  p.port = g.corridor;
  p.error = g.error;
  if (!p.error.empty()) return p;
  const std::string body = "{\"mode\":\"allowlist\",\"domains\":[\"" + setup.upstream_name + "\"]}";
  const int status = control_post(g.control, "/network", body);
  if (status != 200) {
    p.error = "POST /network answered " + std::to_string(status);
    return p;
  }
  await_listen(p);
  return p;
}

Proxy start_squid(const ProxySetup& setup) {
  Proxy p;
  p.name = "squid";
  p.target = setup.upstream_ip + ":443";
  p.port = free_port();
  // Squid drops to cache_effective_user after start; its log must stay writable.
  const passwd* user = getpwnam("proxy");
  const std::string conf = setup.workdir + "/squid.conf";
  const std::string log = setup.workdir + "/squid-cache.log";
  write_file(log, "");
  if (user != nullptr && chown(log.c_str(), user->pw_uid, user->pw_gid) != 0) {
    p.error = "chown " + log + " failed";
    return p;
  }
  write_file(conf,
             "# bench_corridor: a CONNECT-only squid; defaults otherwise\n"
             "http_port 127.0.0.1:" + std::to_string(p.port) + "\n"
             "visible_hostname bench-squid\n" +
             (user != nullptr ? "cache_effective_user proxy\n" : "") +
             "pid_filename none\n"
             "cache_log " + log + "\n"
             "access_log none\n"
             "cache deny all\n"
             "coredump_dir " + setup.workdir + "\n"
             "pinger_enable off\n"
             "dns_nameservers " + setup.dns_server + "\n"
             "acl bench_port port 443\n"
             "acl bench_net dst 198.18.0.0/15\n"
             "http_access allow CONNECT bench_port bench_net\n"
             "http_access deny all\n"
             "shutdown_lifetime 0 seconds\n");
  SpawnOptions options;
  options.stderr_path = setup.workdir + "/squid.err";
  p.pid = spawn({"/usr/sbin/squid", "-N", "-f", conf}, options).pid;
  if (p.pid < 0) {
    p.error = "cannot start /usr/sbin/squid";
    return p;
  }
  await_listen(p);
  return p;
}

Proxy start_tinyproxy(const ProxySetup& setup) {
  Proxy p;
  p.name = "tinyproxy";
  p.target = setup.upstream_ip + ":443";
  p.port = free_port();
  const std::string conf = setup.workdir + "/tinyproxy.conf";
  write_file(conf,
             "# bench_corridor: a CONNECT-only tinyproxy; defaults otherwise\n"
             "Port " + std::to_string(p.port) + "\n"
             "Listen 127.0.0.1\n"
             "Timeout 600\n"
             "MaxClients 256\n"
             "Allow 127.0.0.1\n"
             "ConnectPort 443\n"
             "DisableViaHeader Yes\n"
             "LogLevel Error\n"
             "LogFile \"" + setup.workdir + "/tinyproxy.log\"\n"
             "PidFile \"" + setup.workdir + "/tinyproxy.pid\"\n");
  SpawnOptions options;
  options.stderr_path = setup.workdir + "/tinyproxy.err";
  p.pid = spawn({"/usr/bin/tinyproxy", "-d", "-c", conf}, options).pid;
  if (p.pid < 0) {
    p.error = "cannot start /usr/bin/tinyproxy";
    return p;
  }
  await_listen(p);
  return p;
}

void stop_proxy(Proxy& proxy) {
  if (proxy.pid > 0) stop(proxy.pid, 5000);
  proxy.pid = -1;
}

}  // namespace bench
