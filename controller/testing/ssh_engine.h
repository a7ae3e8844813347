// Docker over SSH for live tests, made entirely for the test in a temporary directory: Debian's
// sshd on a loopback port with its own host key, a client key made for the test in its own
// authorized_keys (no password, no keyboard-interactive, no agent or TCP forwarding), and an `ssh`
// wrapper first in PATH that tells the client exactly this known_hosts file and identity. The
// docker CLI runs `ssh … docker system dial-stdio` through that wrapper; nothing reads or writes
// the user's ~/.ssh. The engine at the other end is this machine's own Docker engine.
#pragma once

#include <linux/close_range.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "controller/process.h"
#include "tests/support/loopback.h"

namespace controller::testing {

class SshEngine {
 public:
  SshEngine() = default;
  SshEngine(const SshEngine&) = delete;
  SshEngine& operator=(const SshEngine&) = delete;
  ~SshEngine() {
    if (pid_ > 0) {
      // The multiplexing master (ssh_config below) ends before its server does.
      ProcessRequest r;
      r.argv = {"/usr/bin/ssh", "-F", dir_ + "/ssh_config",  "-O",
                "exit",         "-p", std::to_string(port_), "127.0.0.1"};
      r.timeout = std::chrono::seconds(10);
      (void)run_process(r);
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  // "" when it runs; else why not.
  std::string start() {
    if (access("/usr/sbin/sshd", X_OK) != 0 || access("/usr/bin/ssh-keygen", X_OK) != 0)
      return "Debian's openssh-server is not installed (/usr/sbin/sshd)";
    char tmpl[] = "/tmp/spacectl-ssh-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    dir_ = tmpl;
    chmod(dir_.c_str(), 0700);
    for (const char* key : {"host_key", "client_key"}) {
      ProcessRequest r;
      r.argv = {"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "spacectl-test", "-f",
                dir_ + "/" + key};
      if (const ProcessOutcome o = run_process(r); !o.succeeded())
        return "ssh-keygen: " + o.describe();
    }
    port_ = gk_test::free_loopback_port();
    if (port_ == 0) return "no free loopback port";
    const std::string client_pub = read(dir_ + "/client_key.pub"),
                      host_pub = read(dir_ + "/host_key.pub");
    write(dir_ + "/authorized_keys", client_pub);
    write(dir_ + "/known_hosts", "[127.0.0.1]:" + std::to_string(port_) + " " + host_pub);
    write(
        dir_ + "/sshd_config",
        "ListenAddress 127.0.0.1:" + std::to_string(port_) +
            "\n"
            "HostKey " +
            dir_ +
            "/host_key\n"
            "PidFile " +
            dir_ +
            "/sshd.pid\n"
            "AuthorizedKeysFile " +
            dir_ +
            "/authorized_keys\n"
            "AuthenticationMethods publickey\n"
            "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PermitRootLogin prohibit-password\nPermitEmptyPasswords no\nUsePAM no\n"
            "AllowAgentForwarding no\nAllowTcpForwarding no\nAllowStreamLocalForwarding "
            "no\nX11Forwarding no\nPermitTunnel no\n"
            "PermitUserEnvironment no\nPrintMotd no\n"
            // The files live in a 0700 temporary directory below /tmp (1777), which StrictModes
            // refuses.
            "StrictModes no\n"
            "MaxStartups 100:30:200\nMaxSessions 100\n"
            "Subsystem sftp internal-sftp\n");
    write(dir_ + "/ssh_config",
          "Host *\n"
          "  User root\n"
          "  IdentityFile " +
              dir_ +
              "/client_key\n  IdentitiesOnly yes\n  IdentityAgent none\n"
              "  UserKnownHostsFile " +
              dir_ +
              "/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
              "  StrictHostKeyChecking yes\n  BatchMode yes\n  ForwardAgent no\n  ForwardX11 no\n"
              "  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n  ConnectTimeout "
              "10\n"
              // Every docker call is its own ssh connection; the handshake is most of its cost
              // (0.5-0.9 s of a 0.8-1.0 s call on a busy 2-core machine, 0.4 s multiplexed).
              // One master connection serves them all, as a user's own ControlMaster would.
              "  ControlMaster auto\n  ControlPath " +
              dir_ + "/cm-%C\n  ControlPersist 30\n");
    std::filesystem::create_directories(dir_ + "/bin");
    write(dir_ + "/bin/ssh", "#!/bin/sh\nexec /usr/bin/ssh -F " + dir_ + "/ssh_config \"$@\"\n");
    chmod((dir_ + "/bin/ssh").c_str(), 0755);
    for (const std::string f : {"client_key", "host_key"}) chmod((dir_ + "/" + f).c_str(), 0600);
    mkdir("/run/sshd", 0755);  // sshd's privilege separation directory
    pid_ = fork();
    if (pid_ == 0) {
      // Only stdio: a lock the test runner holds must not live on in sshd.
      syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
      const std::string config = dir_ + "/sshd_config", log = dir_ + "/sshd.log";
      execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", config.c_str(), "-E", log.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      if (answers()) return {};
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "sshd on 127.0.0.1:" + std::to_string(port_) +
           " did not answer: " + read(dir_ + "/sshd.log").substr(0, 400);
  }

  [[nodiscard]] std::string host() const { return "ssh://root@127.0.0.1:" + std::to_string(port_); }
  // Put first in PATH: the docker CLI's ssh helper runs `ssh` from there.
  [[nodiscard]] std::string bin_dir() const { return dir_ + "/bin"; }
  void put_first_in_path() const {
    const char* old = std::getenv("PATH");
    setenv("PATH",
           (bin_dir() + ":" + (old != nullptr ? old : "/usr/sbin:/usr/bin:/sbin:/bin")).c_str(), 1);
  }

 private:
  bool answers() const {
    ProcessRequest r;
    r.argv = {"/usr/bin/ssh", "-F",  dir_ + "/ssh_config", "-p", std::to_string(port_),
              "127.0.0.1",    "true"};
    r.timeout = std::chrono::seconds(10);
    return run_process(r).succeeded();
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }

  std::string dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace controller::testing
