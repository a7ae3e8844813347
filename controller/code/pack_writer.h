// The packs code in and code history send: git's pack format (version 2) with every object whole,
// written as a stream. No delta search: libgit2's packbuilder (1.5) can neither skip it nor reuse
// the deltas already in the user's packs, and over a local exec pipe the search cost more host
// time than its smaller pack saved (tests/bench/README.md "bench_code_in"). Objects are read with
// libgit2's object database (so a packed, delta-compressed object is inflated and resolved there),
// deflated here with zlib and checksummed with SHA-1, the only object format libgit2 1.5 and code
// in support (a sha256 repository is refused before anything is collected).
//
// Memory: the id list, one object at a time (libgit2 reads an object whole) and one 64 KiB chunk;
// the pack itself is never held.
#pragma once

#include <git2.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "controller/code/git2.h"
#include "controller/errors.h"

namespace controller::code {

inline constexpr std::size_t kPackChunk =
    64u << 10;  // bytes handed to the sink at once (the last may be shorter)

class PackWriter {
 public:
  // Receives the pack's bytes in order, in chunks of at most kPackChunk; an error ends the write.
  using Sink = std::function<Result<void>(std::string_view bytes)>;

  // `repo` outlives the writer. `what` names the operation in every message. `level` is zlib's
  // (0-9).
  static Result<PackWriter> make(git_repository* repo, std::string what, int level);

  // Adds one object (commit, tree, blob or tag) once; a second insert of an id is nothing. An id
  // the repository does not hold fails here, before any byte is written.
  Result<void> insert(const git_oid& id);
  // The commit, its tree and every tree and blob that tree reaches. A tree already in the pack is
  // not entered again (everything under it is in already); gitlinks (a submodule's commit) are
  // not objects of this repository and never travel.
  Result<void> insert_commit(const git_oid& commit);
  Result<void> insert_tree(const git_oid& tree);
  [[nodiscard]] bool contains(const git_oid& id) const;
  [[nodiscard]] std::size_t count() const { return order_.size(); }

  // The whole pack: header, each object in insertion order, the SHA-1 trailer.
  Result<void> write(const Sink& sink) const;

 private:
  struct OidHash {
    std::size_t operator()(const git_oid& id) const noexcept {
      std::size_t h = 0;
      std::memcpy(&h, id.id, sizeof h);
      return h;
    }
  };
  struct OidEqual {
    bool operator()(const git_oid& a, const git_oid& b) const noexcept {
      return git_oid_equal(&a, &b) != 0;
    }
  };

  PackWriter(git_repository* repo, Odb odb, std::string what, int level)
      : repo_(repo), odb_(std::move(odb)), what_(std::move(what)), level_(level) {}
  void add(const git_oid& id) {
    if (added_.insert(id).second) order_.push_back(id);
  }

  git_repository* repo_;
  Odb odb_;
  std::string what_;
  int level_;
  std::vector<git_oid> order_;
  std::unordered_set<git_oid, OidHash, OidEqual> added_;
};

}  // namespace controller::code
