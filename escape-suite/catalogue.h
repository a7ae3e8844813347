// What each case of the suite attacks and what proves "cannot", without the case itself: a table
// generated at build time from all_cases() (catalogue_gen.cc writes case_catalogue.cc), so the
// report writers describe cases while a program that only writes reports (spacectl) links no
// attacker code.
#pragma once

#include <cstddef>
#include <string_view>

namespace escape {

struct CaseText {
  std::string_view id, threat, technique, proof;
};

// Every case, in run order.
const CaseText* case_catalogue(std::size_t& count);
// The case with this id; null for an id the catalogue does not hold (a host check, an older
// binary's case).
const CaseText* find_case_text(std::string_view id);

}  // namespace escape
