// The record reader (controller/records.h): a record file is the user's, but it can be edited by
// hand, cut short by a full disk, or written by another tool. Never crash on any bytes; a record
// that is read passes the member rules and, written again, reads back as the same record.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "controller/record_fields.h"
#include "controller/records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > controller::kMaxRecordBytes) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  controller::Result<controller::SpaceRecord> r = controller::parse_record(text, "fuzz");
  if (!r) {
    if (r.error().code != controller::Code::kRecordUnreadable ||
        r.error().message.rfind("record fuzz: ", 0) != 0)
      std::abort();
    return 0;
  }
  if (!controller::check_record_fields(*r, "fuzz")) std::abort();
  const std::string again = controller::record_text(*r);
  controller::Result<controller::SpaceRecord> back = controller::parse_record(again, "fuzz");
  if (!back || controller::record_text(*back) != again) std::abort();
  return 0;
}
