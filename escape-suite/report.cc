#include "escape-suite/report.h"

#include <cstdio>

#include "escape-suite/report_rich.h"
#include "policy/json.h"

namespace escape {
namespace {

struct Counts {
  std::size_t pass = 0, fail = 0, inconclusive = 0, not_applicable = 0;
};

Counts count(const std::vector<CaseResult>& results) {
  Counts c;
  for (const CaseResult& r : results) {
    switch (r.verdict) {
      case Verdict::kPass: ++c.pass; break;
      case Verdict::kFail: ++c.fail; break;
      case Verdict::kInconclusive: ++c.inconclusive; break;
      case Verdict::kNotApplicable: ++c.not_applicable; break;
    }
  }
  return c;
}

std::string summary_line(const std::vector<CaseResult>& results) {
  const Counts c = count(results);
  return std::to_string(results.size()) + " cases: " + std::to_string(c.pass) + " passed, " +
         std::to_string(c.fail) + " failed, " + std::to_string(c.inconclusive) + " inconclusive, " +
         std::to_string(c.not_applicable) + " not applicable";
}

std::string seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  return buf;
}

std::string json_quoted(std::string_view s) {
  std::string out;
  policy::json::append_quoted(out, s);
  return out;
}

}  // namespace

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(ch);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

std::string markup_escape(std::string_view text, std::string_view apostrophe) {
  std::string out;
  for (const char ch : printable(text)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'':
        out += apostrophe;
        break;
      default: out.push_back(ch); break;
    }
  }
  return out;
}

std::string format_text(const std::vector<CaseResult>& results) {
  std::string out;
  for (const CaseResult& r : results) {
    std::string word(verdict_word(r.verdict));
    word.resize(12, ' ');
    out += word + " " + printable(r.id) + "  " + printable(r.evidence) + "\n";
  }
  out += summary_line(results) + "\n";
  return out;
}

std::string format_json(const std::vector<CaseResult>& results) {
  const Counts c = count(results);
  std::string out = "{\"suite\":\"escape-suite\",\"version\":1,\"summary\":{";
  out += "\"total\":" + std::to_string(results.size()) + ",\"pass\":" + std::to_string(c.pass) +
         ",\"fail\":" + std::to_string(c.fail) + ",\"inconclusive\":" + std::to_string(c.inconclusive) +
         ",\"not_applicable\":" + std::to_string(c.not_applicable) + "},\"cases\":[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    if (i > 0) out += ",";
    out += "{\"id\":" + json_quoted(r.id) + ",\"group\":" + json_quoted(r.group) +
           ",\"verdict\":" + json_quoted(verdict_word(r.verdict)) + ",\"evidence\":" +
           json_quoted(r.evidence) + ",\"duration_ms\":" + std::to_string(r.duration_ms) + "}";
  }
  out += "]}\n";
  return out;
}

std::string format_tap(const std::vector<CaseResult>& results) {
  std::string out = "TAP version 13\n1.." + std::to_string(results.size()) + "\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    const std::string n = std::to_string(i + 1);
    switch (r.verdict) {
      case Verdict::kNotApplicable:
        out += "ok " + n + " - " + printable(r.id) + " # SKIP " + printable(r.evidence) + "\n";
        continue;
      case Verdict::kPass: out += "ok " + n + " - " + printable(r.id) + "\n"; break;
      case Verdict::kFail:
      case Verdict::kInconclusive: out += "not ok " + n + " - " + printable(r.id) + "\n"; break;
    }
    // YAML diagnostics; a JSON string is a valid YAML double-quoted scalar.
    out += "  ---\n  verdict: " + std::string(verdict_word(r.verdict)) + "\n  evidence: " +
           json_quoted(r.evidence) + "\n  ...\n";
  }
  return out;
}

