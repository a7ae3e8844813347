// Single-file HTML report. A reviewer opens it from disk or an artifact store: it must read the
// same with scripts off and the network cut, so it has no script, no link, no image source; the
// page's own Content-Security-Policy (default-src 'none') makes any fetch a violation the browser
// refuses. Everything that came from the run (ids, evidence, names, facts) goes through
// html_escape, which first reduces it to printable ASCII, so hostile evidence cannot open a tag,
// an attribute or a character reference.
#include <map>

#include "escape-suite/catalogue.h"
#include "escape-suite/report.h"
#include "escape-suite/report_rich.h"

namespace escape {
namespace {

struct GroupCounts {
  std::size_t pass = 0, fail = 0, inconclusive = 0, not_applicable = 0;
  std::size_t total() const { return pass + fail + inconclusive + not_applicable; }
};

void add(GroupCounts& c, Verdict v) {
  switch (v) {
    case Verdict::kPass: ++c.pass; break;
    case Verdict::kFail: ++c.fail; break;
    case Verdict::kInconclusive: ++c.inconclusive; break;
    case Verdict::kNotApplicable: ++c.not_applicable; break;
  }
}

std::string_view verdict_class(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kInconclusive: return "inconclusive";
    case Verdict::kNotApplicable: return "na";
  }
  return "inconclusive";  // unreachable: the switch is exhaustive (-Wswitch-enum)
}

std::string bounded(std::string_view s) { return html_escape(s.substr(0, kMaxContextText)); }

std::string counts_text(const GroupCounts& c) {
  return std::to_string(c.pass) + " passed, " + std::to_string(c.fail) + " failed, " +
         std::to_string(c.inconclusive) + " inconclusive, " + std::to_string(c.not_applicable) +
         " not applicable";
}

// An id made of [a-z0-9.-] only, for fragment anchors; anything else becomes '-'.
std::string anchor(std::string_view s) {
  std::string out;
  for (const char ch : s.substr(0, 128)) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
    out.push_back(ok ? ch : '-');
  }
  return out;
}

