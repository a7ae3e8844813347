// Code out, step 2: the quarantine and our own upload-pack client feeding libgit2's indexer.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>

#include "controller/code/exec_stream.h"
#include "controller/code/out_steps.h"
#include "controller/code/receive_pack.h"
#include "policy/number.h"

namespace controller::code {
namespace {

using Clock = std::chrono::steady_clock;
using Indexer = Git2Handle<git_indexer, git_indexer_free>;

using receive_pack::kPktMax;
constexpr std::size_t kAdvertisedMax = 10000;  // advertisement lines we read before refusing
constexpr std::size_t kChunk = 1u << 16;
constexpr std::size_t kNegotiationMax = 64;  // ACK/NAK lines before the pack
constexpr std::size_t kStderrAllowance = 1u << 20;  // beyond the pack, on the stream's own cap

std::string pkt(const std::string& payload) {
  static const char* hex = "0123456789abcdef";
  const std::size_t n = payload.size() + 4;
  std::string out;
  for (int shift : {12, 8, 4, 0}) out += hex[(n >> shift) & 15];
  return out + payload;
}

bool is_hex40(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string shown(std::string_view text) {
  std::string t(text.substr(0, 2000));
  for (char& c : t) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return t;
}

Failure refuse(ExecStream& s, Code code, const std::string& why) {
  s.kill_group();
  std::string message = "code out: fetch into the quarantine: " + why;
  if (const std::string tail = s.stderr_tail(); !tail.empty()) message += "; the space printed: " + tail;
  return fail(code, message);
}

// The stream's own failures (deadline, cap, early end) are code-in words; here they are code out's.
Failure as_out(Failure f) {
  if (f.code == Code::kCodeTransferFailed) f.code = Code::kCodeOutFailed;
  return f;
}

// One pkt-line; nullopt is a flush. Strict: four lowercase hex digits, nothing between 0001 and
// 0003, nothing above git's maximum.
Result<std::optional<std::string>> read_pkt(ExecStream& s) {
  Result<std::string> head = s.read_exact(4);
  if (!head) return as_out(head.error());
  const std::optional<std::size_t> length = receive_pack::pkt_length(*head);
  if (!length) {
    return refuse(s, Code::kCodeOutFailed,
                  "the space sent a malformed pkt-line length " + shown(*head));
  }
  const std::size_t n = *length;
  if (n == 0) return std::optional<std::string>();
  if (n < 4 || n > kPktMax) return refuse(s, Code::kCodeOutFailed, "the space sent a pkt-line of length " + std::to_string(n));
  Result<std::string> body = s.read_exact(n - 4);
  if (!body) return as_out(body.error());
  return std::optional<std::string>(std::move(*body));
}

struct Progress {
  std::uint64_t cap = 0;
  bool over = false;
};

int on_progress(const git_indexer_progress* stats, void* payload) {
  auto* p = static_cast<Progress*>(payload);
  if (stats->received_bytes > p->cap) {
    p->over = true;
    return -1;  // ends git_indexer_append with an error
  }
  return 0;
}

std::string random_hex(std::size_t n) {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += hex[rd() & 15];
  return out;
}

bool write_text(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return close(fd) == 0 && ok;
}

}  // namespace

bool remove_tree(const std::string& path) {
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return unlink(path.c_str()) == 0;
  bool ok = true;
  if (DIR* dir = opendir(path.c_str()); dir != nullptr) {
    std::vector<std::string> names;
    while (const dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
    for (const std::string& name : names) ok = remove_tree(path + "/" + name) && ok;
  }
  return rmdir(path.c_str()) == 0 && ok;
}

Result<Quarantine> Quarantine::make(const std::string& work_dir, const std::string& space_id, const std::string& user_objects) {
  const std::string parent = work_dir + "/quarantine";
  if (mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail(Code::kCodeOutFailed, "code out: make " + parent + ": " + std::strerror(errno));
  }
  struct stat st{};
  if (lstat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 022) != 0) {
    return fail(Code::kCodeOutFailed, "code out: " + parent + " is not a private folder of this user");
  }
  // The owner's pid is in the name, so a later sweep can tell a dead owner's leftovers.
  Quarantine q(parent + "/" + space_id + "-" + std::to_string(getpid()) + "-" + random_hex(8) + ".git");
  if (mkdir(q.path_.c_str(), 0700) != 0) {
    const std::string why = std::strerror(errno);
    q.path_.clear();
    return fail(Code::kCodeOutFailed, "code out: make the quarantine: " + why);
  }
  for (const char* sub : {"/objects", "/objects/pack", "/objects/info", "/refs", "/refs/heads", "/refs/tags"}) {
    if (mkdir((q.path_ + sub).c_str(), 0700) != 0) return fail(Code::kCodeOutFailed, "code out: make the quarantine " + q.path_ + sub);
  }
  if (!write_text(q.path_ + "/HEAD", "ref: refs/heads/main\n") ||
      !write_text(q.path_ + "/config", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n") ||
      !write_text(q.path_ + "/objects/info/alternates", user_objects + "\n")) {
    return fail(Code::kCodeOutFailed, "code out: write the quarantine's files in " + q.path_);
  }
  if (auto r = q.open(); !r) return r.error();
  return q;
}

Result<void> Quarantine::open() {
  repo_.reset();
  git_repository* raw = nullptr;
  if (auto r = git2_check(git_repository_open_ext(
                              &raw, path_.c_str(),
                              GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, nullptr),
                          "code out: open the quarantine " + path_, Code::kCodeOutFailed);
      !r) {
    return r;
  }
  repo_.reset(raw);
  return {};
}

Quarantine::~Quarantine() {
  repo_.reset();
  if (!path_.empty()) remove_tree(path_);
}

std::vector<std::string> sweep_quarantines(const std::string& work_dir) {
  std::vector<std::string> removed;
  const std::string parent = work_dir + "/quarantine";
  DIR* dir = opendir(parent.c_str());
  if (dir == nullptr) return removed;
  std::vector<std::string> names;
  while (const dirent* e = readdir(dir)) names.emplace_back(e->d_name);
  closedir(dir);
  for (const std::string& name : names) {
    // <12 hex>-<pid>-<8 hex>.git, and only when that pid is gone.
    if (name.size() < 12 + 1 + 1 + 1 + 8 + 4 || name.compare(name.size() - 4, 4, ".git") != 0 || name[12] != '-') continue;
    const std::size_t dash = name.find('-', 13);
    if (dash == std::string::npos || dash == 13 || dash - 13 > 10) continue;
    const std::string pid_text = name.substr(13, dash - 13);
    const std::optional<long> parsed = policy::parse_number<long>(pid_text);
    if (!parsed) continue;
    const long pid = *parsed;
    if (pid <= 1 || pid == getpid() || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (remove_tree(parent + "/" + name)) removed.push_back(name);
  }
  return removed;
}

Result<FetchStats> fetch_into(const Quarantine& quarantine, const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                              const std::string& want, const std::vector<std::string>& haves, const OutLimits& limits) {
  const Clock::time_point deadline = Clock::now() + timeout;
  Result<std::unique_ptr<ExecStream>> started =
      ExecStream::start(argv, deadline, "code out: fetch into the quarantine", limits.max_transfer_bytes + kStderrAllowance);
  if (!started) return as_out(started.error());
  ExecStream& s = **started;

  // The advertisement: shown never, used only for its capabilities. The refs it names are not
  // what we fetch; we want the one id the snapshot reported.
  std::string caps;
  for (std::size_t line = 0;; ++line) {
    if (line > kAdvertisedMax) {
      return refuse(s, Code::kCodeOutFailed, "the space advertised more than " + std::to_string(kAdvertisedMax) + " lines");
    }
    Result<std::optional<std::string>> p = read_pkt(s);
    if (!p) return p.error();
    if (!*p) {
      if (line == 0) return refuse(s, Code::kCodeOutFailed, "the space advertised nothing (an empty repository?)");
      break;
    }
    std::string l = **p;
    if (l.rfind("ERR ", 0) == 0) return refuse(s, Code::kCodeOutFailed, "the space's upload-pack said: " + shown(l));
    if (line == 0) {
      const std::size_t nul = l.find('\0');
      if (nul == std::string::npos || l.size() < 42 ||
          !is_hex40(std::string_view(l).substr(0, 40)) || l[40] != ' ') {
        return refuse(s, Code::kCodeOutFailed, "the space's first line is not a ref advertisement: " + shown(l));
      }
      caps = " " + l.substr(nul + 1);
      if (caps.back() == '\n') caps.pop_back();
      caps += " ";
    } else if (!((l.rfind("shallow ", 0) == 0 && l.size() >= 48 && is_hex40(std::string_view(l).substr(8, 40))) ||
                 (l.size() > 41 && is_hex40(std::string_view(l).substr(0, 40)) && l[40] == ' '))) {
      return refuse(s, Code::kCodeOutFailed, "the space sent an advertisement line of unknown shape: " + shown(l));
    }
  }
  std::string want_caps;
  for (const char* c : {"ofs-delta", "no-progress"}) {
    if (caps.find(std::string(" ") + c + " ") != std::string::npos) want_caps += std::string(" ") + c;
  }
  std::string request = pkt("want " + want + want_caps + " agent=spacectl\n") + "0000";
  for (const std::string& h : haves) request += pkt("have " + h + "\n");
  request += pkt("done\n");
  if (auto r = s.write_all(request); !r) return as_out(r.error());

  // The negotiation's answer: "ACK <id>" or "NAK" lines (how many depends on the server's
  // version), then the pack, whose first four bytes "PACK" are no pkt-line length.
  std::string magic;
  for (std::size_t line = 0;; ++line) {
    if (line > kNegotiationMax) return refuse(s, Code::kCodeOutFailed, "the space's negotiation did not end");
    Result<std::string> head = s.read_exact(4);
    if (!head) return as_out(head.error());
    if (*head == "PACK") {
      magic = *head;
      break;
    }
    const std::optional<std::size_t> length = receive_pack::pkt_length(*head);
    if (!length) {
      return refuse(s, Code::kCodeOutFailed,
                    "the space sent neither a pkt-line nor a pack: " + shown(*head));
    }
    const std::size_t n = *length;
    if (n < 4 || n > kPktMax) return refuse(s, Code::kCodeOutFailed, "the space answered the negotiation with a pkt-line of length " + std::to_string(n));
    Result<std::string> body = s.read_exact(n - 4);
    if (!body) return as_out(body.error());
    const std::string& a = *body;
    if (a.rfind("ERR ", 0) == 0) return refuse(s, Code::kCodeOutFailed, "the space's upload-pack said: " + shown(a));
    if (!(a == "NAK\n" || (a.size() == 45 && a.rfind("ACK ", 0) == 0 &&
                           is_hex40(std::string_view(a).substr(4, 40)) && a.back() == '\n'))) {
      return refuse(s, Code::kCodeOutFailed, "the space answered the negotiation with " + shown(a));
    }
  }

  // The pack header: "PACK", version 2 or 3, object count; the count is checked before any object.
  Result<std::string> rest = s.read_exact(8);
  if (!rest) return as_out(rest.error());
  const std::string header_bytes = magic + *rest;
  const std::string* header = &header_bytes;
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>((*header)[at + i]);
    return v;
  };
  if (be32(4) != 2 && be32(4) != 3) return refuse(s, Code::kCodeOutFailed, "pack version " + std::to_string(be32(4)));
  FetchStats stats;
  stats.objects = be32(8);
  if (stats.objects > limits.max_entries) {
    return refuse(s, Code::kResultTooManyChanges, "the pack announces " + std::to_string(stats.objects) + " objects; the cap is " +
                                                      std::to_string(limits.max_entries));
  }

  git_indexer* raw = nullptr;
  Progress progress{limits.max_transfer_bytes, false};
  git_indexer_options opts = GIT_INDEXER_OPTIONS_INIT;
  opts.progress_cb = on_progress;
  opts.progress_cb_payload = &progress;
  git_odb* odb = nullptr;
  if (auto r = git2_check(git_repository_odb(&odb, quarantine.repo()), "code out: the quarantine's objects", Code::kCodeOutFailed); !r) {
    s.kill_group();
    return r.error();
  }
  Odb odb_handle(odb);
  const std::string pack_dir = quarantine.path() + "/objects/pack";
  if (auto r = git2_check(git_indexer_new(&raw, pack_dir.c_str(), 0600, odb, &opts), "code out: start the indexer", Code::kCodeOutFailed);
      !r) {
    s.kill_group();
    return r.error();
  }
  Indexer indexer(raw);
  git_indexer_progress ip{};
  auto too_large = [&] {
    return refuse(s, Code::kResultTransferTooLarge,
                  "the pack grew past " + std::to_string(limits.max_transfer_bytes) + " bytes while it arrived (the transfer was killed)");
  };
  auto append = [&](const std::string& bytes) -> Result<void> {
    stats.bytes += bytes.size();
    if (stats.bytes > limits.max_transfer_bytes) return too_large();
    if (git_indexer_append(indexer.get(), bytes.data(), bytes.size(), &ip) < 0) {
      if (progress.over) return too_large();
      return refuse(s, Code::kCodeOutFailed, "the pack is not one git reads: " + git2_message(-1));
    }
    return {};
  };
  if (auto r = append(*header); !r) return r.error();
  for (;;) {
    Result<std::string> chunk = s.read_some(kChunk);
    if (!chunk) return as_out(chunk.error());
    if (chunk->empty()) break;
    if (auto r = append(*chunk); !r) return r.error();
  }
  if (git_indexer_commit(indexer.get(), &ip) < 0) {
    if (progress.over) return too_large();
    return refuse(s, Code::kCodeOutFailed, "the pack is incomplete or not one git reads: " + git2_message(-1));
  }
  Result<int> status = s.finish();
  if (!status) return as_out(status.error());
  if (*status != 0) return refuse(s, Code::kCodeOutFailed, "upload-pack exited " + std::to_string(*status));
  return stats;
}

}  // namespace controller::code
