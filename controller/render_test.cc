// The one renderer (render.h): the document of each result as `--json` and serve answer it, and
// the CLI's text, which shows every value through terminal_safe.
#include "controller/render.h"

#include <gtest/gtest.h>

#include <set>

#include "controller/manager.h"
#include "controller/text.h"

namespace controller {
namespace {

SpaceView running_view() {
  SpaceView v;
  v.summary.id = "0123456789ab";
  v.summary.name = "demo\x1b[31m";
  v.summary.created = "2026-01-02T03:04:05Z";
  v.summary.space_state = "running";
  v.summary.gatekeeper_state = "running";
  v.summary.window_url = "http://gatekeeper:8080/k";
  v.state = SpaceState::kNeedsAccess;
  v.needs_access = std::vector<std::string>{"model"};
  v.busy = false;
  GrantRecord g;
  g.id = "model";
  g.source.kind = grants::SourceKind::kHelper;
  g.expires_at = "2026-01-02T04:00:00Z";
  v.grants = std::vector<GrantRecord>{g};
  return v;
}

SpaceView failed_view() {
  SpaceView v;
  v.summary.id = "ba9876543210";
  v.summary.space_state = "missing";
  v.summary.gatekeeper_state = "missing";
  v.state = SpaceState::kFailed;
  v.step = "creating_networks";
  v.failure = CreationFailure{"place_unreachable", "docker: down"};
  v.busy = false;
  return v;
}

TEST(RenderTest, AListEntryIsTheDocumentOfTheApi) {
  SpaceList list;
  list.spaces = {running_view(), failed_view()};
  EXPECT_EQ(json_text(to_json(list)),
            "{\"spaces\":[{\"busy\":false,\"created\":\"2026-01-02T03:04:05Z\",\"gatekeeper\":"
            "\"running\",\"grants\":[{\"expires_at\":\"2026-01-02T04:00:00Z\",\"id\":\"model\","
            "\"source\":\"helper\"}],\"id\":\"0123456789ab\",\"missing\":[],\"name\":"
            "\"demo\\u001b[31m\",\"needs_access\":[\"model\"],\"space\":\"running\",\"state\":"
            "\"needs-access\",\"window\":\"http://gatekeeper:8080/k\"},{\"busy\":false,\"created\":"
            "\"\",\"failure\":{\"code\":\"place_unreachable\",\"message\":\"docker: down\"},"
            "\"gatekeeper\":\"missing\",\"id\":\"ba9876543210\",\"missing\":[],\"name\":\"\","
            "\"space\":\"missing\",\"state\":\"failed\",\"step\":\"creating_networks\",\"window\":"
            "\"\"}]}");
}

TEST(RenderTest, ListTextShowsStateNeedsAndGrantsWithoutControlCharacters) {
  SpaceList list;
  list.spaces = {running_view(), failed_view()};
  const std::string text = to_text(list);
  EXPECT_EQ(text,
            "0123456789ab  needs-access  demo\\x1b[31m  (needs access: [\"model\"])  grants: model "
            "(helper, expires 2026-01-02T04:00:00Z)\n"
            "ba9876543210  failed  \n");
  EXPECT_EQ(to_text(SpaceList{}), "no spaces\n");
}

TEST(RenderTest, AnExitedSpaceCarriesItsExitCodeAndRefusedLabelsAreNamed) {
  SpaceView v = failed_view();
  v.summary.space_state = "exited";
  v.summary.space_exit_code = kIdleExitCode;
  v.summary.refused_labels = {"space.name"};
  v.state = SpaceState::kStoppedIdle;
  v.step.reset();
  v.failure.reset();
  v.busy.reset();
  const nlohmann::json doc = to_json(v);
  EXPECT_EQ(doc["exit_code"], kIdleExitCode);
  EXPECT_EQ(doc["state"], "stopped-idle");
  EXPECT_EQ(doc["refused_labels"], nlohmann::json::array({"space.name"}));
  EXPECT_FALSE(doc.contains("busy"));
  EXPECT_FALSE(doc.contains("step"));
  SpaceList list;
  list.spaces = {v};
  EXPECT_EQ(to_text(list),
            "ba9876543210  stopped-idle    (labels not shown, not as spacectl writes them: "
            "[\"space.name\"])\n");
}

TEST(RenderTest, ShowWithoutARecordHasAnUnknownNetworkNeverOpen) {
  SpaceShown shown;
  shown.space = failed_view();
  shown.space.step.reset();
  shown.space.failure.reset();
  shown.space.busy.reset();
  nlohmann::json doc = to_json(shown);
  EXPECT_TRUE(doc["network"].is_null());
  EXPECT_FALSE(doc.contains("grants"));
  shown.network = SpaceShown::Network{"allowlist", {"example.com"}};
  GrantRecord g;
  g.id = "model";
  g.upstream = "https://api.example.com/v1";
  g.header = "x-api-key";
  g.has_secret = true;
  g.source.kind = grants::SourceKind::kEnv;
  g.source.env = "API_KEY";
  shown.grants = {g};
  doc = to_json(shown);
  EXPECT_EQ(json_text(doc["network"]), "{\"domains\":[\"example.com\"],\"mode\":\"allowlist\"}");
  EXPECT_EQ(json_text(doc["grants"]),
            "[{\"env\":\"API_KEY\",\"expires_at\":null,\"header\":\"x-api-key\",\"id\":\"model\","
            "\"secret\":true,\"source\":\"env\",\"upstream\":\"https://api.example.com/v1\"}]");
}

TEST(RenderTest, RemoveStopAndCreateDocuments) {
  EXPECT_EQ(json_text(to_json(SpaceRemoved{"0123456789ab", std::nullopt, std::nullopt})),
            "{\"id\":\"0123456789ab\",\"removed\":true}");
  EXPECT_EQ(
      json_text(to_json(SpaceRemoved{"0123456789ab", std::vector<std::string>{}, std::nullopt})),
      "{\"id\":\"0123456789ab\",\"refs_removed\":[],\"removed\":true}");
  EXPECT_EQ(json_text(to_json(SpaceStopped{"0123456789ab", SpaceState::kStoppedIdle})),
            "{\"id\":\"0123456789ab\",\"state\":\"stopped-idle\"}");
  EXPECT_EQ(to_text(SpaceStopped{"0123456789ab", SpaceState::kStopped}),
            "id: 0123456789ab\nstate: stopped\n");
  SpaceCreated created;
  created.space = failed_view();
  created.space.state = SpaceState::kRunning;
  created.space.step.reset();
  created.space.failure.reset();
  created.space.busy.reset();
  created.token_written = false;
  created.token_failure = "no dd in the image";
  const nlohmann::json doc = to_json(created);
  EXPECT_EQ(doc["state"], "running");
  EXPECT_EQ(doc["token_written"], false);
  EXPECT_EQ(doc["token_failure"], "no dd in the image");
  EXPECT_FALSE(doc.contains("code"));
}

TEST(RenderTest, StartNamesTheGrantsSaidAgainAndTheOnesThatNeedAccess) {
  SpaceStarted started{"0123456789ab", SpaceState::kNeedsAccess, true, std::nullopt};
  GrantsRestored grants;
  grants.restored = {"openai"};
  grants.needs_access = {"typed", "tokens"};
  grants.failures = {GrantFailure{"tokens", Failure{Code::kSecretHelperFailed, "helper: exit 1"}}};
  started.grants = grants;
  EXPECT_EQ(json_text(to_json(started)),
            "{\"grant_failures\":[{\"code\":\"secret_helper_failed\",\"grant\":\"tokens\","
            "\"message\":\"helper: exit 1\"}],\"grants_restored\":[\"openai\"],\"id\":"
            "\"0123456789ab\",\"needs_access\":[\"typed\",\"tokens\"],\"network_restored\":true,"
            "\"state\":\"needs-access\"}");
  // Without a readable record nothing was said again: no grant members at all.
  EXPECT_EQ(
      json_text(to_json(SpaceStarted{"0123456789ab", SpaceState::kRunning, false, std::nullopt})),
      "{\"id\":\"0123456789ab\",\"network_restored\":false,\"state\":\"running\"}");
}

TEST(RenderTest, CheckVerifyAndPlaceListHaveTheirOwnTextLayout) {
  PlaceChecked checked;
  checked.findings = {"seccomp: yes", "isolation \x07proved"};
  EXPECT_EQ(to_text(checked),
            "- seccomp: yes\n- isolation \\x07proved\nThis place cannot run isolated spaces (see "
            "above).\n");
  checked.usable = true;
  checked.warnings = std::vector<std::string>{};
  EXPECT_EQ(json_text(to_json(checked)),
            "{\"engine\":\"\",\"findings\":[\"seccomp: yes\",\"isolation \\u0007proved\"],"
            "\"host_isolation\":false,\"os_arch\":\"\",\"place\":\"\",\"positive_control\":false,"
            "\"rootless\":false,\"seccomp\":false,\"usable\":true,\"warnings\":[]}");
  EXPECT_EQ(to_text(SpaceVerified{"0123456789ab", {}}),
            "verify: no differences from the hardening spec\n");
  EXPECT_EQ(to_text(SpaceVerified{"0123456789ab", {Difference{"cap_drop", "not ALL"}}}),
            "cap_drop: not ALL\n");
  PlaceList places;
  PlaceEntry p;
  p.place = "docker";
  p.state = "usable";
  p.restricts_network = true;
  p.proved = "run live";
  p.detail = "engine 28";
  p.engine = "28.0.0";
  p.rootless = false;
  places.places = {p};
  EXPECT_EQ(to_text(places), "docker  usable  can restrict the network  engine 28\n    run live\n");
  EXPECT_EQ(json_text(to_json(places)),
            "{\"places\":[{\"detail\":\"engine 28\",\"engine\":\"28.0.0\",\"place\":\"docker\","
            "\"proved\":\"run live\",\"restricts_network\":true,\"rootless\":false,\"state\":"
            "\"usable\"}]}");
}

TEST(RenderTest, GrantAddRefreshAndProvidersDocuments) {
  GrantRecord g;
  g.id = "openai";
  g.upstream = "https://api.openai.com/v1";
  g.header = "authorization";
  g.provider = "openai";
  g.source.kind = grants::SourceKind::kEnv;
  g.source.env = "OPENAI_API_KEY";
  GrantAdded added{"0123456789ab", g, "http://gatekeeper:8080/k/model/openai"};
  EXPECT_EQ(json_text(to_json(added)),
            "{\"expires_at\":null,\"grant\":\"openai\",\"header\":\"authorization\",\"id\":"
            "\"0123456789ab\",\"provider\":\"openai\",\"source\":\"env\",\"upstream\":"
            "\"https://api.openai.com/v1\",\"window\":\"http://gatekeeper:8080/k/model/openai\"}");
  g.provider.clear();
  g.expires_at = "2026-01-02T04:00:00Z";
  added = GrantAdded{"0123456789ab", g, ""};  // the place did not list the space: no window
  EXPECT_EQ(to_text(added),
            "expires_at: 2026-01-02T04:00:00Z\ngrant: openai\nheader: authorization\nid: "
            "0123456789ab\nsource: env\nupstream: https://api.openai.com/v1\nwindow: null\n");
  GrantsRefreshed refreshed{
      "0123456789ab",
      {g},
      {GrantFailure{"tokens", Failure{Code::kSecretHelperFailed, "helper: exit 1"}}}};
  EXPECT_EQ(json_text(to_json(refreshed)),
            "{\"failed\":[{\"code\":\"secret_helper_failed\",\"grant\":\"tokens\",\"message\":"
            "\"helper: exit 1\"}],\"id\":\"0123456789ab\",\"refreshed\":[{\"expires_at\":"
            "\"2026-01-02T04:00:00Z\",\"id\":\"openai\",\"source\":\"env\"}]}");
  GrantProviders providers;
  providers.presets = {grants::Preset{"p", "https://p.example/v1", "x-api-key", "p's SDK"}};
  providers.refused = {grants::Refused{"q", "signs requests"}};
  EXPECT_EQ(json_text(to_json(providers)),
            "{\"providers\":[{\"header\":\"x-api-key\",\"provider\":\"p\",\"source\":\"p's SDK\","
            "\"upstream\":\"https://p.example/v1\"}],\"refused\":[{\"provider\":\"q\",\"reason\":"
            "\"signs requests\"}]}");
}

TEST(RenderTest, PolicyCarriesTheRecordsGrantSourcesOnlyWhenTheRecordWasRead) {
  GatekeeperPolicy policy{"allowlist", {"example.com"}, {"model"}, std::nullopt};
  EXPECT_EQ(json_text(to_json(policy)),
            "{\"domains\":[\"example.com\"],\"grants\":[\"model\"],\"mode\":\"allowlist\"}");
  GrantRecord g;
  g.id = "model";
  g.source.kind = grants::SourceKind::kStdin;
  policy.grant_sources = std::vector<GrantRecord>{g};
  EXPECT_EQ(json_text(to_json(policy)),
            "{\"domains\":[\"example.com\"],\"grant_sources\":[{\"expires_at\":null,\"id\":"
            "\"model\",\"source\":\"stdin\"}],\"grants\":[\"model\"],\"mode\":\"allowlist\"}");
  GatekeeperJournal journal;
  journal.records = {JournalEntry{"2026-11-30T12:00:00.000Z", "corridor", "evil\x1b[2J.example",
                                  443, "allow", std::nullopt, std::nullopt}};
  journal.since = "2026-11-30T11:00:00.000Z";
  // Text shows what came from the space without its control characters.
  EXPECT_EQ(to_text(journal).find('\x1b'), std::string::npos) << to_text(journal);
}

TEST(RenderTest, SweepPushVersionAndCodeInDocuments) {
  SweepDone swept;
  swept.removed = {SweptSpace{"0123456789ab", "no_record"}};
  swept.left = {SweptSpace{"ba9876543210", "busy"}};
  swept.records_removed = {"0123456789ab"};
  swept.subnets_freed = {FreedSubnets{"ba9876543210", "10.0.0.0/29 10.0.0.8/29"}};
  swept.failures = {SweepFailure{"cafecafecafe", Failure{Code::kCommandFailed, "docker rm: 1"}}};
  EXPECT_EQ(json_text(to_json(swept)),
            "{\"failures\":[{\"code\":\"command_failed\",\"id\":\"cafecafecafe\",\"message\":"
            "\"docker rm: 1\"}],\"left\":[{\"id\":\"ba9876543210\",\"reason\":\"busy\"}],"
            "\"records_removed\":[\"0123456789ab\"],\"removed\":[{\"id\":\"0123456789ab\","
            "\"reason\":\"no_record\"}],\"subnets_freed\":[{\"id\":\"ba9876543210\",\"subnets\":"
            "\"10.0.0.0/29 10.0.0.8/29\"}],\"temp_dirs_removed\":[]}");
  ImagesPushed pushed;
  pushed.images = {PushedImage{"gatekeeper", "sha256:1", "r/gatekeeper@sha256:2", "f", ""},
                   PushedImage{"gatekeeper-test", "", "", "", "no pin"}};
  EXPECT_EQ(json_text(to_json(pushed)),
            "{\"images\":[{\"id\":\"sha256:1\",\"name\":\"gatekeeper\",\"record\":\"f\","
            "\"reference\":\"r/gatekeeper@sha256:2\"},{\"name\":\"gatekeeper-test\",\"skipped\":"
            "\"no pin\"}]}");
  EXPECT_EQ(json_text(to_json(VersionShown{"1.2.3", "", "sha256:g", "sha256:s"})),
            "{\"gatekeeper_image\":\"sha256:g\",\"revision\":null,\"space_image\":\"sha256:s\","
            "\"version\":\"1.2.3\"}");
  CodeBrought brought;
  brought.id = "0123456789ab";
  brought.repository = "/home/u/p";
  brought.name_copied = true;
  brought.not_travelling = {PathLeftOut{"vendor/", "repository"}};
  EXPECT_EQ(json_text(to_json(brought)),
            "{\"base\":\"\",\"branch\":null,\"history\":\"pending\",\"id\":\"0123456789ab\","
            "\"identity_copied\":{\"email\":false,\"name\":true},\"not_travelling\":[{\"path\":"
            "\"vendor/\",\"reason\":\"repository\"}],\"object_format\":\"\",\"project_path\":"
            "\"\",\"repository\":\"/home/u/p\",\"space_git\":\"\",\"space_path\":\"\",\"staged\":"
            "\"\",\"start\":\"\"}");
  SpaceCreated created;
  created.space = failed_view();
  created.code = brought;
  EXPECT_EQ(to_json(created)["code"], to_json(brought));
}

TEST(RenderTest, EveryStateHasItsOwnWord) {
  std::set<std::string_view> words;
  for (const SpaceState s : kAllSpaceStates) words.insert(state_word(s));
  EXPECT_EQ(words, (std::set<std::string_view>{"running", "stopped", "stopped-idle", "unreachable",
                                               "needs-access", "preparing", "failed"}));
}

}  // namespace
}  // namespace controller
