#include "appliance/control/server.h"

#include <cstdio>

#include "appliance/corridor/corridor.h"
#include "appliance/window/upstream.h"
#include "policy/control_messages.h"
#include "policy/corridor.h"
#include "policy/json.h"
#include "policy/window.h"

namespace appliance::serve {
namespace {

HttpResponse json_answer(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse error_answer(int status, std::string_view message) {
  return json_answer(status, policy::error_json(message));
}

std::string health_json(const ServeContext& ctx) {
  return "{\"ready\":true,\"mode\":\"" + std::string(policy::mode_text(ctx.network.mode)) +
         "\",\"domains\":" + std::to_string(ctx.network.domains.size()) +
         ",\"grants\":" + std::to_string(ctx.grants.size()) + "}";
}

std::string policy_json(const ServeContext& ctx) {
  // Grant ids only: never an upstream's secret or header value
  // (docs/reference-behaviour.md#control-endpoints).
  std::string out = "{\"mode\":";
  policy::json::append_quoted(out, policy::mode_text(ctx.network.mode));
  out += ",\"domains\":[";
  bool first = true;
  for (const std::string& d : ctx.network.domains) {
    if (!first) out += ',';
    first = false;
    policy::json::append_quoted(out, d);
  }
  out += "],\"grants\":[";
  first = true;
  for (const auto& [id, grant] : ctx.grants) {
    if (!first) out += ',';
    first = false;
    policy::json::append_quoted(out, id);
  }
  out += "]}";
  return out;
}

}  // namespace

HttpResponse control_answer(ServeContext& ctx, const HttpRequest& request) {
  const std::string_view m = request.method;
  const std::string_view p = request.path;
  if (m == "GET" && p == "/health") return json_answer(200, health_json(ctx));
  if (m == "GET" && p == "/policy") return json_answer(200, policy_json(ctx));
  if (m == "GET" && p == "/journal") return json_answer(200, ctx.journal.json());
  if (m == "GET" && p == "/blocked") {
    return json_answer(200, policy::blocked_request_json(ctx.blocked));
  }
  if (m == "GET" && p == "/metrics") {
    HttpResponse r = json_answer(200, ctx.metrics.prometheus(ctx.gauges()));
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  if (m == "POST" && p == "/window-key") {
    if (request.body_over_limit || request.body.empty()) {
      return error_answer(400, policy::kMsgNotJson);
    }
    auto key = policy::parse_window_key_request(request.body);
    if (!key) return error_answer(400, key.error().message);
    // Replaces the key at once: the next window request must carry the new one.
    ctx.window_key = std::move(key.value());
    return json_answer(200, policy::ok_json());
  }
  if (m == "POST" && p == "/blocked") {
    if (request.body_over_limit || request.body.empty()) {
      return error_answer(400, policy::kMsgNotJson);
    }
    auto ranges = policy::parse_blocked_request(request.body);
    if (!ranges) return error_answer(400, ranges.error().message);
    ctx.blocked = std::move(ranges.value());  // live: the next answer is classified with it
    return json_answer(200, policy::ok_json());
  }
  if (m == "POST" && (p == "/network" || p == "/grants")) {
    // Over 1 MiB the body was discarded: it counts as not JSON
    // (docs/reference-behaviour.md#control-endpoints).
    if (request.body_over_limit || request.body.empty()) {
      return error_answer(400, policy::kMsgNotJson);
    }
    if (p == "/network") {
      auto parsed = policy::parse_network_request(request.body);
      if (!parsed) return error_answer(400, parsed.error().message);
      ctx.network = std::move(parsed.value());  // live: the next CONNECT is decided by it
      // ... and the tunnels already open: those the new policy refuses end now.
      close_tunnels_refused_by_policy(ctx);
      return json_answer(200, policy::ok_json());
    }
    auto grant = policy::parse_grant_request(request.body);
    if (!grant) return error_answer(400, grant.error().message);
    std::string id = grant->id;
    if (grant->unsafe_private_upstream) {
      // docs/decisions.md#weakening-is-announced (the id passed is_grant_id).
      std::fprintf(
          stderr,
          "gatekeeper: warning: grant %s may reach private networks (unsafe_private_upstream)\n",
          id.c_str());
    }
    ctx.grants.insert_or_assign(std::move(id), std::move(grant.value()));  // same id replaces
    return json_answer(200, policy::ok_json());
  }
  if (m == "DELETE" && p.starts_with("/grants/")) {
    const std::string id(p.substr(std::string_view("/grants/").size()));
    const auto found = policy::is_grant_id(id) ? ctx.grants.find(id) : ctx.grants.end();
    if (found == ctx.grants.end()) return error_answer(404, policy::kMsgNoSuchGrant);
    ctx.grants.erase(found);  // the grant's secret is wiped with it (policy::Secret)
    if (ctx.upstream_pool != nullptr) ctx.upstream_pool->close_grant(id, "grant-deleted");
    ctx.journal.record(policy::Listener::kWindow, id, 0,
                       policy::Decision::of(policy::Word::kDenyPolicyChanged));
    return json_answer(200, policy::ok_json());
  }
  return error_answer(404, policy::kMsgNoEndpoint);
}

Connection* make_control_connection(ServeContext& ctx, TcpListener& listener) {
  return new ControlConnection(ctx, listener);
}

ControlConnection::ControlConnection(ServeContext& ctx, TcpListener& listener)
    : HttpConnection(ctx, listener, policy::Listener::kControl) {}

HttpResponse ControlConnection::handle(const HttpRequest& request) {
  return control_answer(ctx_, request);
}

}  // namespace appliance::serve