std::string format_junit(const std::vector<CaseResult>& results) {
  const Counts c = count(results);
  std::int64_t total_ms = 0;
  for (const CaseResult& r : results) total_ms += r.duration_ms;
  const std::string attrs = "tests=\"" + std::to_string(results.size()) + "\" failures=\"" +
                            std::to_string(c.fail) + "\" errors=\"" + std::to_string(c.inconclusive) +
                            "\" skipped=\"" + std::to_string(c.not_applicable) + "\" time=\"" +
                            seconds(total_ms) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"escape-suite\" " + attrs + ">\n";
  out += "  <testsuite name=\"escape-suite\" " + attrs + ">\n";
  for (const CaseResult& r : results) {
    const std::string ev = xml_escape(r.evidence);
    out += "    <testcase classname=\"escape." + xml_escape(r.group) + "\" name=\"" + xml_escape(r.id) +
           "\" time=\"" + seconds(r.duration_ms) + "\">";
    switch (r.verdict) {
      case Verdict::kPass: out += "<system-out>" + ev + "</system-out>"; break;
      case Verdict::kFail: out += "<failure type=\"FAIL\" message=\"" + ev + "\"/>"; break;
      case Verdict::kInconclusive: out += "<error type=\"INCONCLUSIVE\" message=\"" + ev + "\"/>"; break;
      case Verdict::kNotApplicable: out += "<skipped message=\"" + ev + "\"/>"; break;
    }
    out += "</testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string format_report(Format format, const std::vector<CaseResult>& results, const ReportContext& context) {
  switch (format) {
    case Format::kText: return format_text(results);
    case Format::kJson: return format_json(results);
    case Format::kTap: return format_tap(results);
    case Format::kJunit: return format_junit(results);
    case Format::kSarif: return format_sarif(results, context);
    case Format::kHtml: return format_html(results, context);
  }
  return format_text(results);  // unreachable: the switch is exhaustive (-Wswitch-enum)
}

std::string format_report(Format format, const std::vector<CaseResult>& results) {
  return format_report(format, results, ReportContext{});
}

std::string format_report(Format format, const std::vector<CaseResult>& results,
                          const std::vector<Fact>& facts) {
  std::string out = format_report(format, results);
  if (facts.empty()) return out;
  switch (format) {
    case Format::kText: {
      std::string head = "Host facts\n";
      for (const Fact& f : facts) head += "  " + printable(f.key) + ": " + printable(f.value) + "\n";
      return head + "\n" + out;
    }
    case Format::kTap: {
      std::string lines;
      for (const Fact& f : facts) lines += "# host " + printable(f.key) + ": " + printable(f.value) + "\n";
      const std::size_t plan = out.find('\n', out.find('\n') + 1);  // after "TAP version 13" and "1..N"
      return out.insert(plan == std::string::npos ? out.size() : plan + 1, lines);
    }
    case Format::kJson: {
      std::string section = "\"host_facts\":{";
      for (std::size_t i = 0; i < facts.size(); ++i) {
        section += (i ? "," : "") + json_quoted(facts[i].key) + ":" + json_quoted(facts[i].value);
      }
      section += "},";
      const std::size_t at = out.find("\"summary\":");
      return at == std::string::npos ? out : out.insert(at, section);
    }
    case Format::kSarif:
    case Format::kHtml: {
      ReportContext context;
      add_facts(context, facts);
      return format_report(format, results, context);
    }
    case Format::kJunit: {
      std::string props = "    <properties>\n";
      for (const Fact& f : facts) {
        props += "      <property name=\"" + xml_escape(f.key) + "\" value=\"" + xml_escape(f.value) + "\"/>\n";
      }
      props += "    </properties>\n";
      const std::size_t suite = out.find("  <testsuite ");
      const std::size_t line_end = suite == std::string::npos ? suite : out.find('\n', suite);
      return line_end == std::string::npos ? out : out.insert(line_end + 1, props);
    }
  }
  return out;  // unreachable: the switch is exhaustive (-Wswitch-enum)
}

std::string format_list(const std::vector<Case>& cases, const Options& opts) {
  std::string out;
  std::size_t n = 0;
  for (const Case& c : cases) {
    if (!selected(opts, c.id)) continue;
    ++n;
    out += c.id + "\n  threat:    " + c.threat + "\n  technique: " + c.technique + "\n  proof:     " +
           c.proof + "\n";
  }
  out += std::to_string(n) + " cases\n";
  return out;
}

int exit_code(const std::vector<CaseResult>& results) {
  if (results.empty()) return 1;
  for (const CaseResult& r : results) {
    switch (r.verdict) {
      case Verdict::kPass: break;
      case Verdict::kNotApplicable:
        if (r.evidence.empty()) return 1;  // N/A counts only with a reason
        break;
      case Verdict::kFail:
      case Verdict::kInconclusive: return 1;
    }
  }
  return 0;
}

}  // namespace escape
