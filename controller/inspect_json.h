// Strict readers for inspect documents (verify.cc and verify_more.cc): a missing member, a wrong
// type or a non-object reads as null/empty, never throws, so a hostile or odd document can only
// produce a named difference.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace controller::inspect {

inline const nlohmann::json& member(const nlohmann::json& j, std::string_view key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(std::string(key));
  return it == j.end() ? kNull : *it;
}

inline std::string str(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }

inline bool empty_or_null(const nlohmann::json& j) {
  return j.is_null() || ((j.is_array() || j.is_object()) && j.empty()) ||
         (j.is_string() && j.get<std::string>().empty());
}

}  // namespace controller::inspect
