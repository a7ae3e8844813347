// libuv's core.c (uv_close) refers to uv__process_close for UV_PROCESS handles. In a static link
// that one reference pulls libuv's process.c.o, and with it uv_spawn, fork(2) and execvp(3), into
// the gatekeeper. The appliance spawns nothing (docs/decisions.md#the-appliance-spawns-nothing) and
// never creates a process handle, so defining the symbol here keeps process.c.o, and every exec and
// fork, out of the binary (tests/meta/appliance_binary_test.cc reads the symbol table). If a libuv
// upgrade needs another symbol from process.c.o, the link fails with a duplicate definition instead
// of silently bringing fork back.
#include <cstdlib>

extern "C" void uv__process_close(void* /*uv_process_t*/) { std::abort(); }
