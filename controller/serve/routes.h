// The routes of `spacectl serve` (controller/API.md documents each one). Every route that acts on
// a space calls the same Manager and code operations as the CLI, on libuv's thread pool or, for
// long work, as an operation on a thread of its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "controller/manager.h"
#include "controller/place.h"
#include "controller/render.h"
#include "controller/serve/http_server.h"
#include "controller/serve/idle.h"
#include "controller/serve/metrics.h"
#include "controller/serve/operations.h"

namespace controller::serve {

// One row of the router table: method, pattern ({id}: a space id, {op}: an operation id).
struct RouteRow {
  const char* method;
  const char* pattern;
};
// Every route, in the order API.md lists them (a test holds API.md and the tests to this table).
const std::vector<RouteRow>& route_table();

struct ServeContext {
  std::string place_name = "docker";
  PlaceOptions place_options;
  std::string state;
  std::string escape_binary, escape_test_image_file;
  Operations* operations = nullptr;
  IdleWatch* idle = nullptr;
  Metrics* metrics = nullptr;
  Result<Env> make_env() const;
};

Route make_router(ServeContext& context);

// An operation's result as its document (render.h: the one `--json` prints), for the result of a
// long operation (operations.h keeps documents).
template <typename T>
Result<nlohmann::json> as_document(const Result<T>& r) {
  if (!r) return r.error();
  return to_json(*r);
}

}  // namespace controller::serve
