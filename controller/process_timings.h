// Whether `--timings` is on (set_process_timings in process.h): a child that run_process does not
// run (code in's streamed receive-pack) prints its own timing line when it ends.
#pragma once

namespace controller {

bool process_timings_on();

}  // namespace controller
