// Where spacectl finds what it pins without any flag: next to itself in a build tree
// (build/<preset>/bin/: the image pins, seccomp/, escape-suite), or in the installed layout
// relative to its own executable (<prefix>/bin/spacectl with <prefix>/share/gatekeeper-spaces/ for
// pins, profiles and image archives, <prefix>/libexec/gatekeeper-spaces/ for escape-suite). The
// prefix is never compiled in, so a relocated tree (a package, a chroot, /opt) works as it is.
#pragma once

#include <string>

namespace controller {

struct InstallPaths {
  std::string data_dir;     // gatekeeper-image.id, space-image.id, seccomp/, images/
  std::string libexec_dir;  // escape-suite
  bool installed = false;   // the installed layout, not a build tree
};

// exe_dir: the directory of the running spacectl. A build tree is recognised by its pins or
// seccomp/ next to the executable; otherwise the installed layout is assumed.
InstallPaths find_install_paths(const std::string& exe_dir);

}  // namespace controller
