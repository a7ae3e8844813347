// nginx as the reverse proxy users would otherwise pick, configured to do what the window does for
// a grant: a path that carries the window key, the credential the client sent replaced by the
// grant's header, HTTP/1.1 keep-alive to the upstream (a pool per upstream), TLS to the upstream
// with the certificate and name verified. One worker process: the window is one loop too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace bench {

inline constexpr const char* kNginxBinary = "/usr/sbin/nginx";

struct NginxSetup {
  std::string workdir;        // the configuration, its temp folders and its error log go here
  std::string upstream_ip;    // plain on kPlainPort, TLS on kTlsPort
  std::string upstream_name;  // the TLS name (SNI and certificate check)
  std::string ca_file;
  std::string key;     // the window key: part of the path, as for the window
  std::string secret;  // the grant's Authorization value
};

struct NginxChild {
  pid_t pid = -1;
  std::uint16_t port = 0;  // 127.0.0.1
  std::string version;     // "nginx/1.22.1"
  std::string error;       // set when it did not start
};

// The request path nginx serves for a grant ("plain" or "tls"), like the window's.
std::string nginx_request(const std::string& key, const std::string& grant);

NginxChild start_nginx(const NginxSetup& setup);

}  // namespace bench
