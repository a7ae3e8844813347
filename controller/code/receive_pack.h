// The client side of git's receive-pack protocol (v0) as code in speaks it to the space's `git
// receive-pack` over an ExecStream: the ref advertisement read strictly, shallow lines and
// commands, the pack, and the report. Everything the space prints is hostile: pkt-line lengths,
// line counts and line shapes are checked, the refs it claims are never used to decide anything,
// and any text of its own is only shown (bounded, control characters replaced), never obeyed.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/code/exec_stream.h"
#include "controller/errors.h"

namespace controller::code::receive_pack {

inline constexpr std::size_t kPktMax = 65520;    // git's LARGE_PACKET_MAX
inline constexpr std::size_t kLinesMax = 10000;  // advertisement / report lines

// 40 lowercase hex digits (a SHA-1 object id as git prints it).
bool is_hex40(std::string_view s);

// The first 2,000 bytes of a space's text with control characters replaced: for messages only.
std::string shown(const std::string& text);

// The number a pkt-line's head announces when it is exactly four lowercase hex digits (0 is a
// flush); nullopt for any other head. The caller refuses 1 to 3 and anything above kPktMax.
std::optional<std::size_t> pkt_length(std::string_view head);

// One command: `<old> <new> <ref>`.
struct RefUpdate {
  std::string old_id, new_id, name;
};

// What a receive-pack announced before its first flush. Its refs are never used to decide
// anything; its shallow lines tell `code history` whether the space still lacks the history.
struct Advertisement {
  bool report_status = false;
  std::vector<std::string> shallow;  // 40 lowercase hex each
};

// Reads the advertisement strictly: a first line of an id, a space, a name, NUL and
// capabilities; then only ref lines or `shallow <id>`; at most kLinesMax lines. A receiver
// without report-status is refused. Any refusal kills the stream's process group.
Result<Advertisement> read_advertisement(ExecStream& s, const std::string& what);

// Writes a pack's bytes, in order, through the sink it is given (PackWriter::write).
using PackSink = std::function<Result<void>(std::string_view bytes)>;
using PackSource = std::function<Result<void>(const PackSink& sink)>;

// After the advertisement: shallow lines and commands, the pack streamed from `pack` to the
// receiver's stdin, then "unpack ok" and "ok <ref>" for every ref, and receive-pack's exit 0. A
// pack that fails half-way kills the receiver's process group (it gets no trailer, so it keeps
// nothing).
Result<void> send_pack(ExecStream& s, const std::string& what,
                       const std::vector<std::string>& shallow,
                       const std::vector<RefUpdate>& updates, const PackSource& pack);

}  // namespace controller::code::receive_pack
