#include "controller/install_paths.h"

#include <unistd.h>

namespace controller {

InstallPaths find_install_paths(const std::string& exe_dir) {
  InstallPaths p;
  if (::access((exe_dir + "/seccomp/space.json").c_str(), R_OK) == 0 ||
      ::access((exe_dir + "/gatekeeper-image.id").c_str(), R_OK) == 0) {
    p.data_dir = exe_dir;
    p.libexec_dir = exe_dir;
    return p;
  }
  const std::string prefix = exe_dir.substr(0, exe_dir.rfind('/'));
  p.data_dir = prefix + "/share/gatekeeper-spaces";
  p.libexec_dir = prefix + "/libexec/gatekeeper-spaces";
  p.installed = true;
  return p;
}

}  // namespace controller
