#include "controller/errors.h"

namespace controller {

std::string_view code_word(Code code) {
  switch (code) {
    case Code::kUsage: return "usage";
    case Code::kPlaceUnreachable: return "place_unreachable";
    case Code::kPlaceUnusable: return "place_unusable";
    case Code::kPlaceNotFound: return "place_not_found";
    case Code::kSpaceNotFound: return "space_not_found";
    case Code::kSpaceNotRunning: return "space_not_running";
    case Code::kVerifyFailed: return "verify_failed";
    case Code::kGatekeeperNotReady: return "gatekeeper_not_ready";
    case Code::kGatekeeperRefused: return "gatekeeper_refused";
    case Code::kGatekeeperUnreachable: return "gatekeeper_unreachable";
    case Code::kCommandFailed: return "command_failed";
    case Code::kCommandTimeout: return "command_timeout";
    case Code::kOutputTooLarge: return "command_output_too_large";
    case Code::kImageMissing: return "image_missing";
    case Code::kImageMismatch: return "image_mismatch";
    case Code::kRecordUnreadable: return "record_unreadable";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kInterrupted: return "interrupted";
    case Code::kInternal: return "internal";
    case Code::kSpaceBusy: return "space_busy";
    case Code::kProjectFolderMissing: return "project_folder_missing";
    case Code::kNotAGitWorkTree: return "not_a_git_work_tree";
    case Code::kRepositoryHasNoCommit: return "repository_has_no_commit";
    case Code::kUnmergedChanges: return "repository_has_unmerged_changes";
    case Code::kSpaceRefExists: return "space_ref_exists";
    case Code::kInvalidBranchName: return "invalid_branch_name";
    case Code::kProjectFolderDoesNotTravel: return "project_folder_does_not_travel";
    case Code::kRepositoryUnsupported: return "repository_unsupported";
    case Code::kSpacePathInUse: return "space_path_in_use";
    case Code::kSpaceGitUnusable: return "space_git_unusable";
    case Code::kCodeTransferFailed: return "code_transfer_failed";
    case Code::kCodeUnfoldFailed: return "code_unfold_failed";
    case Code::kHistoryTransferFailed: return "history_transfer_failed";
    case Code::kCodeInFailed: return "code_in_failed";
    case Code::kSpaceStartMissing: return "space_start_missing";
    case Code::kResultTransferTooLarge: return "result_transfer_too_large";
    case Code::kResultTooLarge: return "result_too_large";
    case Code::kResultTooManyChanges: return "result_too_many_changes";
    case Code::kResultRefused: return "result_refused";
    case Code::kResultMissing: return "result_missing";
    case Code::kCodeOutFailed: return "code_out_failed";
    case Code::kBranchExists: return "branch_exists";
    case Code::kChangesRouteClosed: return "changes_route_closed";
    case Code::kChangesTooLarge: return "changes_too_large";
    case Code::kNameNotAllowedHere: return "name_not_allowed_here";
    case Code::kCaseOnlyRename: return "case_only_rename";
    case Code::kChangesBlockedByLink: return "changes_blocked_by_link";
    case Code::kChangesDoNotApply: return "changes_do_not_apply";
    case Code::kChangesPartlyApplied: return "changes_partly_applied";
    case Code::kChangesUndecided: return "changes_undecided";
    case Code::kChangesNeedFilter: return "changes_need_filter";
    case Code::kApplyFailed: return "apply_failed";
    case Code::kSecretSourceMissing:
      return "secret_source_missing";
    case Code::kSecretHelperFailed:
      return "secret_helper_failed";
    case Code::kProviderNotSupported:
      return "provider_not_supported";
  }
  return "internal";
}

int exit_status(Code code) {
  switch (code) {
    case Code::kUsage:
    case Code::kInvalidArgument: return 2;
    case Code::kPlaceUnreachable:
    case Code::kPlaceUnusable:
    case Code::kPlaceNotFound: return 3;
    case Code::kSpaceNotFound:
    case Code::kSpaceNotRunning: return 4;
    case Code::kVerifyFailed: return 5;
    case Code::kSpaceBusy: return 7;
    case Code::kInterrupted: return 130;  // 128 + SIGINT, as a shell reports it
    case Code::kGatekeeperNotReady:
    case Code::kGatekeeperRefused:
    case Code::kGatekeeperUnreachable: return 6;
    case Code::kCommandFailed:
    case Code::kCommandTimeout:
    case Code::kOutputTooLarge:
    case Code::kImageMissing:
    case Code::kImageMismatch:
    case Code::kRecordUnreadable:
    case Code::kInternal: return 1;
    case Code::kProjectFolderMissing: return 10;
    case Code::kNotAGitWorkTree: return 11;
    case Code::kRepositoryHasNoCommit: return 12;
    case Code::kUnmergedChanges: return 13;
    case Code::kSpaceRefExists: return 14;
    case Code::kInvalidBranchName: return 15;
    case Code::kProjectFolderDoesNotTravel: return 16;
    case Code::kRepositoryUnsupported: return 17;
    case Code::kSpacePathInUse: return 18;
    case Code::kSpaceGitUnusable: return 19;
    case Code::kCodeTransferFailed: return 20;
    case Code::kCodeUnfoldFailed: return 21;
    case Code::kHistoryTransferFailed: return 22;
    case Code::kCodeInFailed: return 23;
    case Code::kSpaceStartMissing: return 24;
    case Code::kResultTransferTooLarge: return 25;
    case Code::kResultTooLarge: return 26;
    case Code::kResultTooManyChanges: return 27;
    case Code::kResultRefused: return 28;
    case Code::kResultMissing: return 29;
    case Code::kCodeOutFailed: return 30;
    case Code::kBranchExists: return 32;
    case Code::kChangesRouteClosed: return 33;
    case Code::kChangesTooLarge: return 34;
    case Code::kNameNotAllowedHere: return 35;
    case Code::kCaseOnlyRename: return 36;
    case Code::kChangesBlockedByLink: return 37;
    case Code::kChangesDoNotApply: return 38;
    case Code::kChangesPartlyApplied: return 39;
    case Code::kChangesUndecided: return 40;
    case Code::kChangesNeedFilter: return 41;
    case Code::kApplyFailed: return 42;
    case Code::kSecretSourceMissing:
      return 43;
    case Code::kSecretHelperFailed:
      return 44;
    case Code::kProviderNotSupported:
      return 45;
  }
  return 1;
}

}  // namespace controller
