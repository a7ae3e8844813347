#include "controller/code/pack_writer.h"

#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>

namespace controller::code {
namespace {

// The pack's bytes on their way to the sink: gathered into chunks of kPackChunk, each added to
// the SHA-1 of the pack before it leaves, so nothing but one chunk is held.
class ChunkedOut {
 public:
  ChunkedOut(const PackWriter::Sink& sink, EVP_MD_CTX* sha)
      : sink_(sink), sha_(sha), buffer_(kPackChunk) {}

  Result<void> append(const unsigned char* bytes, std::size_t n, const std::string& what) {
    while (n > 0) {
      const std::size_t take = std::min(n, kPackChunk - used_);
      std::memcpy(buffer_.data() + used_, bytes, take);
      used_ += take;
      bytes += take;
      n -= take;
      if (used_ == kPackChunk) {
        if (auto r = flush(what); !r) return r;
      }
    }
    return {};
  }

  // Deflates all of `in` (one object's content) as one zlib stream straight into the chunk.
  Result<void> deflate_all(z_stream& z, const unsigned char* in, std::size_t n,
                           const std::string& what) {
    // zlib counts in uInt: feed at most 1 GiB at a time.
    constexpr std::size_t kFeed = std::size_t{1} << 30;
    for (;;) {
      const std::size_t feed = std::min(n, kFeed);
      z.next_in = const_cast<unsigned char*>(in);  // zlib's API is not const; it only reads
      z.avail_in = static_cast<uInt>(feed);
      const int flush_mode = feed == n ? Z_FINISH : Z_NO_FLUSH;
      for (;;) {
        z.next_out = buffer_.data() + used_;
        z.avail_out = static_cast<uInt>(kPackChunk - used_);
        const int rc = deflate(&z, flush_mode);
        used_ = kPackChunk - z.avail_out;
        if (rc == Z_STREAM_END) return {};
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
          return fail(Code::kCodeInFailed, what + ": deflate: zlib error " + std::to_string(rc));
        }
        if (used_ == kPackChunk) {
          if (auto r = flush(what); !r) return r;
          continue;
        }
        // Room was left, so zlib took all the input it was given: the next feed. Z_FINISH with
        // room left always ends the stream; anything else would loop.
        if (flush_mode == Z_NO_FLUSH) break;
        return fail(Code::kCodeInFailed, what + ": deflate did not finish");
      }
      in += feed;
      n -= feed;
    }
  }

  Result<void> flush(const std::string& what) {
    if (used_ == 0) return {};
    if (EVP_DigestUpdate(sha_, buffer_.data(), used_) != 1) {
      return fail(Code::kCodeInFailed, what + ": SHA-1 of the pack");
    }
    Result<void> r = sink_(std::string_view(reinterpret_cast<const char*>(buffer_.data()), used_));
    used_ = 0;
    return r;
  }

 private:
  const PackWriter::Sink& sink_;
  EVP_MD_CTX* sha_;
  std::vector<unsigned char> buffer_;
  std::size_t used_ = 0;
};

struct ShaFree {
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
struct ZStreamEnd {
  void operator()(z_stream* z) const noexcept { deflateEnd(z); }
};

// The pack's object type numbers (git's OBJ_COMMIT … OBJ_TAG); 0 for anything else.
unsigned pack_type(git_object_t type) {
  switch (type) {
    case GIT_OBJECT_COMMIT:
      return 1;
    case GIT_OBJECT_TREE:
      return 2;
    case GIT_OBJECT_BLOB:
      return 3;
    case GIT_OBJECT_TAG:
      return 4;
    case GIT_OBJECT_ANY:
    case GIT_OBJECT_INVALID:
    case GIT_OBJECT_OFS_DELTA:
    case GIT_OBJECT_REF_DELTA:
      return 0;
  }
  return 0;
}

using OdbObject = Git2Handle<git_odb_object, git_odb_object_free>;

}  // namespace

Result<PackWriter> PackWriter::make(git_repository* repo, std::string what, int level) {
  if (level < 0 || level > 9) {
    return fail(Code::kInvalidArgument,
                what + ": compression level " + std::to_string(level) + " is not 0-9");
  }
  git_odb* raw = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw, repo), what + ": open the object database");
      !r) {
    return r.error();
  }
  return PackWriter(repo, Odb(raw), std::move(what), level);
}

bool PackWriter::contains(const git_oid& id) const { return added_.count(id) != 0; }

