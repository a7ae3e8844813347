// The code commands' output (render.h): each result's document (the one `--json` prints and
// serve answers) and the CLI's text, picked by the result's type.
#include "controller/code/render.h"

#include <gtest/gtest.h>

#include "controller/text.h"

namespace controller::code {
namespace {

TEST(CodeRenderTest, FilesListEachPathItsKindAndSizeThenWhatDoesNotTravel) {
  CodeFiles files;
  files.listing.files = {TravellingFile{"a.txt", "file", 12},
                         TravellingFile{"b\x1b[2J", "symlink", 5}};
  files.listing.not_travelling = {NotTravelling{"vendor/", "repository"}};
  files.listing.total_bytes = 17;
  EXPECT_EQ(to_text(files),
            "a.txt  file  12\nb\\x1b[2J  symlink  5\nvendor/  does not travel: repository\n"
            "2 files, 17 bytes travel\n");
  EXPECT_EQ(json_text(to_json(files)),
            "{\"files\":[{\"kind\":\"file\",\"path\":\"a.txt\",\"size\":12},{\"kind\":\"symlink\","
            "\"path\":\"b\\u001b[2J\",\"size\":5}],\"not_travelling\":[{\"path\":\"vendor/\","
            "\"reason\":\"repository\"}],\"total_bytes\":17}");
}

TEST(CodeRenderTest, CodeOutShowsTheFirstHundredChangesThenTheTotalsNestedUnmergedAndLinks) {
  CodeOutDone done;
  done.id = "0123456789ab";
  done.out.result_commit = "abc";
  for (int i = 0; i <= 100; ++i) {
    done.out.changed.push_back(
        ChangedPath{"f" + std::to_string(i), ChangeKind::kAdded, 0, 0100644, 0, 3});
  }
  done.out.changed_bytes = 303;
  done.out.new_objects = 102;
  done.out.new_bytes = 400;
  done.out.nested_repositories = {"sub"};
  done.out.symlinks = {SymlinkOut{"l", "/etc/passwd", true}};
  const std::string text = to_text(done);
  EXPECT_EQ(text.rfind("result abc in refs/openchamber/spaces/0123456789ab/result\n  added  f0  3 "
                       "bytes\n",
                       0),
            0u)
      << text;
  EXPECT_EQ(text.find("f100"), std::string::npos) << "past the cap";
  EXPECT_NE(text.find("  added  f99  3 bytes\n  ...\n101 changed paths, 303 bytes (both sides), "
                      "102 new objects (400 bytes)\nnested repositories (arrive as gitlinks "
                      "only): 1\n  sub\n  link l -> /etc/passwd  (points outside the project)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("unmerged"), std::string::npos) << "none unmerged, none listed";
  const nlohmann::json doc = to_json(done);
  EXPECT_EQ(doc["changed_paths"], 101);
  EXPECT_EQ(doc["changed"].size(), kShownPathsCap);
  EXPECT_EQ(doc["changed"][0], nlohmann::json({{"path", "f0"},
                                               {"change", "added"},
                                               {"old_mode", 0},
                                               {"new_mode", 0100644},
                                               {"old_bytes", 0},
                                               {"new_bytes", 3}}));
  EXPECT_EQ(doc["result_ref"], "refs/openchamber/spaces/0123456789ab/result");
  EXPECT_EQ(doc["nested_repositories"], nlohmann::json({{"count", 1}, {"paths", {"sub"}}}));
  EXPECT_EQ(doc["unmerged"], nlohmann::json({{"count", 0}, {"paths", nlohmann::json::array()}}));
  EXPECT_EQ(doc["symlinks"]["links"][0]["leaves_tree"], true);
  EXPECT_EQ(doc.size(), 18u);
}

TEST(CodeRenderTest, ApplyAsBranchOrAsChangesAndTheStateDocuments) {
  Applied branch{"0123456789ab", "/r",         BranchApplied{"refs/heads/w", "c1"},
                 std::nullopt,   std::nullopt, std::nullopt};
  EXPECT_EQ(json_text(to_json(branch)),
            "{\"as\":\"branch\",\"branch\":\"refs/heads/w\",\"commit\":\"c1\",\"id\":"
            "\"0123456789ab\",\"repository\":\"/r\"}");
  ChangesApplied c;
  c.result = "r1";
  c.from = "s1";
  c.applied_paths = {"a"};
  c.remembered = true;
  Applied changes{"0123456789ab", "/r", std::nullopt, c, false, std::string("busy")};
  EXPECT_EQ(json_text(to_json(changes)),
            "{\"applied_paths\":[\"a\"],\"as\":\"changes\",\"conflicted\":[],\"from\":\"s1\","
            "\"id\":\"0123456789ab\",\"merged_paths\":[],\"nested_repositories\":[],"
            "\"recovered\":null,\"remembered\":true,\"remove_error\":\"busy\",\"removed\":false,"
            "\"repository\":\"/r\",\"result\":\"r1\",\"status\":\"applied\"}");
  EXPECT_EQ(to_text(branch),
            "as: branch\nbranch: refs/heads/w\ncommit: c1\nid: 0123456789ab\nrepository: /r\n");
  ApplyStateShown shown;
  shown.id = "0123456789ab";
  shown.repository = "/r";
  shown.state.route_open = false;
  shown.state.closed_at = "r0";
  EXPECT_EQ(json_text(to_json(shown)),
            "{\"changes_route\":\"closed\",\"closed_at\":\"r0\",\"id\":\"0123456789ab\","
            "\"interrupted_apply\":null,\"last_applied\":null,\"new_path_count\":0,\"new_paths\":"
            "[],\"new_paths_over_limit\":false,\"next_base\":null,\"next_base_reason\":null,"
            "\"repository\":\"/r\",\"result\":null,\"undecided\":null}");
  EXPECT_EQ(json_text(to_json(CodeForgotten{"0123456789ab", std::nullopt, {}})),
            "{\"id\":\"0123456789ab\",\"refs_removed\":[]}");
  EXPECT_EQ(json_text(to_json(CodeHistoryDone{"0123456789ab", "sent"})),
            "{\"history\":\"sent\",\"id\":\"0123456789ab\"}");
}

}  // namespace
}  // namespace controller::code
