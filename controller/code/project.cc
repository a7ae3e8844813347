#include "controller/code/project.h"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>

namespace controller::code {
namespace {

std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) return {};
  return buffer;
}

std::string without_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

bool inside(const std::string& path, const std::string& folder) {
  return path == folder ||
         (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
          path[folder.size()] == '/');
}

// The repository's extensions.objectformat as its own config file says (libgit2 would not open
// the repository to tell us); "an unreadable" when the config cannot be read. Read only.
std::string object_format_of(const std::string& folder) {
  git_buf dir = GIT_BUF_INIT;
  std::string format = "an unreadable";
  if (git_repository_discover(&dir, folder.c_str(), 0, nullptr) == 0) {
    git_config* raw = nullptr;
    if (git_config_open_ondisk(&raw, (std::string(dir.ptr, dir.size) + "config").c_str()) == 0) {
      Config config(raw);
      git_buf value = GIT_BUF_INIT;
      if (git_config_get_string_buf(&value, config.get(), "extensions.objectformat") == 0) {
        format.assign(value.ptr, value.size);
        // Shown in a message: keep it to what a format name can be.
        if (format.empty() || format.size() > 32 ||
            format.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
          format = "an unknown";
      }
      git_buf_dispose(&value);
    }
  }
  git_buf_dispose(&dir);
  return format;
}

}  // namespace

Result<Project> open_project(const std::string& repository) {
  git2_init();
  struct stat st {};
  if (stat(repository.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail(Code::kProjectFolderMissing, "code in " + repository + ": not a folder");
  const std::string real = real_path(repository);
  if (real.empty())
    return fail(Code::kProjectFolderMissing, "code in " + repository + ": cannot resolve the path");

  git_repository* raw = nullptr;
  // No GIT_REPOSITORY_OPEN_FROM_ENV: GIT_DIR and friends cannot point us elsewhere.
  const int rc = git_repository_open_ext(&raw, real.c_str(), 0, nullptr);
  Project project;
  project.repo.reset(raw);
  if (rc == GIT_ENOTFOUND)
    return fail(Code::kNotAGitWorkTree, "code in " + repository + ": not inside a git work tree");
  if (rc < 0) {
    const std::string why = git2_message(rc);
    if (why.find("objectformat") != std::string::npos)
      return fail(Code::kRepositoryUnsupported,
                  "code in " + repository +
                      ": refused before anything moves: the repository uses the " +
                      object_format_of(real) + " object format; libgit2 " + LIBGIT2_VERSION +
                      " on this host reads sha1 repositories only (" + why + ")");
    return fail(Code::kNotAGitWorkTree, "code in " + repository + ": open repository: " + why);
  }
  if (git_repository_is_bare(project.repo.get()) != 0 ||
      git_repository_workdir(project.repo.get()) == nullptr)
    return fail(Code::kNotAGitWorkTree,
                "code in " + repository + ": a bare repository has no work tree");
  project.top = without_slash(real_path(git_repository_workdir(project.repo.get())));
  project.git_dir = git_repository_path(project.repo.get());
  project.common_dir = git_repository_commondir(project.repo.get());
  const std::string git_dir_real = without_slash(real_path(project.git_dir));
  if (project.top.empty() || !inside(real, project.top) ||
      (!git_dir_real.empty() && inside(real, git_dir_real)))
    return fail(Code::kNotAGitWorkTree, "code in " + repository + ": not inside a git work tree");
  if (real.size() > project.top.size()) project.prefix = real.substr(project.top.size() + 1);
  return project;
}

}  // namespace controller::code
