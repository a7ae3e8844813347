// Code in, transfer: the snapshot goes into the space over the place's exec, as git's own pack
// protocol spoken by this process to the space's `git receive-pack` (stdin/stdout of the exec
// argv), with packs written in-process (pack_writer.h). Only what the snapshot needs goes first
// (the base commit and its tree, marked shallow, and the two snapshot commits, in one session and
// one pack); `send_history` brings the rest into the same repository. Each receive-pack runs under
// the host deadline (process-group kill), an output cap, and inside under `timeout -s KILL
// <deadline + margin>` so nothing the host gave up on keeps running there.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "controller/code/snapshot.h"
#include "controller/errors.h"
#include "controller/place.h"

namespace controller::code {

// How code in reaches one space; a Place gives both, tests give a stand-in.
struct SpaceExec {
  std::vector<std::string> argv_prefix;  // Place::exec_argv(id): the caller spawns prefix + command
  // Runs a fixed command inside (Place::exec): argv after the prefix, no stdin.
  std::function<Result<ExecOutput>(const std::vector<std::string>& argv, std::chrono::milliseconds timeout)> run;
  std::string image;  // named in the refusal of an image without usable git
};

struct TransferOptions {
  std::chrono::milliseconds timeout{600000};  // host deadline of each receive-pack
  int inner_margin_seconds = 5;               // inner `timeout -s KILL` = deadline + margin
  std::function<void(const std::string&)> progress;  // one line per step, may be empty
};

// The oldest git inside a space that code in works with (git init --initial-branch: 2.28).
inline constexpr int kSpaceGitFloorMajor = 2;
inline constexpr int kSpaceGitFloorMinor = 28;

// "git version 2.39.5" → {2,39}; anything else fails. Build suffixes are ignored.
bool parse_git_version(const std::string& text, int& major, int& minor);

struct CodeInResult {
  Snapshot snapshot;
  std::string space_path;    // /spaces/<id>/<folder>
  std::string project_path;  // space_path or space_path/<prefix>
  std::string space_git;     // what `git --version` said inside
};

// take_snapshot → probe the space's git → init → one push → unfold. On a failure after the
// snapshot, the start ref is deleted again (by its expected value); what reached the space stays
// there (the space is the unit to remove).
Result<CodeInResult> bring_code_in(const std::string& repository, const std::string& space_id, Mode mode,
                                   const SpaceExec& exec, const TransferOptions& options);

enum class HistoryStatus : std::uint8_t { kSent, kAlreadyComplete, kHostShallow };
std::string_view history_word(HistoryStatus status);

// The history behind `base` (only the objects the space lacks) in one receive-pack session into
// the space's repository, whose advertisement says whether the space is still shallow at the base
// (and nowhere else); then the shallow mark goes. Changes no work tree, index or HEAD inside.
Result<HistoryStatus> send_history(const std::string& repository, const std::string& space_id, const std::string& space_path,
                                   const std::string& base, const SpaceExec& exec, const TransferOptions& options);

}  // namespace controller::code
