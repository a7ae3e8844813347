#include "tests/bench/window/nginx.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "tests/bench/common/process.h"
#include "tests/bench/common/socket.h"
#include "tests/bench/window/upstream.h"

namespace bench {
namespace {

constexpr int kStartSeconds = 10;

// A port the kernel just gave us on 127.0.0.1 (closed again; nginx binds it right after).
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

std::string configuration(const NginxSetup& s, std::uint16_t port) {
  const std::string dir = s.workdir + "/nginx";
  const std::string plain = s.upstream_ip + ":" + std::to_string(kPlainPort);
  const std::string tls = s.upstream_ip + ":" + std::to_string(kTlsPort);
  // The client's Authorization is replaced (proxy_set_header), as the window strips credentials
  // and adds the grant's header; Connection "" keeps the upstream connection open (keep-alive
  // pool). Workers run as root: the run's folder is root's (mode 0700), and it is a benchmark.
  return "user root root;\n"
         "worker_processes 1;\n"
         "daemon off;\n"
         "pid " +
         dir +
         "/nginx.pid;\n"
         "error_log " +
         dir +
         "/error.log warn;\n"
         "events { worker_connections 4096; }\n"
         "http {\n"
         "  access_log off;\n"
         "  client_body_temp_path " +
         dir +
         "/body;\n"
         "  proxy_temp_path " +
         dir +
         "/proxy;\n"
         "  fastcgi_temp_path " +
         dir +
         "/fastcgi;\n"
         "  uwsgi_temp_path " +
         dir +
         "/uwsgi;\n"
         "  scgi_temp_path " +
         dir +
         "/scgi;\n"
         "  keepalive_requests 1000000;\n"
         "  upstream plain_upstream { server " +
         plain +
         "; keepalive 64; keepalive_requests 1000000; }\n"
         "  upstream tls_upstream { server " +
         tls +
         "; keepalive 64; keepalive_requests 1000000; }\n"
         "  server {\n"
         "    listen 127.0.0.1:" +
         std::to_string(port) +
         " reuseport;\n"
         "    location /k/" +
         s.key +
         "/model/plain/ {\n"
         "      proxy_pass http://plain_upstream/v1/;\n"
         "      proxy_http_version 1.1;\n"
         "      proxy_set_header Connection \"\";\n"
         "      proxy_set_header Host " +
         s.upstream_ip +
         ";\n"
         "      proxy_set_header Authorization \"Bearer " +
         s.secret +
         "\";\n"
         "    }\n"
         "    location /k/" +
         s.key +
         "/model/tls/ {\n"
         "      proxy_pass https://tls_upstream/v1/;\n"
         "      proxy_http_version 1.1;\n"
         "      proxy_set_header Connection \"\";\n"
         "      proxy_set_header Host " +
         s.upstream_name +
         ";\n"
         "      proxy_set_header Authorization \"Bearer " +
         s.secret +
         "\";\n"
         "      proxy_ssl_server_name on;\n"
         "      proxy_ssl_name " +
         s.upstream_name +
         ";\n"
         "      proxy_ssl_verify on;\n"
         "      proxy_ssl_trusted_certificate " +
         s.ca_file +
         ";\n"
         "      proxy_ssl_session_reuse on;\n"
         "    }\n"
         "    location / { return 404; }\n"
         "  }\n"
         "}\n";
}

std::string nginx_version() {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 2);  // nginx -v prints to stderr
    execl(kNginxBinary, kNginxBinary, "-v", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[256];
  ssize_t n = 0;
  while ((n = read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  waitpid(pid, nullptr, 0);
  const auto at = text.find("nginx/");
  if (at == std::string::npos) return "";
  const auto end = text.find_first_of(" \n", at);
  return text.substr(at, end - at);
}

}  // namespace

std::string nginx_request(const std::string& key, const std::string& grant) {
  return "GET /k/" + key + "/model/" + grant +
         "/models HTTP/1.1\r\nHost: gatekeeper:8080\r\n"
         "Authorization: Bearer placeholder\r\nAccept: */*\r\n\r\n";
}

NginxChild start_nginx(const NginxSetup& setup) {
  NginxChild n;
  if (access(kNginxBinary, X_OK) != 0) {
    n.error = std::string(kNginxBinary) + " is not installed (Debian package nginx-light)";
    return n;
  }
  n.version = nginx_version();
  n.port = free_port();
  const std::string dir = setup.workdir + "/nginx";
  mkdir(dir.c_str(), 0700);
  const std::string conf = dir + "/nginx.conf";
  {
    std::ofstream out(conf);
    out << configuration(setup, n.port);
    if (!out) {
      n.error = "writing " + conf + " failed";
      return n;
    }
  }
  SpawnOptions options;
  options.stderr_path = dir + "/stderr.log";
  const Child child =
      spawn({kNginxBinary, "-p", dir + "/", "-e", dir + "/error.log", "-c", conf}, options);
  n.pid = child.pid;
  if (n.pid < 0) {
    n.error = "starting nginx failed";
    return n;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStartSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(n.pid, nullptr, WNOHANG) == n.pid) {
      forget(n.pid);
      n.pid = -1;
      n.error = "nginx exited during start-up (see " + dir + "/error.log)";
      return n;
    }
    const int fd = connect_loopback(n.port);
    if (fd >= 0) {
      close(fd);
      return n;
    }
    usleep(20000);
  }
  n.error = "nginx did not listen on 127.0.0.1:" + std::to_string(n.port) + " within " +
            std::to_string(kStartSeconds) + " s";
  return n;
}

}  // namespace bench
