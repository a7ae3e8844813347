// The place contract every place must pass (docs/architecture.md#the-place-contract): check,
// create, list, exec, exec-argv, connect, stop, start, remove and verify, seen only through Place.
#include "controller/place_contract_test.h"

#include "controller/docker_place.h"
#include "controller/spec.h"
#include "tests/support/environment.h"

namespace controller::contract {
namespace {

constexpr const char* kUnknownId = "0000deadbeef";

class Scope {
 public:
  explicit Scope(const PlaceUnderTest& p) : p_(p), owner_("contract" + random_hex(6)), place_(p.make(owner_)) {}
  ~Scope() {
    if (p_.leftovers) {
      EXPECT_EQ(p_.leftovers(owner_), "") << p_.name << " left something for owner " << owner_;
    }
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  Place& place() { return *place_; }

 private:
  const PlaceUnderTest& p_;
  std::string owner_;
  std::unique_ptr<Place> place_;
};

const SpaceSummary* listed(const std::vector<SpaceSummary>& all, const std::string& id) {
  for (const SpaceSummary& s : all) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

#define REQUIRE_PLACE()                                                            \
  const std::string why_missing = GetParam().missing ? GetParam().missing() : ""; \
  GK_REQUIRE(why_missing.empty(), why_missing)

TEST_P(PlaceContractTest, CheckAnswersWithTheEngineItFound) {
  REQUIRE_PLACE();
  Scope s(GetParam());
  Result<CheckReport> r = s.place().check();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->engine_version.empty());
  EXPECT_FALSE(r->findings.empty());
  // A usable place proved both sides: the isolated probe did not reach the host, and the control
  // probe on a normal network did (without it, "isolated" could mean "the probe never ran").
  EXPECT_TRUE(r->seccomp) << GetParam().name;
  EXPECT_TRUE(r->isolation_proved) << GetParam().name;
  EXPECT_TRUE(r->positive_control) << GetParam().name;
}

TEST_P(PlaceContractTest, ListOfAFreshOwnerIsEmptyNotAnError) {
  REQUIRE_PLACE();
  Scope s(GetParam());
  Result<std::vector<SpaceSummary>> all = s.place().list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(all->empty());
}

TEST_P(PlaceContractTest, AnUnknownSpaceIsSpaceNotFound) {
  REQUIRE_PLACE();
  Scope s(GetParam());
  Place& p = s.place();
  const std::string id = kUnknownId;
  Result<ExecOutput> e = p.exec(id, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(30));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Code::kSpaceNotFound);
  Result<std::vector<std::string>> a = p.exec_argv(id);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, Code::kSpaceNotFound);
  for (const bool terminal : {false, true}) {
    Result<std::vector<std::string>> i = p.interactive_exec_argv(id, terminal);
    ASSERT_FALSE(i.ok());
    EXPECT_EQ(i.error().code, Code::kSpaceNotFound);
  }
  Result<std::vector<std::string>> c = p.connect(id, 8080);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::kSpaceNotFound);
  for (Result<void> r : {p.stop(id), p.start(id)}) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Code::kSpaceNotFound);
  }
  Result<std::vector<Difference>> v = p.verify(id);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::kSpaceNotFound);
  // Nothing to remove is an answer of its own, not a silent success.
  Result<void> removed = p.remove(id);
  ASSERT_FALSE(removed.ok()) << "remove of an id nothing carries";
  EXPECT_EQ(removed.error().code, Code::kSpaceNotFound);
}

TEST_P(PlaceContractTest, AMalformedIdIsRefusedBeforeTheRuntimeIsAsked) {
  REQUIRE_PLACE();
  Scope s(GetParam());
  Place& p = s.place();
  for (const std::string id : {"", "../../etc", "0123456789AB", "0123456789abc", "0123456789a"}) {
    Result<ExecOutput> e = p.exec(id, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(30));
    ASSERT_FALSE(e.ok()) << id;
    EXPECT_EQ(e.error().code, Code::kInvalidArgument) << id;
    Result<void> r = p.remove(id);
    ASSERT_FALSE(r.ok()) << id;
    EXPECT_EQ(r.error().code, Code::kInvalidArgument) << id;
  }
}

