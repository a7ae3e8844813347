// The content rules of a record's members (record_fields.cc); parse_record applies them after the
// shape, so a record no spacectl could have written is unreadable, never acted on.
#pragma once

#include <cstddef>
#include <string>

#include "controller/errors.h"
#include "controller/records.h"

namespace controller {

inline constexpr std::size_t kMaxRecordWordBytes = 64;    // a step, history or error-code word
inline constexpr std::size_t kMaxRecordPathBytes = 4096;  // PATH_MAX
inline constexpr std::size_t kMaxRecordMessageBytes =
    16384;  // a failed creation's message (longer is cut on write)
inline constexpr std::size_t kMaxRecordDepth = 4;  // nothing a record holds nests deeper than 3

Result<void> check_record_fields(const SpaceRecord& record, const std::string& what);

}  // namespace controller
