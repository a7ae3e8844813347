// Errors of the controller: a stable code a program (OpenChamber) can branch on, plus a sentence
// for a person that names the operation and the object (docs/decisions.md#error-messages). Errors
// are values; the only exceptions in controller/ are CLI11's and nlohmann-json's, caught in
// main.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "policy/result.h"

namespace controller {

// One row per code with its comment beside it; adding a code must not realign them all.
// clang-format off
enum class Code : std::uint8_t {
  kUsage,                 // the command line is wrong
  kPlaceUnreachable,      // the place's CLI is missing or its daemon does not answer
  kPlaceUnusable,         // the place answers but lacks something we need (seccomp, isolation)
  kPlaceNotFound,         // no place registered under that name
  kSpaceNotFound,         // no space of this owner has that id
  kSpaceNotRunning,       // the operation needs a running space
  kVerifyFailed,          // a created container or network differs from the hardening spec
  kGatekeeperNotReady,    // the gatekeeper did not answer /health in time
  kGatekeeperRefused,     // the control channel answered with an HTTP error
  kGatekeeperUnreachable, // the control client could not reach the channel inside the container
  kCommandFailed,         // a place command exited non-zero
  kCommandTimeout,        // a place command ran past its deadline and was killed
  kOutputTooLarge,        // a place command printed more than its cap and was killed
  kImageMissing,          // a pinned image ID file or the image itself is missing
  kImageMismatch,         // an image pulled or loaded for a pin is not the pinned image
  kRecordUnreadable,      // the host record of a space cannot be read or written
  kInvalidArgument,       // a value given by the user is refused
  kInterrupted,           // SIGINT, SIGTERM or SIGHUP stopped it; what was started was rolled back
  kInternal,              // a bug or an impossible answer
  kSpaceBusy,             // another action (any spacectl process) holds the space's lock now
  // Code in (code/): each refusal has its own code and exit status (10 and up).
  kProjectFolderMissing,       // --repo is not a folder
  kNotAGitWorkTree,            // not inside a git work tree (bare repositories too)
  kRepositoryHasNoCommit,      // HEAD names no commit yet
  kUnmergedChanges,            // the index holds a conflict
  kSpaceRefExists,             // refs/openchamber/spaces/<id>/start is already there
  kInvalidBranchName,          // the current branch has a name we will not pass on
  kProjectFolderDoesNotTravel, // the subfolder project is empty or ignored
  kRepositoryUnsupported,      // an object format or index extension this libgit2 cannot read
  kSpacePathInUse,             // the project path inside the space already exists
  kSpaceGitUnusable,           // the space image has no usable git (or one below the floor)
  kCodeTransferFailed,         // the pack protocol over exec failed (refused, hung, flooded, lied)
  kCodeUnfoldFailed,           // the checkout inside the space failed
  kHistoryTransferFailed,      // full history did not arrive (the space works shallow)
  kCodeInFailed,               // a host-side libgit2 or file step failed
  // Code out (code/out.h): exit statuses 24-31 (32 and up belong to apply).
  kSpaceStartMissing,          // no refs/openchamber/spaces/<id>/start: work comes out only where code in came from
  kResultTransferTooLarge,     // the pack grew past the transfer cap while it arrived
  kResultTooLarge,             // a non-blob object or the new bytes are over their cap
  kResultTooManyChanges,       // too many new objects, changed paths, folders or nesting steps
  kResultRefused,              // a tree entry name or mode, a .gitmodules or a link target is refused
  kResultMissing,              // the result the space reported did not arrive, or is not a commit
  kCodeOutFailed,              // the snapshot inside, the fetch protocol or the promote failed
  // Apply (code/apply*): each refusal has its own code and exit status (32 and up); it shares
  // space_start_missing and result_missing with code out.
  kBranchExists,           // apply --as-branch: that branch (or a D/F neighbour) already exists
  kChangesRouteClosed,     // an earlier refusal closed the uncommitted-changes route for good
  kChangesTooLarge,        // over a cap of the changes route (route stays open)
  kNameNotAllowedHere,     // a created name this repository cannot hold (route stays open)
  kCaseOnlyRename,         // a rename that only changes case/normalisation here (route open)
  kChangesBlockedByLink,   // a link on the way to a path the change writes (route closes)
  kChangesDoNotApply,      // the work tree no longer matches what the change expects (closes)
  kChangesPartlyApplied,   // part of the change may be in the work tree (closes)
  kChangesUndecided,       // the work tree could not be read back in time (closes)
  kChangesNeedFilter,      // a path the change touches has a user filter driver (route open)
  kApplyFailed,            // a host-side libgit2 or file step of apply failed
  // Grants (grants/): each refusal has its own code and exit status (43 and up).
  kSecretSourceMissing,    // --secret-env names a variable that is unset or empty
  kSecretHelperFailed,     // the helper hung, flooded, printed bad JSON, failed, or gave an expired token
  kProviderNotSupported,   // no preset for that provider, or one that signs requests instead of sending a key
};
// clang-format on

std::string_view code_word(Code code);
// Exit status of spacectl for each code (documented in --help and README.md).
int exit_status(Code code);

struct Failure {
  Code code = Code::kInternal;
  std::string message;
};

// policy::Result (shaped like std::expected) with a Failure that carries a code.
template <class T>
using Result = policy::Result<T, Failure>;

inline Failure fail(Code code, std::string message) { return Failure{code, std::move(message)}; }

}  // namespace controller
