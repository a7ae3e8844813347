// The window's request-target rule from the space's side: bytes RFC 3986 does not allow in a
// path or query, raw overlong UTF-8 dots and a control byte that hides a ".." piece. Each must be
// refused (400 from the strict parser or the generic 403) while the runner's grant answers with
// the key in the same run.
#include "escape-suite/case.h"
#include "escape-suite/window_probe.h"

namespace escape {

void add_window_cases(std::vector<Case>& out) {
  add_case(out, "window.raw-overlong-dots", "walk out of the grant with raw overlong UTF-8 dots",
           "GET /k/<key>/model/<grant>/\\xc0\\xae\\xc0\\xae/admin (raw bytes, no '%')", "400 or 403",
           [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               return b.prefix + "/model/" + g + "/\xc0\xae\xc0\xae/admin";
             });
           });
  add_case(out, "window.tab-hides-dot-dot", "hide a \"..\" piece behind a byte a server trims",
           "GET /k/<key>/model/<grant>/..<TAB>/admin", "400 or 403", [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               return b.prefix + "/model/" + g + "/..\t/admin";
             });
           });
  add_case(out, "window.encoded-tab-hides-dot-dot", "the same, percent-encoded",
           "GET /k/<key>/model/<grant>/..%09/admin", "400 or 403", [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               return b.prefix + "/model/" + g + "/..%09/admin";
             });
           });
  add_case(out, "window.target-outside-rfc3986", "a target byte an upstream may read as a separator",
           "GET /k/<key>/model/<grant>/v1\\..\\admin and /v1/a|b{c}", "400 or 403", [](Context& ctx) {
             const Outcome backslash = window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               return b.prefix + "/model/" + g + "/v1\\..\\admin";
             });
             if (backslash.verdict != Verdict::kPass) return backslash;
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               return b.prefix + "/model/" + g + "/v1/a|b{c}";
             });
           });
}

}  // namespace escape
