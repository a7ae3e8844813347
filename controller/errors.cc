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
    case Code::kRecordUnreadable: return "record_unreadable";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kInternal: return "internal";
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
    case Code::kGatekeeperNotReady:
    case Code::kGatekeeperRefused:
    case Code::kGatekeeperUnreachable: return 6;
    case Code::kCommandFailed:
    case Code::kCommandTimeout:
    case Code::kOutputTooLarge:
    case Code::kImageMissing:
    case Code::kRecordUnreadable:
    case Code::kInternal: return 1;
  }
  return 1;
}

}  // namespace controller
