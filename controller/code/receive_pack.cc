#include "controller/code/receive_pack.h"

#include <algorithm>
#include <optional>

namespace controller::code::receive_pack {
namespace {

std::string pkt(const std::string& payload) {
  static const char* hex = "0123456789abcdef";
  const std::size_t n = payload.size() + 4;
  std::string out;
  out += hex[(n >> 12) & 15];
  out += hex[(n >> 8) & 15];
  out += hex[(n >> 4) & 15];
  out += hex[n & 15];
  return out + payload;
}

// One pkt-line of the space's output; nullopt is a flush. Strict: four lowercase hex digits,
// nothing between 0001 and 0003, nothing above git's own maximum.
Result<std::optional<std::string>> read_pkt(ExecStream& s, const std::string& what) {
  Result<std::string> head = s.read_exact(4);
  if (!head) return head.error();
  const std::optional<std::size_t> length = pkt_length(*head);
  if (!length) {
    s.kill_group();
    return fail(Code::kCodeTransferFailed, what + ": the space sent a malformed pkt-line length");
  }
  const std::size_t n = *length;
  if (n == 0) return std::optional<std::string>();
  if (n < 4 || n > kPktMax) {
    s.kill_group();
    return fail(Code::kCodeTransferFailed,
                what + ": the space sent a pkt-line of length " + std::to_string(n));
  }
  Result<std::string> body = s.read_exact(n - 4);
  if (!body) return body.error();
  return std::optional<std::string>(std::move(*body));
}

}  // namespace

bool is_hex40(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<std::size_t> pkt_length(std::string_view head) {
  if (head.size() != 4) return std::nullopt;
  std::size_t n = 0;
  for (const char c : head) {
    int v = -1;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    }
    if (v < 0) return std::nullopt;
    n = n * 16 + static_cast<std::size_t>(v);
  }
  return n;
}

std::string shown(const std::string& text) {
  std::string t = text.substr(0, 2000);
  for (char& c : t) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return t;
}

Result<Advertisement> read_advertisement(ExecStream& s, const std::string& what) {
  Advertisement adv;
  for (std::size_t line = 0;; ++line) {
    if (line > kLinesMax) {
      s.kill_group();
      return fail(Code::kCodeTransferFailed, what + ": the space advertised more than " +
                                                 std::to_string(kLinesMax) + " lines");
    }
    Result<std::optional<std::string>> p = read_pkt(s, what);
    if (!p) return p.error();
    if (!*p) break;
    const std::string& l = **p;
    if (line == 0) {
      const std::size_t nul = l.find('\0');
      if (nul == std::string::npos || l.size() < 41 ||
          !is_hex40(std::string_view(l).substr(0, 40)) || l[40] != ' ') {
        s.kill_group();
        return fail(Code::kCodeTransferFailed,
                    what + ": the space's first line is not a ref advertisement: " + shown(l));
      }
      std::string caps = " " + l.substr(nul + 1);
      if (!caps.empty() && caps.back() == '\n') caps.pop_back();
      adv.report_status = (caps + " ").find(" report-status ") != std::string::npos;
    } else if (l.rfind("shallow ", 0) == 0) {
      std::string_view id = std::string_view(l).substr(8);
      if (!id.empty() && id.back() == '\n') id.remove_suffix(1);
      if (!is_hex40(id)) {
        s.kill_group();
        return fail(Code::kCodeTransferFailed,
                    what + ": the space sent a malformed shallow line: " + shown(l));
      }
      adv.shallow.emplace_back(id);
    } else if (!(l.size() > 41 && is_hex40(std::string_view(l).substr(0, 40)) && l[40] == ' ')) {
      s.kill_group();
      return fail(Code::kCodeTransferFailed,
                  what + ": the space sent an advertisement line of unknown shape: " + shown(l));
    }
  }
  if (!adv.report_status) {
    s.kill_group();
    return fail(Code::kCodeTransferFailed,
                what + ": the space's receive-pack does not offer report-status");
  }
  return adv;
}

Result<void> send_pack(ExecStream& s, const std::string& what,
                       const std::vector<std::string>& shallow,
                       const std::vector<RefUpdate>& updates, const PackSource& pack) {
  std::string commands;
  for (const std::string& id : shallow) commands += pkt("shallow " + id + "\n");
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const RefUpdate& u = updates[i];
    std::string line = u.old_id + " " + u.new_id + " " + u.name;
    if (i == 0) line += std::string(1, '\0') + "report-status agent=spacectl";
    commands += pkt(line + "\n");
  }
  commands += "0000";
  if (auto r = s.write_all(commands); !r) return r;
  if (auto r = pack([&s](std::string_view bytes) { return s.write_all(bytes); }); !r) {
    s.kill_group();
    return r;
  }
  s.close_stdin();
  std::vector<std::string> report;
  for (;;) {
    if (report.size() > kLinesMax) {
      s.kill_group();
      return fail(Code::kCodeTransferFailed, what + ": the space's report is too long");
    }
    Result<std::optional<std::string>> p = read_pkt(s, what);
    if (!p) return p.error();
    if (!*p) break;
    std::string l = **p;
    if (!l.empty() && l.back() == '\n') l.pop_back();
    report.push_back(l);
  }
  if (report.empty() || report[0] != "unpack ok") {
    s.kill_group();
    return fail(Code::kCodeTransferFailed,
                what + ": the space did not unpack: " + shown(report.empty() ? "" : report[0]) +
                    (s.stderr_tail().empty() ? "" : "; it printed: " + s.stderr_tail()));
  }
  for (const RefUpdate& u : updates) {
    if (std::find(report.begin(), report.end(), "ok " + u.name) == report.end()) {
      s.kill_group();
      std::string said;
      for (const auto& l : report) said += (said.empty() ? "" : " | ") + l;
      return fail(Code::kCodeTransferFailed,
                  what + ": the space did not take " + u.name + ": " + shown(said));
    }
  }
  Result<int> status = s.finish();
  if (!status) return status.error();
  if (*status != 0) {
    return fail(Code::kCodeTransferFailed,
                what + ": receive-pack exited " + std::to_string(*status) + ": " + s.stderr_tail());
  }
  return {};
}

}  // namespace controller::code::receive_pack
