#include "controller/signals.h"

#include <signal.h>

#include <atomic>
#include <cerrno>

namespace controller {
namespace {

std::atomic<unsigned> g_requests{0};
std::atomic<int> g_signal{0};
std::atomic<bool> g_sent{false};

void on_stop(int signo, siginfo_t* info, void*) {
  const int saved = errno;
  g_signal.store(signo);
  // si_code <= 0: kill(2), sigqueue(3) or tgkill(2); the terminal driver sends SI_KERNEL.
  g_sent.store(info != nullptr && info->si_code <= 0);
  g_requests.fetch_add(1);
  errno = saved;
}

}  // namespace

void reset_signals_and_handle_stops() {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    (void)sigaction(s, &dfl, nullptr);  // EINVAL for the numbers glibc keeps for itself
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction stop{};
  stop.sa_sigaction = on_stop;
  stop.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&stop.sa_mask);
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &stop, nullptr);
}

unsigned stop_requests() { return g_requests.load(); }
int last_stop_signal() { return g_signal.load(); }
bool last_stop_was_sent() { return g_sent.load(); }

}  // namespace controller
