// `code files`: what a snapshot of the work tree would carry, read without writing anything (no
// object, no index): the index's entries still present in the work tree, plus untracked files no
// ignore rule covers; nested repositories, submodules and ignored paths are listed as not
// travelling, each with its reason.
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "controller/code/git2.h"
#include "controller/code/project.h"
#include "controller/code/snapshot.h"

namespace controller::code {
namespace {

bool exists_dir(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Result<FileListing> list_travelling_files(const std::string& repository) {
  Result<Project> opened = open_project(repository);
  if (!opened) return opened.error();
  git_repository* repo = opened->repo.get();
  const std::string& top = opened->top;
  FileListing listing;
  std::map<std::string, TravellingFile> files;

  auto add_file = [&](const std::string& path) {
    struct stat st {};
    if (lstat((top + "/" + path).c_str(), &st) != 0) return;  // deleted in the work tree: does not travel
    if (S_ISLNK(st.st_mode)) files[path] = {path, "symlink", static_cast<std::uint64_t>(st.st_size)};
    else if (S_ISREG(st.st_mode)) files[path] = {path, "file", static_cast<std::uint64_t>(st.st_size)};
  };

  git_index* index_raw = nullptr;
  if (git_index_open(&index_raw, (opened->git_dir + "index").c_str()) < 0)
    return fail(Code::kRepositoryUnsupported, "code files " + top + ": read the index: " + git2_message(-1));
  Index index(index_raw);
  for (std::size_t i = 0; i < git_index_entrycount(index.get()); ++i) {
    const git_index_entry* e = git_index_get_byindex(index.get(), i);
    if (e == nullptr || git_index_entry_stage(e) != 0) continue;
    if (e->mode == GIT_FILEMODE_COMMIT) listing.not_travelling.push_back({std::string(e->path) + "/", "submodule"});
    else add_file(e->path);
  }

  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS | GIT_STATUS_OPT_INCLUDE_IGNORED;
  git_status_list* list_raw = nullptr;
  if (auto r = git2_check(git_status_list_new(&list_raw, repo, &options), "code files " + top + ": read the work tree"); !r)
    return r.error();
  StatusList list(list_raw);
  for (std::size_t i = 0; i < git_status_list_entrycount(list.get()); ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    if (e == nullptr || e->index_to_workdir == nullptr) continue;
    const std::string path = e->index_to_workdir->new_file.path;
    const bool folder = !path.empty() && path.back() == '/';
    const bool nested = folder && exists_dir(top + "/" + path + ".git");
    if ((e->status & GIT_STATUS_WT_NEW) != 0) {
      if (folder) listing.not_travelling.push_back({path, "repository"});
      else add_file(path);
    } else if ((e->status & GIT_STATUS_IGNORED) != 0) {
      listing.not_travelling.push_back({path, nested ? "repository" : "ignored"});
    }
  }
  for (auto& [path, f] : files) {
    listing.total_bytes += f.size;
    listing.files.push_back(std::move(f));
  }
  std::sort(listing.not_travelling.begin(), listing.not_travelling.end(),
            [](const NotTravelling& a, const NotTravelling& b) { return a.path < b.path; });
  return listing;
}

}  // namespace controller::code
