#include "escape-suite/proc_net.h"

#include <optional>
#include <vector>

#include "policy/number.h"

namespace escape {
namespace {

// The fields of one line of `table`, at least `at_least` of them. The kernel pads with spaces and
// tabs; a device name holds neither.
policy::Result<std::vector<std::string_view>> fields_of(std::string_view table,
                                                        std::string_view line,
                                                        std::size_t at_least) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  if (out.size() < at_least) {
    return policy::Error{"read " + std::string(table) + ": a line with " +
                         std::to_string(out.size()) + " fields, not " + std::to_string(at_least) +
                         " or more: '" + std::string(line.substr(0, 64)) + "'"};
  }
  return out;
}

policy::Error bad_field(std::string_view table, std::string_view field, std::string_view text) {
  return policy::Error{"read " + std::string(table) + ": " + std::string(field) + " '" +
                       std::string(text.substr(0, 32)) + "' is not what the kernel prints"};
}

// "%08X" (an address word) or "%04X" (the flags): `digits` hex digits, or more for a wider value.
std::optional<std::uint32_t> hex_word(std::string_view text, std::size_t digits) {
  if (text.size() < digits || text.size() > 8) return std::nullopt;
  return policy::parse_number<std::uint32_t>(text, 16);
}

// "0x%x": a prefix and one to eight hex digits.
std::optional<std::uint32_t> prefixed_hex(std::string_view text) {
  if (text.size() < 3 || text.size() > 10 || text.substr(0, 2) != "0x") return std::nullopt;
  return policy::parse_number<std::uint32_t>(text.substr(2), 16);
}

}  // namespace

policy::Result<RouteRow> parse_route_line(std::string_view line) {
  constexpr std::string_view kTable = "/proc/net/route";
  const policy::Result<std::vector<std::string_view>> fields = fields_of(kTable, line, 8);
  if (!fields) return fields.error();
  const std::vector<std::string_view>& f = *fields;
  RouteRow row;
  row.device = std::string(f[0]);
  const struct {
    std::string_view name;
    std::string_view text;
    std::size_t digits;
    std::uint32_t* into;
  } words[] = {{"Destination", f[1], 8, &row.destination},
               {"Gateway", f[2], 8, &row.gateway},
               {"Flags", f[3], 4, &row.flags},
               {"Mask", f[7], 8, &row.mask}};
  for (const auto& w : words) {
    const std::optional<std::uint32_t> v = hex_word(w.text, w.digits);
    if (!v) return bad_field(kTable, w.name, w.text);
    *w.into = *v;
  }
  // RefCnt and Metric are printed "%d", Use "%u": read, not kept, so a torn line is refused.
  if (!policy::parse_number<std::int32_t>(f[4])) return bad_field(kTable, "RefCnt", f[4]);
  if (!policy::parse_number<std::uint32_t>(f[5])) return bad_field(kTable, "Use", f[5]);
  if (!policy::parse_number<std::int32_t>(f[6])) return bad_field(kTable, "Metric", f[6]);
  return row;
}

policy::Result<ArpRow> parse_arp_line(std::string_view line) {
  constexpr std::string_view kTable = "/proc/net/arp";
  const policy::Result<std::vector<std::string_view>> fields = fields_of(kTable, line, 3);
  if (!fields) return fields.error();
  const std::vector<std::string_view>& f = *fields;
  ArpRow row;
  row.address = std::string(f[0]);
  const std::optional<std::uint32_t> hw = prefixed_hex(f[1]);
  if (!hw) return bad_field(kTable, "HW type", f[1]);
  const std::optional<std::uint32_t> flags = prefixed_hex(f[2]);
  if (!flags) return bad_field(kTable, "Flags", f[2]);
  row.hw_type = *hw;
  row.flags = *flags;
  return row;
}

}  // namespace escape
