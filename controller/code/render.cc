#include "controller/code/render.h"

#include "controller/text.h"

namespace controller::code {
namespace {

using nlohmann::json;

json nullable(const std::string& text) { return text.empty() ? json() : json(text); }

json not_travelling_json(const std::vector<NotTravelling>& list) {
  json out = json::array();
  for (const NotTravelling& n : list) out.push_back({{"path", n.path}, {"reason", n.reason}});
  return out;
}

// {count, paths}: every path counted, the first kShownPathsCap listed.
json listed(const std::vector<std::string>& paths) {
  json list = json::array();
  for (std::size_t i = 0; i < paths.size() && i < kShownPathsCap; ++i) list.push_back(paths[i]);
  return json{{"count", paths.size()}, {"paths", list}};
}

}  // namespace

json to_json(const CodeHistoryDone& done) {
  return json{{"id", done.id}, {"history", done.history}};
}

json to_json(const CodeFiles& files) {
  const FileListing& l = files.listing;
  json list = json::array();
  for (const TravellingFile& f : l.files) {
    list.push_back({{"path", f.path}, {"kind", f.kind}, {"size", f.size}});
  }
  return json{{"files", list},
              {"not_travelling", not_travelling_json(l.not_travelling)},
              {"total_bytes", l.total_bytes}};
}

json to_json(const CodeForgotten& forgotten) {
  json out = {{"id", forgotten.id}, {"refs_removed", forgotten.refs_removed}};
  if (forgotten.repository) out["repository"] = *forgotten.repository;
  return out;
}

json to_json(const CodeOutDone& done) {
  const BringOut& out = done.out;
  json changed = json::array();
  for (std::size_t i = 0; i < out.changed.size() && i < kShownPathsCap; ++i) {
    const ChangedPath& c = out.changed[i];
    changed.push_back({{"path", c.path},
                       {"change", change_word(c.kind)},
                       {"old_mode", c.old_mode},
                       {"new_mode", c.new_mode},
                       {"old_bytes", c.old_bytes},
                       {"new_bytes", c.new_bytes}});
  }
  json links = json::array();
  for (std::size_t i = 0; i < out.symlinks.size() && i < kShownPathsCap; ++i) {
    links.push_back({{"path", out.symlinks[i].path},
                     {"target", out.symlinks[i].target},
                     {"leaves_tree", out.symlinks[i].leaves_tree}});
  }
  return json{{"id", done.id},
              {"repository", out.repository},
              {"result", out.result_commit},
              {"result_ref", result_ref_name(done.id)},
              {"start", out.start_commit},
              {"base", out.base_commit},
              {"space_head", out.space_head},
              {"made_commit", out.made_commit},
              {"changed_paths", out.changed.size()},
              {"changed", changed},
              {"changed_bytes", out.changed_bytes},
              {"changed_folders", out.changed_folders},
              {"new_objects", out.new_objects},
              {"new_bytes", out.new_bytes},
              {"transfer_bytes", out.transfer_bytes},
              {"nested_repositories", listed(out.nested_repositories)},
              {"unmerged", listed(out.unmerged)},
              {"symlinks", {{"count", out.symlinks.size()}, {"links", links}}}};
}

json to_json(const Applied& a) {
  if (a.branch) {
    return json{{"id", a.id},
                {"repository", a.repository},
                {"as", "branch"},
                {"branch", a.branch->branch},
                {"commit", a.branch->commit}};
  }
  const ChangesApplied empty;
  const ChangesApplied& c = a.changes ? *a.changes : empty;
  json out = {{"id", a.id},
              {"repository", a.repository},
              {"as", "changes"},
              {"status", c.nothing_to_apply ? "nothing_to_apply" : "applied"},
              {"result", c.result},
              {"from", c.from},
              {"applied_paths", c.applied_paths},
              {"merged_paths", c.merged_paths},
              {"nested_repositories", c.nested_repositories},
              {"conflicted", c.conflicted},
              {"recovered", nullable(c.recovered)},
              {"remembered", c.remembered}};
  if (a.removed) out["removed"] = *a.removed;
  if (a.remove_error) out["remove_error"] = *a.remove_error;
  return out;
}

json to_json(const ApplyStateShown& shown) {
  const ApplyState& s = shown.state;
  return json{{"id", shown.id},
              {"repository", shown.repository},
              {"changes_route", s.route_open ? "open" : "closed"},
              {"closed_at", nullable(s.closed_at)},
              {"result", nullable(s.result)},
              {"last_applied", nullable(s.last_applied)},
              {"next_base", nullable(s.base)},
              {"next_base_reason", nullable(s.base_reason)},
              {"new_paths", s.new_paths},
              {"new_path_count", s.new_path_count},
              {"new_paths_over_limit", s.new_paths_over_limit},
              {"undecided", nullable(s.undecided)},
              {"interrupted_apply", nullable(s.interrupted)}};
}

std::string to_text(const CodeHistoryDone& done) { return member_lines(to_json(done)); }
std::string to_text(const CodeForgotten& forgotten) { return member_lines(to_json(forgotten)); }
std::string to_text(const Applied& applied) { return member_lines(to_json(applied)); }
std::string to_text(const ApplyStateShown& shown) { return member_lines(to_json(shown)); }

std::string to_text(const CodeFiles& files) {
  const FileListing& l = files.listing;
  std::string out;
  for (const TravellingFile& f : l.files) {
    out +=
        terminal_safe(f.path) + "  " + terminal_safe(f.kind) + "  " + std::to_string(f.size) + "\n";
  }
  for (const NotTravelling& n : l.not_travelling) {
    out += terminal_safe(n.path) + "  does not travel: " + terminal_safe(n.reason) + "\n";
  }
  return out + std::to_string(l.files.size()) + " files, " + std::to_string(l.total_bytes) +
         " bytes travel\n";
}

std::string to_text(const CodeOutDone& done) {
  const BringOut& o = done.out;
  std::string out = "result " + terminal_safe(o.result_commit) + " in " +
                    terminal_safe(result_ref_name(done.id)) + "\n";
  for (std::size_t i = 0; i < o.changed.size() && i < kShownPathsCap; ++i) {
    const ChangedPath& c = o.changed[i];
    out += "  " + terminal_safe(change_word(c.kind)) + "  " + terminal_safe(c.path) + "  " +
           std::to_string(c.new_bytes) + " bytes\n";
  }
  if (o.changed.size() > kShownPathsCap) out += "  ...\n";
  out += std::to_string(o.changed.size()) + " changed paths, " + std::to_string(o.changed_bytes) +
         " bytes (both sides), " + std::to_string(o.new_objects) + " new objects (" +
         std::to_string(o.new_bytes) + " bytes)\n";
  const auto paths = [&out](const char* heading, const std::vector<std::string>& list) {
    if (list.empty()) return;
    out += std::string(heading) + std::to_string(list.size()) + "\n";
    for (std::size_t i = 0; i < list.size() && i < kShownPathsCap; ++i) {
      out += "  " + terminal_safe(list[i]) + "\n";
    }
  };
  paths("nested repositories (arrive as gitlinks only): ", o.nested_repositories);
  paths("unmerged in the space (conflict markers may be in the files): ", o.unmerged);
  for (std::size_t i = 0; i < o.symlinks.size() && i < kShownPathsCap; ++i) {
    const SymlinkOut& l = o.symlinks[i];
    out += "  link " + terminal_safe(l.path) + " -> " + terminal_safe(l.target) +
           (l.leaves_tree ? "  (points outside the project)" : "") + "\n";
  }
  return out;
}

}  // namespace controller::code
