#include "tests/meta/elf_reader.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace meta {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

namespace {

template <class T>
bool read_at(const std::string& bytes, std::uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

}  // namespace

Elf parse_elf(const std::string& bytes) {
  Elf elf;
  Elf64_Ehdr header{};
  if (!read_at(bytes, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64) {
    elf.error = "not a 64-bit ELF file";
    return elf;
  }
  elf.type = header.e_type;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program{};
    if (!read_at(bytes, header.e_phoff + std::uint64_t{i} * header.e_phentsize, &program)) break;
    elf.has_interpreter = elf.has_interpreter || program.p_type == PT_INTERP;
    if (program.p_type == PT_LOAD && (program.p_flags & PF_X) != 0 &&
        program.p_offset <= bytes.size()) {
      elf.code +=
          bytes.substr(program.p_offset,
                       std::min<std::uint64_t>(program.p_filesz, bytes.size() - program.p_offset));
    }
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    if (!read_at(bytes, header.e_shoff + std::uint64_t{i} * header.e_shentsize, &sections[i])) {
      elf.error = "section header out of range";
      return elf;
    }
  }
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_SYMTAB || section.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strings = sections[section.sh_link];
    for (std::uint64_t at = section.sh_offset;
         at + sizeof(Elf64_Sym) <= section.sh_offset + section.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol{};
      if (!read_at(bytes, at, &symbol) || symbol.st_name >= strings.sh_size) continue;
      const char* name = bytes.data() + strings.sh_offset + symbol.st_name;
      const std::size_t max = strings.sh_size - symbol.st_name;
      elf.symbols.insert(std::string(name, strnlen(name, max)));
    }
  }
  elf.ok = true;
  return elf;
}

}  // namespace meta