TEST_P(PlaceContractTest, CreateVerifyExecStopStartRemove) {
  REQUIRE_PLACE();
  Scope s(GetParam());
  Place& p = s.place();
  CreateRequest request;
  request.name = "contract";
  request.memory_bytes = 256ll << 20;
  Result<SpaceSummary> made = p.create(request);
  ASSERT_TRUE(made.ok()) << made.error().message;
  const std::string id = made->id;
  EXPECT_TRUE(is_space_id(id));
  EXPECT_EQ(made->space_state, "running");
  EXPECT_EQ(made->window_url.rfind(std::string(kWindowBase), 0), 0u);

  Result<std::vector<SpaceSummary>> all = p.list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  const SpaceSummary* found = listed(*all, id);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->space_state, "running");
  EXPECT_EQ(found->gatekeeper_state, "running");
  EXPECT_TRUE(found->missing.empty());
  EXPECT_EQ(found->name, "contract");

  Result<std::vector<Difference>> v = p.verify(id);
  ASSERT_TRUE(v.ok()) << v.error().message;
  for (const Difference& d : *v) ADD_FAILURE() << d.check << ": " << d.message;

  // stdin carries bytes into the space (and secrets, elsewhere); a non-zero exit is an answer.
  Result<ExecOutput> e = p.exec(id, ExecTarget::kSpace, {"cat"}, "through stdin\n", std::chrono::seconds(30));
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(e->out, "through stdin\n");
  e = p.exec(id, ExecTarget::kSpace, {"false"}, {}, std::chrono::seconds(30));
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->exit_code, 1);
  e = p.exec(id, ExecTarget::kGatekeeper, {std::string(kGatekeeperBinary), "control", "GET", "/health"}, {},
             std::chrono::seconds(30));
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->exit_code, 0) << e->err;
  EXPECT_NE(e->out.find("\"ready\":true"), std::string::npos) << e->out;
  Result<std::vector<std::string>> argv = p.exec_argv(id);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_FALSE(argv->empty());
  // `space exec`: without a terminal exactly exec_argv; with one, the place adds its one flag.
  Result<std::vector<std::string>> plain = p.interactive_exec_argv(id, false);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(*plain, *argv);
  Result<std::vector<std::string>> tty = p.interactive_exec_argv(id, true);
  ASSERT_TRUE(tty.ok()) << tty.error().message;
  EXPECT_EQ(tty->size(), argv->size() + 1);
  EXPECT_NE(*tty, *argv);
  Result<std::vector<std::string>> stream = p.connect(id, 4096);
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  ASSERT_FALSE(stream->empty());
  EXPECT_EQ(stream->back(), "4096");

  ASSERT_TRUE(p.stop(id).ok());
  all = p.list();
  ASSERT_TRUE(all.ok());
  found = listed(*all, id);
  ASSERT_NE(found, nullptr) << "a stopped space is still listed";
  EXPECT_NE(found->space_state, "running");
  EXPECT_NE(found->gatekeeper_state, "running");
  e = p.exec(id, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(30));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Code::kSpaceNotRunning);

  Result<void> started = p.start(id);
  ASSERT_TRUE(started.ok()) << started.error().message;
  all = p.list();
  ASSERT_TRUE(all.ok());
  found = listed(*all, id);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->space_state, "running");
  EXPECT_EQ(found->gatekeeper_state, "running");

  Result<void> removed = p.remove(id);
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  all = p.list();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(listed(*all, id), nullptr);
  v = p.verify(id);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::kSpaceNotFound);
}

}  // namespace
}  // namespace controller::contract
