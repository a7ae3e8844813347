// The runner's window upstream, as a mode of this binary: `escape-suite answer-upstream
// --key-sha256 HEX` reads one HTTP request head from stdin and writes one answer to stdout, for a
// busybox `nc -ll -p 80 -e` in the runner's upstream container (no shell anywhere). It answers 200
// with the marker (window_probe.h kUpstreamKeySeen) only when the x-api-key header's value hashes
// to HEX, the grant's fake key; 401 otherwise. The window's positive control needs that 200.
#pragma once

#include <string>
#include <string_view>

namespace escape {

inline constexpr std::string_view kAnswerUpstreamMode = "answer-upstream";
inline constexpr std::size_t kMaxUpstreamHead = 16384;

// The answer to `head` (bytes up to and including the blank line, or what arrived).
std::string upstream_answer(std::string_view head, std::string_view key_sha256);
// argv after the mode word; reads stdin, writes stdout; the process exit status.
int run_answer_upstream(int argc, char** argv);

}  // namespace escape
