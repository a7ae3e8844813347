#include "tests/bench/window/report.h"

#include <cstdio>

namespace bench {
namespace {

const Row* direct_for(const std::vector<Row>& rows, const Row& row) {
  for (const Row& r : rows) {
    if (r.via == Via::kDirect && r.scheme == row.scheme && r.clients == row.clients) return &r;
  }
  return nullptr;
}

const Row* nginx_for(const std::vector<Row>& rows, const Row& row) {
  for (const Row& r : rows) {
    if (r.via == Via::kNginx && r.scheme == row.scheme && r.clients == row.clients) return &r;
  }
  return nullptr;
}

// The ratio of a row's req/s to another's; -1 when either was not measured.
double ratio_to(const Row* base, const Row& row) {
  if (base == nullptr || !base->load.ok() || !row.load.ok()) return -1;
  return row.load.per_second / base->load.per_second;
}

double ratio(const std::vector<Row>& rows, const Row& row) {
  return ratio_to(direct_for(rows, row), row);
}

void print_row(const std::vector<Row>& rows, const Row& r) {
  const std::string name = row_name(r);
  if (!r.load.ok()) {
    std::printf("| %s | %d | not measured: %s | | | | | | | | |\n", name.c_str(), r.clients,
                r.load.error.empty() ? r.load.first_failure.c_str() : r.load.error.c_str());
    return;
  }
  const double x = r.via != Via::kDirect ? ratio(rows, r) : 1.0;
  const std::string done = std::to_string(r.load.completed) + (r.load.capped ? " (capped)" : "");
  std::printf("| %s | %d | %s | %s | %s | %s | %s | %d | %s | %d | %s |\n", name.c_str(), r.clients,
              done.c_str(), fixed(r.load.per_second, 0).c_str(), fixed(r.load.p50_ms, 3).c_str(),
              fixed(r.load.p99_ms, 3).c_str(), x < 0 ? "—" : (fixed(x, 2) + "×").c_str(),
              r.load.opened, kib(r.load.upstream_opened).c_str(), r.load.failures,
              r.via == Via::kWindow ? kib(r.load.rss_peak_kib).c_str() : "");
}

// The proxy's own work per request, which the machine's load changes far less than req/s.
void print_cpu(const std::vector<Row>& rows) {
  bool any = false;
  for (const Row& r : rows) any = any || (r.load.cpu.ok && r.load.completed > 0);
  if (!any) return;
  std::printf(
      "\nThe proxy process's work per timed request (the gatekeeper for window rows, nginx's "
      "worker for nginx rows): its on-CPU time (the kernel's task clock), the user share of its "
      "CPU ticks, and the system calls it entered (raw_syscalls:sys_enter), each divided by the "
      "requests answered.\n\n"
      "| path | clients | CPU µs per request | user share | system calls per request |\n"
      "|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    if (!r.load.cpu.ok || r.load.completed <= 0) continue;
    const double n = r.load.completed;
    const double ticks = static_cast<double>(r.load.cpu.user_ticks + r.load.cpu.system_ticks);
    std::printf(
        "| %s | %d | %s | %s | %s |\n", row_name(r).c_str(), r.clients,
        fixed(static_cast<double>(r.load.cpu.on_cpu_ns) / 1000.0 / n, 2).c_str(),
        ticks > 0
            ? (fixed(100.0 * static_cast<double>(r.load.cpu.user_ticks) / ticks, 0) + " %").c_str()
            : "—",
        fixed(static_cast<double>(r.load.cpu.syscalls) / n, 2).c_str());
  }
}

}  // namespace

std::string row_name(const Row& row) {
  const char* via = "direct, ";
  switch (row.via) {
    case Via::kDirect:
      break;
    case Via::kWindow:
      via = "window, ";
      break;
    case Via::kNginx:
      via = "nginx, ";
      break;
  }
  return std::string(via) + row.scheme + (row.new_tcp_each ? ", new TCP per request" : "");
}

void print_window_report(const WindowRunInfo& info, const std::vector<Row>& rows,
                         const WindowRss& rss) {
  std::printf("\n## bench_window — %s\n\n", info.machine.date.c_str());
  print_machine(
      info.machine,
      "Client, gatekeeper and upstream are separate processes sharing these CPUs; the upstream is "
      "across a veth in a network namespace.");
  std::printf(
      "Requests answered 200 with a 2-byte body; each client connection does its requests back to "
      "back. The rows are interleaved: each row's requests are split into %d rounds, and each "
      "round "
      "measures every row once (req/s over all rounds, percentiles by nearest rank over all "
      "samples). Each round of a row starts with a warm-up, not timed: %d requests with 1 client, "
      "%d with %d. Every row stops after its requests or %s s. p50/p99 in ms, from the start of a "
      "request (its connect, when it needed "
      "one) to the last byte of the answer. Reconnects: client connections opened during the timed "
      "requests; upstream conns: connections the upstream accepted meanwhile (for TLS, full "
      "handshakes). Window rows: the client speaks plain HTTP to the window, the window speaks the "
      "scheme to the upstream; nginx rows: the same requests through nginx configured to do the "
      "window's job (the key in the path, the client's Authorization replaced by the grant's, "
      "HTTP/1.1 keep-alive pools of 64 to the upstream, TLS verified with SNI; one worker "
      "process, access log off); RSS peak: the gatekeeper's VmRSS, sampled every %d ms during "
      "the row.\n\n",
      info.rounds, info.warmup_one, info.warmup_many, info.many_clients,
      fixed(info.max_seconds, 0).c_str(), kRssSampleMs);
  std::printf(
      "| path | clients | requests | req/s | p50 | p99 | × direct | reconnects | upstream conns | "
      "failures "
      "| RSS peak, KiB |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) print_row(rows, r);
  // Only figures measured in this run go into the table. The reference implementation's figures
  // were measured elsewhere, on another machine and day: a context line naming that source, not a
  // row.
  std::printf(
      "\nContext, not measured here: the reference implementation's window was reported (on "
      "another "
      "2-vCPU machine, in its published numbers) at 420 req/s with a new TCP connection per "
      "request and 1474 req/s with 32 keep-alive clients (RSS 107416 KiB); compare ratios, not "
      "these figures with the table's.\n");
  for (const Row& r : rows) {
    if (r.load.failures > 0 && !r.load.first_failure.empty()) {
      std::printf("\n%s, %d clients: %d failed; first: %s\n", row_name(r).c_str(), r.clients,
                  r.load.failures, r.load.first_failure.c_str());
    }
    if (r.load.retried > 0) {
      std::printf(
          "\n%s, %d clients: %d requests retried on a new connection (a kept one was closed "
          "without Connection: close)\n",
          row_name(r).c_str(), r.clients, r.load.retried);
    }
  }
  if (!info.nginx_version.empty()) {
    std::printf("\nnginx: %s (Debian), reverse proxy on 127.0.0.1.\n", info.nginx_version.c_str());
  } else if (!info.nginx_error.empty()) {
    std::printf("\nnginx rows not measured: %s.\n", info.nginx_error.c_str());
  }
  if (info.dns_p50_ms > 0) {
    std::printf(
        "\nOne DNS A query to the namespace's dnsmasq: p50 %s ms (the window asks DNS only when it "
        "dials a new upstream connection; a request that takes a kept one asks nothing).\n",
        fixed(info.dns_p50_ms, 3).c_str());
  }

  print_cpu(rows);

  std::printf(
      "\nGatekeeper RSS (VmRSS), KiB: at start (window key and grants set, no request yet), after "
      "one "
      "request per grant, with %d client connections open, after the whole run.\n\n",
      kHeldConnections);
  std::printf(
      "| at start | after one request per grant | %d connections | per connection | after the run "
      "|\n"
      "|---|---|---|---|---|\n",
      kHeldConnections);
  const bool held = rss.held > 0 && rss.warm > 0;
  std::printf(
      "| %s | %s | %s | %s | %s |\n", kib(rss.start).c_str(), kib(rss.warm).c_str(),
      kib(rss.held).c_str(),
      held ? fixed(static_cast<double>(rss.held - rss.warm) / kHeldConnections, 1).c_str() : "—",
      kib(rss.end).c_str());
  if (!rss.held_error.empty()) {
    std::printf("\n%d connections: %s\n", kHeldConnections, rss.held_error.c_str());
  } else if (rss.kept_alive == kHeldConnections) {
    std::printf(
        "\nThe %d connections each carried one request and were kept alive by the window.\n",
        kHeldConnections);
  } else {
    std::printf(
        "\nThe window kept %d of %d connections open after one request; the others were replaced "
        "by "
        "connections that had sent nothing yet (the window closes after every answer), so the "
        "column is %d open client connections.\n",
        rss.kept_alive, kHeldConnections, kHeldConnections);
  }

  std::printf(
      "\nTargets (report only; PASS/MISS with the measured value).\n\n"
      "| target | result |\n|---|---|\n");
  for (const Row& r : rows) {
    if (r.via != Via::kWindow || r.clients != info.many_clients || r.new_tcp_each) continue;
    const double x = ratio(rows, r);
    std::printf("| %d-client throughput ≥ %.1f × direct, %s | %s |\n", r.clients,
                kTargetThroughputRatio, r.scheme.c_str(),
                verdict(x >= 0, x >= kTargetThroughputRatio, fixed(x, 2) + "×").c_str());
    const double n = ratio_to(nginx_for(rows, r), r);
    std::printf("| %d-client throughput ≥ nginx's, %s | %s |\n", r.clients, r.scheme.c_str(),
                verdict(n >= 0, n >= 1.0, fixed(n, 2) + "× nginx").c_str());
  }
  std::printf("| ≤ 8 MiB RSS at %d connections | %s |\n", kHeldConnections,
              verdict(rss.held > 0, rss.held <= kTargetHeldRssKib, kib(rss.held) + " KiB").c_str());
  std::printf("\n");
}

}  // namespace bench