Result<void> PackWriter::insert(const git_oid& id) {
  if (contains(id)) return {};
  if (git_odb_exists(odb_.get(), &id) != 1) {
    return fail(Code::kCodeInFailed,
                what_ + ": object " + oid_hex(id) + " is not in the repository");
  }
  add(id);
  return {};
}

Result<void> PackWriter::insert_commit(const git_oid& commit) {
  if (contains(commit)) return {};
  git_commit* raw = nullptr;
  if (auto r = git2_check(git_commit_lookup(&raw, repo_, &commit),
                          what_ + ": look up commit " + oid_hex(commit));
      !r) {
    return r;
  }
  Commit c(raw);
  add(commit);
  return insert_tree(*git_commit_tree_id(c.get()));
}

Result<void> PackWriter::insert_tree(const git_oid& tree) {
  if (contains(tree)) return {};
  git_tree* raw = nullptr;
  if (auto r = git2_check(git_tree_lookup(&raw, repo_, &tree),
                          what_ + ": look up tree " + oid_hex(tree));
      !r) {
    return r;
  }
  Tree t(raw);
  add(tree);
  const std::size_t n = git_tree_entrycount(t.get());
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(t.get(), i);
    const git_oid* id = git_tree_entry_id(e);
    const git_object_t type = git_tree_entry_type(e);
    if (type == GIT_OBJECT_TREE) {
      if (auto r = insert_tree(*id); !r) return r;
    } else if (type == GIT_OBJECT_BLOB) {
      if (auto r = insert(*id); !r) return r;
    }
  }
  return {};
}

Result<void> PackWriter::write(const Sink& sink) const {
  if (order_.size() > std::numeric_limits<std::uint32_t>::max()) {
    return fail(Code::kCodeInFailed,
                what_ + ": " + std::to_string(order_.size()) + " objects do not fit one pack");
  }
  std::unique_ptr<EVP_MD_CTX, ShaFree> sha(EVP_MD_CTX_new());
  if (!sha || EVP_DigestInit_ex(sha.get(), EVP_sha1(), nullptr) != 1) {
    return fail(Code::kCodeInFailed, what_ + ": start the pack's SHA-1");
  }
  z_stream z{};
  if (deflateInit(&z, level_) != Z_OK) return fail(Code::kCodeInFailed, what_ + ": start zlib");
  std::unique_ptr<z_stream, ZStreamEnd> z_end(&z);
  ChunkedOut out(sink, sha.get());

  const auto count = static_cast<std::uint32_t>(order_.size());
  // "PACK", version 2, the object count; all big-endian.
  std::array<unsigned char, 12> header = {'P', 'A', 'C', 'K', 0, 0, 0, 2};
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<unsigned char>(count >> (24 - 8 * i));
  if (auto r = out.append(header.data(), header.size(), what_); !r) return r;

  for (const git_oid& id : order_) {
    git_odb_object* raw = nullptr;
    if (auto r =
            git2_check(git_odb_read(&raw, odb_.get(), &id), what_ + ": read object " + oid_hex(id));
        !r) {
      return r;
    }
    OdbObject object(raw);
    const unsigned type = pack_type(git_odb_object_type(object.get()));
    if (type == 0) {
      return fail(Code::kCodeInFailed, what_ + ": object " + oid_hex(id) + " has no pack type");
    }
    // Type and inflated size: the low four bits of the size beside the type, then seven bits a
    // byte, the high bit saying another byte follows.
    std::size_t size = git_odb_object_size(object.get());
    std::array<unsigned char, 16> head{};
    std::size_t used = 0;
    unsigned char byte = static_cast<unsigned char>((type << 4) | (size & 15));
    size >>= 4;
    while (size != 0) {
      head[used++] = byte | 0x80;
      byte = static_cast<unsigned char>(size & 0x7f);
      size >>= 7;
    }
    head[used++] = byte;
    if (auto r = out.append(head.data(), used, what_); !r) return r;
    if (deflateReset(&z) != Z_OK) return fail(Code::kCodeInFailed, what_ + ": reset zlib");
    if (auto r =
            out.deflate_all(z, static_cast<const unsigned char*>(git_odb_object_data(object.get())),
                            git_odb_object_size(object.get()), what_ + ": object " + oid_hex(id));
        !r) {
      return r;
    }
  }
  if (auto r = out.flush(what_); !r) return r;
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(sha.get(), digest.data(), &length) != 1 || length != GIT_OID_RAWSZ) {
    return fail(Code::kCodeInFailed, what_ + ": finish the pack's SHA-1");
  }
  return sink(std::string_view(reinterpret_cast<const char*>(digest.data()), length));
}

}  // namespace controller::code
