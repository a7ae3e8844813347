// The one boundary to libgit2 (each C library is wrapped once): owning handles that free
// themselves, one process-wide init, and every return code turned into a Result whose message
// names the operation, the object and libgit2's own sentence. Only controller/code/ includes it.
#pragma once

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "controller/errors.h"

namespace controller::code {

// git_libgit2_init once per process; libgit2 counts, so repeated calls are cheap.
void git2_init();

template <class T, void (*Free)(T*)>
struct Git2Free {
  void operator()(T* p) const noexcept {
    if (p != nullptr) Free(p);
  }
};
template <class T, void (*Free)(T*)>
using Git2Handle = std::unique_ptr<T, Git2Free<T, Free>>;

using Repository = Git2Handle<git_repository, git_repository_free>;
using Index = Git2Handle<git_index, git_index_free>;
using Tree = Git2Handle<git_tree, git_tree_free>;
using TreeEntry = Git2Handle<git_tree_entry, git_tree_entry_free>;
using Commit = Git2Handle<git_commit, git_commit_free>;
using Reference = Git2Handle<git_reference, git_reference_free>;
using Object = Git2Handle<git_object, git_object_free>;
using Config = Git2Handle<git_config, git_config_free>;
using Signature = Git2Handle<git_signature, git_signature_free>;
using Packbuilder = Git2Handle<git_packbuilder, git_packbuilder_free>;
using Revwalk = Git2Handle<git_revwalk, git_revwalk_free>;
using StatusList = Git2Handle<git_status_list, git_status_list_free>;
using Odb = Git2Handle<git_odb, git_odb_free>;

// libgit2's last error sentence (or "error <rc>").
std::string git2_message(int rc);

// rc < 0 → Failure{code, "<operation>: <libgit2 sentence>"}.
Result<void> git2_check(int rc, std::string_view operation, Code code = Code::kCodeInFailed);

std::string oid_hex(const git_oid& oid);

}  // namespace controller::code
