// Signals of spacectl. At start every disposition is reset and the mask emptied (a parent that
// ignored SIGCHLD would make waitpid fail; one that ignored SIGINT would make spacectl
// unstoppable). SIGINT, SIGTERM and SIGHUP then only record a stop request: run_process ends the
// child it is waiting for, every step returns kInterrupted, and the caller's rollback (create's
// removal, escape-test's teardown) runs to the end with fresh processes.
#pragma once

namespace controller {

// Every catchable signal to SIG_DFL, SIGPIPE ignored (a child that exits before reading its
// stdin must not kill us), an empty signal mask; then the stop handlers.
void reset_signals_and_handle_stops();

// Number of stop requests so far (SIGINT, SIGTERM, SIGHUP); 0 when none came.
unsigned stop_requests();
// The last stop signal's number (0 when none).
int last_stop_signal();
// Whether the last stop signal was sent by a process (kill) rather than the terminal driver.
bool last_stop_was_sent();

}  // namespace controller
