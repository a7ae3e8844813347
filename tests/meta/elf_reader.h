// The ELF symbol table and executable bytes of a built binary, read directly so the binary tests
// need no binutils.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace meta {

// The whole file; empty when it cannot be read.
std::string read_file(const std::string& path);

struct Elf {
  bool ok = false;
  std::string error;
  std::uint16_t type = 0;
  bool has_interpreter = false;
  std::set<std::string> symbols;  // every .symtab name, defined or not
  std::string code;               // the bytes of every executable segment, concatenated
};

Elf parse_elf(const std::string& bytes);

}  // namespace meta
