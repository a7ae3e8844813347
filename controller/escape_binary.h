// The suite binary in a space, as `spacectl escape-test` handles it (escape_run.cc): copied in
// by root where the space user cannot replace it, listed on the host, its reports checked, and
// the space user's attempts to forge one refused. Also the window upstream it answers as.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "controller/docker_cli.h"
#include "controller/place.h"
#include "escape-suite/case.h"

namespace controller {

inline constexpr std::chrono::milliseconds kCopyTimeout{120000};

// Tries each spelling until one is found in the image: images link different busybox applets (the
// default image has busybox but no dd link); 126 and 127 mean "not found here". as_root needs
// the place's PrivilegedExec.
Result<ExecOutput> exec_spelled(Place& place, const std::string& id, bool as_root,
                                const std::vector<std::vector<std::string>>& spellings,
                                const std::string& stdin_bytes);
// What the space printed, cut and made printable for a message.
std::string inside_text(const std::string& text);
// dd (or tee) with the bytes on stdin: `docker exec -i`, no shell redirection, no mount.
Result<void> copy_into(Place& place, const std::string& id, const std::string& path,
                       const std::string& bytes, bool executable, bool as_root);
// The suite binary goes into a directory uid 0 makes in the space's /tmp: the file and the
// directory belong to root (mode 0755), and /tmp is sticky, so the space user can neither write,
// replace, rename nor remove the program whose report the host trusts. mkdir fails when the name
// already exists, so nothing the space prepared is adopted. Returns the binary's path.
Result<std::string> place_binary(Place& place, const std::string& id, const std::string& run,
                                 const std::string& bytes);
// The window's upstream: the suite binary in the upstream container's /tmp, run per connection
// on port 80 by busybox nc as `escape-suite answer-upstream` (escape-suite/upstream_answer.h): a
// 200 with the marker only for a request carrying the fake key (by digest; the key itself is never
// in an argv), else 401. The window control needs that 200. "" or what failed.
std::string start_window_upstream(const DockerCli& cli, const std::string& container,
                                  const std::string& binary, const std::string& key_sha256);
// sha256 of the placed binary, read inside by root; empty when it cannot be read.
std::string placed_sha256(Place& place, const std::string& id, const std::string& path);
// The ids `escape-suite --list` names for this selection, from the same bytes run on the host (a
// private copy, so what is listed is what went in).
Result<std::vector<std::string>> host_listed_ids(const std::string& bytes,
                                                 const std::vector<std::string>& only);
// host.forged-report-refused: from inside, the space user tries to replace the placed binary
// (write, remove, open up its directory) and the placed bytes must be unchanged; and reports
// printed inside the space (too few cases, a duplicate, an unknown id, an id carrying a newline and
// a terminal escape, a wrong-typed field) must each be refused by the same checks as the real one.
escape::Outcome forged_report_refused(Place& place, const std::string& id, const std::string& path,
                                      const std::string& bytes,
                                      const std::vector<std::string>& expected);

}  // namespace controller