constexpr std::string_view kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}
.muted{color:#666}.verdict-line{font-size:16px;font-weight:600;margin:10px 0}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f6}td.ev{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.v{font-weight:700;white-space:nowrap}
tr.fail .v{color:#b00020}tr.inconclusive .v{color:#a15c00}tr.pass .v{color:#1b7f3b}tr.na .v{color:#555}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;margin-right:6px;font-size:12px}
.b-pass{background:#e3f4e8}.b-fail{background:#fbe2e6}.b-inconclusive{background:#fdf0d8}.b-na{background:#eee}
.case-text{font-size:12px;color:#555}
svg{max-width:100%;height:auto;border:1px solid #ddd;background:#fcfcfd}
)";

std::string badges(const GroupCounts& c) {
  return "<span class=\"badge b-pass\">" + std::to_string(c.pass) + " passed</span><span class=\"badge b-fail\">" +
         std::to_string(c.fail) + " failed</span><span class=\"badge b-inconclusive\">" +
         std::to_string(c.inconclusive) + " inconclusive</span><span class=\"badge b-na\">" +
         std::to_string(c.not_applicable) + " not applicable</span>";
}

// SVG text element of at most `max` bytes of `text` ("..." marks a cut); escaped here.
std::string svg_text(int x, int y, std::string_view text, std::string_view extra = {}, std::size_t max = 44) {
  const std::string shown = text.size() > max ? std::string(text.substr(0, max - 3)) + "..." : std::string(text);
  return "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\"" +
         (extra.empty() ? std::string() : " " + std::string(extra)) + ">" + html_escape(shown) + "</text>";
}

std::string svg_box(int x, int y, int w, int h, std::string_view fill, std::string_view stroke, bool dashed = false) {
  return "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(w) +
         "\" height=\"" + std::to_string(h) + "\" rx=\"8\" fill=\"" + std::string(fill) + "\" stroke=\"" +
         std::string(stroke) + "\"" + (dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
}

std::string svg_arrow(int x1, int y1, int x2, int y2, std::string_view colour, std::string_view marker) {
  return "<line x1=\"" + std::to_string(x1) + "\" y1=\"" + std::to_string(y1) + "\" x2=\"" + std::to_string(x2) +
         "\" y2=\"" + std::to_string(y2) + "\" stroke=\"" + std::string(colour) + "\" stroke-width=\"2\" marker-end=\"url(#" +
         std::string(marker) + ")\"/>";
}

// The boundary: space and gatekeeper on the internal network, the gatekeeper's leg on the outer
// network, what the corridor and the window let through, and the routes that must not exist.
std::string boundary_svg(const Boundary& b) {
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1000 400\" width=\"1000\" height=\"400\" role=\"img\" "
      "aria-label=\"The boundary of the space\" font-family=\"sans-serif\" font-size=\"13\">"
      "<defs><marker id=\"ok\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
      "orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#1b7f3b\"/></marker>"
      "<marker id=\"no\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
      "orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#b00020\"/></marker></defs>";
  // Inner network around the space and the gatekeeper's inner leg.
  s += svg_box(10, 40, 520, 250, "#f3f6fb", "#6b7fa8", true);
  s += svg_text(20, 60, "inner network " + (b.inner_network.empty() ? std::string("(internal)") : b.inner_network),
                "font-weight=\"600\" fill=\"#34466b\"", 64);
  s += svg_text(20, 278, "internal: no host address, no route out", "fill=\"#34466b\"");
  // The space.
  s += svg_box(30, 90, 200, 150, "#ffffff", "#34466b");
  s += svg_text(45, 115, "space", "font-weight=\"700\"");
  s += svg_text(45, 137, b.space.empty() ? std::string("(id unknown)") : b.space, {}, 22);
  s += svg_text(45, 160, "agent + copy of the code", "fill=\"#555\"");
  s += svg_text(45, 182, "non-root, read-only root,", "fill=\"#555\"");
  s += svg_text(45, 200, "no capabilities, seccomp", "fill=\"#555\"");
  // The gatekeeper, straddling both networks.
  s += svg_box(360, 80, 260, 190, "#fff8e8", "#a15c00");
  s += svg_text(375, 105, "gatekeeper", "font-weight=\"700\"");
  s += svg_text(375, 127, b.gatekeeper.empty() ? std::string("(address unknown)") : b.gatekeeper, {}, 30);
  s += svg_text(375, 230, "control 127.0.0.1:" + std::to_string(b.control_port), "fill=\"#555\"");
  s += svg_text(375, 250, "host reaches it by exec only", "fill=\"#555\"");
  // Corridor and window: the only two ways from the space.
  s += svg_arrow(230, 140, 358, 140, "#1b7f3b", "ok");
  s += svg_text(240, 133, "corridor :" + std::to_string(b.corridor_port), "fill=\"#1b7f3b\"");
  s += svg_arrow(230, 185, 358, 185, "#1b7f3b", "ok");
  s += svg_text(240, 178, "window :" + std::to_string(b.window_port), "fill=\"#1b7f3b\"");
  // Outer network and what is allowed beyond it.
  s += svg_box(650, 40, 340, 250, "#f4faf5", "#1b7f3b", true);
  s += svg_text(660, 60, "outer network", "font-weight=\"600\" fill=\"#1b5e2e\"");
  if (!b.outer_network.empty()) s += svg_text(660, 76, b.outer_network, "font-size=\"12\" fill=\"#1b5e2e\"", 48);
  s += svg_arrow(620, 140, 700, 140, "#1b7f3b", "ok");
  s += svg_arrow(620, 185, 700, 185, "#1b7f3b", "ok");
  int y = 100;
  s += svg_text(705, y, "corridor: TLS to port 443, names only", "fill=\"#1b5e2e\"");
  y += 20;
  const std::string mode = b.mode.empty() ? std::string("mode unknown") : "mode " + b.mode;
  s += svg_text(705, y, mode, "font-weight=\"600\"");
  y += 18;
  const std::size_t shown = b.allowed.size() < 4 ? b.allowed.size() : 4;
  for (std::size_t i = 0; i < shown; ++i, y += 16) s += svg_text(715, y, b.allowed[i], "font-size=\"12\"", 40);
  if (b.allowed.size() > shown) {
    s += svg_text(715, y, "+" + std::to_string(b.allowed.size() - shown) + " more (listed below)", "font-size=\"12\""), y += 16;
  }
  if (b.allowed.empty() && b.mode == "allowlist") s += svg_text(715, y, "(no name allowed)", "font-size=\"12\""), y += 16;
  y = y < 190 ? 190 : y + 6;
  s += svg_text(705, y, "window: grants " + std::to_string(b.grants.size()), "fill=\"#1b5e2e\"");
  y += 18;
  const std::size_t gshown = b.grants.size() < 3 ? b.grants.size() : 3;
  for (std::size_t i = 0; i < gshown; ++i, y += 16) s += svg_text(715, y, b.grants[i], "font-size=\"12\"", 40);
  if (b.grants.size() > gshown) s += svg_text(715, y, "+" + std::to_string(b.grants.size() - gshown) + " more", "font-size=\"12\"");
  // Routes that must not exist.
  s += svg_box(30, 320, 300, 60, "#fff5f6", "#b00020");
  s += svg_text(45, 345, "host, other spaces, metadata,", "fill=\"#7a0016\"");
  s += svg_text(45, 365, "the gatekeeper's control port", "fill=\"#7a0016\"");
  s += svg_arrow(130, 240, 130, 318, "#b00020", "no");
  s += svg_text(140, 305, "refused", "fill=\"#b00020\" font-weight=\"700\"");
  s += svg_box(650, 320, 340, 60, "#fff5f6", "#b00020");
  s += svg_text(665, 345, "every other port, address or name", "fill=\"#7a0016\"");
  s += svg_text(665, 365, "(checked after DNS, before connect)", "fill=\"#7a0016\"");
  s += svg_arrow(560, 270, 648, 340, "#b00020", "no");
  s += "</svg>";
  return s;
}

std::string facts_table(const std::vector<std::pair<std::string, std::string>>& facts) {
  std::string out = "<table><tr><th>fact</th><th>value</th></tr>";
  for (std::size_t i = 0; i < facts.size() && i < kMaxContextItems; ++i) {
    out += "<tr><td>" + bounded(facts[i].first) + "</td><td class=\"ev\">" + bounded(facts[i].second) + "</td></tr>";
  }
  return out + "</table>";
}

}  // namespace

std::string html_escape(std::string_view text) { return markup_escape(text, "&#39;"); }

std::string format_html(const std::vector<CaseResult>& results, const ReportContext& context) {
  GroupCounts all;
  std::vector<std::string> order;  // groups in the order they first ran
  std::map<std::string, GroupCounts> groups;
  for (const CaseResult& r : results) {
    add(all, r.verdict);
    auto [it, fresh] = groups.try_emplace(r.group);
    if (fresh) order.push_back(r.group);
    add(it->second, r.verdict);
  }
  const bool held = all.fail == 0 && all.inconclusive == 0 && !results.empty();

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  const std::string space = context.boundary.space.empty() ? std::string() : " - space " + context.boundary.space;
  out += "<title>Escape report" + bounded(space) + "</title>\n<style>" + std::string(kStyle) + "</style></head>\n<body>\n";
  out += "<h1>Escape report" + bounded(space) + "</h1>\n";
  out += "<p class=\"muted\">escape-suite";
  if (!context.tool_version.empty()) out += " " + bounded(context.tool_version);
  out += ": attacks tried from inside the space. A case passes only when the attempt failed the way its proof "
         "names; INCONCLUSIVE means nothing was proved.</p>\n";
  out += std::string("<p class=\"verdict-line\" id=\"verdict\">") +
         (held ? "The boundary held: no case failed and none was left unproved."
               : "The boundary is NOT proved: see the failed and inconclusive cases.") +
         "</p>\n";

  out += "<section id=\"summary\"><h2>Summary</h2><p>" + std::to_string(results.size()) + " cases: " + badges(all) +
         "</p><table><tr><th>group</th><th>cases</th><th>passed</th><th>failed</th><th>inconclusive</th><th>not "
         "applicable</th></tr>";
  for (const std::string& g : order) {
    const GroupCounts& c = groups[g];
    out += "<tr><td><a href=\"#group-" + anchor(g) + "\">" + bounded(g) + "</a></td><td>" + std::to_string(c.total()) +
           "</td><td>" + std::to_string(c.pass) + "</td><td>" + std::to_string(c.fail) + "</td><td>" +
           std::to_string(c.inconclusive) + "</td><td>" + std::to_string(c.not_applicable) + "</td></tr>";
  }
  out += "</table></section>\n";

  if (context.has_boundary) {
    const Boundary& b = context.boundary;
    out += "<section id=\"boundary\"><h2>The boundary of this space</h2>\n" + boundary_svg(b) + "\n<p>";
    out += "Corridor mode: <b>" + (b.mode.empty() ? std::string("unknown") : bounded(b.mode)) + "</b>. Allowed names (" +
           std::to_string(b.allowed.size()) + "): ";
    for (std::size_t i = 0; i < b.allowed.size() && i < kMaxContextItems; ++i) {
      out += (i > 0 ? ", " : "") + std::string("<code>") + bounded(b.allowed[i]) + "</code>";
    }
    if (b.allowed.empty()) out += "none";
    out += ". Window grants (" + std::to_string(b.grants.size()) + "): ";
    for (std::size_t i = 0; i < b.grants.size() && i < kMaxContextItems; ++i) {
      out += (i > 0 ? ", " : "") + std::string("<code>") + bounded(b.grants[i]) + "</code>";
    }
    if (b.grants.empty()) out += "none";
    out += ".</p></section>\n";
  }
  if (!context.host_facts.empty()) {
    out += "<section id=\"host-facts\"><h2>Host facts</h2>" + facts_table(context.host_facts) + "</section>\n";
  }
  if (!context.residuals.empty()) {
    out += "<section id=\"residuals\"><h2>Residual risks</h2><ul>";
    for (std::size_t i = 0; i < context.residuals.size() && i < kMaxContextItems; ++i) {
      out += "<li>" + bounded(context.residuals[i]) + "</li>";
    }
    out += "</ul></section>\n";
  }

  for (const std::string& g : order) {
    out += "<section class=\"group\" id=\"group-" + anchor(g) + "\"><h2>" + bounded(g) + " <span class=\"muted\">(" +
           counts_text(groups[g]) + ")</span></h2>\n<table><tr><th>case</th><th>verdict</th><th>evidence</th><th>ms</th></tr>\n";
    for (const CaseResult& r : results) {
      if (r.group != g) continue;
      out += "<tr class=\"case " + std::string(verdict_class(r.verdict)) + "\" id=\"case-" + anchor(r.id) + "\"><td><b>" +
             html_escape(r.id) + "</b>";
      if (const CaseText* c = find_case_text(r.id); c != nullptr) {
        out += "<div class=\"case-text\">threat: " + html_escape(c->threat) +
               "<br>proof: " + html_escape(c->proof) + "</div>";
      }
      out += "</td><td class=\"v\">" + std::string(verdict_word(r.verdict)) + "</td><td class=\"ev\">" +
             html_escape(r.evidence) + "</td><td>" + std::to_string(r.duration_ms) + "</td></tr>\n";
    }
    out += "</table></section>\n";
  }
  out += "</body></html>\n";
  return out;
}

void add_facts(ReportContext& context, const std::vector<Fact>& facts) {
  constexpr std::string_view kResidual = "residual.";
  for (const Fact& f : facts) {
    if (f.key.rfind(kResidual, 0) == 0) {
      context.residuals.push_back(f.key.substr(kResidual.size()) + ": " + f.value);
    } else {
      context.host_facts.emplace_back(f.key, f.value);
    }
  }
}

ReportContext context_from_options(const Options& opts) {
  ReportContext c;
  c.has_boundary = true;
  c.boundary.space = opts.space_id;
  c.boundary.gatekeeper = opts.gatekeeper;
  c.boundary.corridor_port = opts.corridor_port;
  c.boundary.window_port = opts.window_port;
  c.boundary.control_port = opts.control_port;
  // The allowed target is the run's positive control, so at least it is allowed; the full list is
  // known only to the host. The window key in --window-base is never shown.
  if (!opts.allowed_target.empty()) c.boundary.allowed.push_back(opts.allowed_target.substr(0, opts.allowed_target.rfind(':')));
  if (!opts.window_grant.empty()) c.boundary.grants.push_back(opts.window_grant);
  return c;
}

}  // namespace escape
