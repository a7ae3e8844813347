// How policy/ ends the process when a contract is broken (an impossible state or a caller's bug,
// never input: hostile input becomes a decision word or an error value). A trap instruction, not
// std::abort(): <cstdlib> would put getenv, system and rand within reach of code that must stay
// pure, so the purity meta test refuses it.
#pragma once

namespace policy {

[[noreturn]] inline void contract_broken() noexcept { __builtin_trap(); }

}  // namespace policy
