// The error answers of `spacectl serve` (http_server.h): the body every error carries and the HTTP
// status of each failure code (controller/API.md lists them).
#include "controller/serve/http_server.h"

namespace controller::serve {

using nlohmann::json;

json error_body(std::string_view code, const std::string& message) {
  return {{"error", {{"code", std::string(code)}, {"message", message}}}};
}

Response error_response(int status, std::string_view code, const std::string& message) {
  return Response{status, error_body(code, message)};
}

int status_of(Code code) {
  switch (code) {
    case Code::kUsage:
    case Code::kInvalidArgument:
      return 400;
    case Code::kSpaceNotFound:
    case Code::kPlaceNotFound:
      return 404;
    case Code::kSpaceBusy:
    case Code::kSpaceNotRunning:
    case Code::kVerifyFailed:
    case Code::kRecordUnreadable:
    case Code::kPlaceUnusable:
    case Code::kProjectFolderMissing:
    case Code::kNotAGitWorkTree:
    case Code::kRepositoryHasNoCommit:
    case Code::kUnmergedChanges:
    case Code::kSpaceRefExists:
    case Code::kInvalidBranchName:
    case Code::kProjectFolderDoesNotTravel:
    case Code::kRepositoryUnsupported:
    case Code::kSpacePathInUse:
    case Code::kSpaceGitUnusable:
    case Code::kSpaceStartMissing:
    case Code::kResultTransferTooLarge:
    case Code::kResultTooLarge:
    case Code::kResultTooManyChanges:
    case Code::kResultRefused:
    case Code::kBranchExists:
    case Code::kChangesRouteClosed:
    case Code::kChangesTooLarge:
    case Code::kNameNotAllowedHere:
    case Code::kCaseOnlyRename:
    case Code::kChangesBlockedByLink:
    case Code::kChangesDoNotApply:
    case Code::kChangesPartlyApplied:
    case Code::kChangesUndecided:
    case Code::kChangesNeedFilter:
    case Code::kSecretSourceMissing:
      return 409;
    case Code::kProviderNotSupported:
      return 400;
    case Code::kSecretHelperFailed:
      return 502;
    case Code::kApplyFailed:
      return 500;
    case Code::kInterrupted:
      return 503;
    case Code::kInternal:
      return 500;
    case Code::kPlaceUnreachable:
    case Code::kGatekeeperNotReady:
    case Code::kGatekeeperRefused:
    case Code::kGatekeeperUnreachable:
    case Code::kCommandFailed:
    case Code::kCommandTimeout:
    case Code::kOutputTooLarge:
    case Code::kImageMissing:
    case Code::kImageMismatch:
    case Code::kResultMissing:
    case Code::kCodeOutFailed:
    case Code::kCodeTransferFailed:
    case Code::kCodeUnfoldFailed:
    case Code::kHistoryTransferFailed:
    case Code::kCodeInFailed:
      return 502;
  }
  return 500;
}

Response failure_response(const Failure& failure) {
  return error_response(status_of(failure.code), code_word(failure.code), failure.message);
}

}  // namespace controller::serve
