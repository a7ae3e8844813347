// Hostile and damaged records (records.h, record_fields.h): a record edited by hand, cut short by a
// full disk or written by another tool is unreadable with a message naming the record and the
// member, never defaults, never acted on; and the file itself is left exactly as it was.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/record_fields.h"
#include "controller/records.h"

namespace controller {
namespace {

using nlohmann::json;

const std::string kId = "0123456789ab";

json valid() {
  return json::parse(R"({
    "version": 1, "mode": "allowlist", "domains": ["api.example.com", "example.org"],
    "grants": [{"id": "model", "upstream": "https://api.example.com/v1", "header": "authorization", "secret": true,
                "unsafe_private_upstream": false}],
    "code": {"repository": "/home/u/project", "space_path": "/spaces/0123456789ab/project",
             "project_path": "/spaces/0123456789ab/project/sub", "base": "0123456789abcdef0123456789abcdef01234567",
             "history": "sent"},
    "out": {"result": "1123456789abcdef0123456789abcdef01234567", "start": "0123456789abcdef0123456789abcdef01234567",
            "space_head": "2123456789abcdef0123456789abcdef01234567", "changed_paths": 2, "changed_bytes": 10},
    "creation": {"state": "failed", "step": "creating_space", "started": "2026-01-02T03:04:05Z",
                 "failure_code": "command_failed", "failure_message": "docker create: exit 125"}
  })");
}

// The message of a refused record, or "" when it was read.
std::string refusal(const std::string& text) {
  Result<SpaceRecord> r = parse_record(text, "/state/spaces/" + kId + ".json");
  if (r) return "";
  EXPECT_EQ(r.error().code, Code::kRecordUnreadable);
  EXPECT_NE(r.error().message.find("record /state/spaces/" + kId + ".json: "), std::string::npos)
      << r.error().message;
  return r.error().message;
}

std::string refusal(const json& doc) { return refusal(doc.dump()); }

TEST(RecordReaderTest, AValidRecordIsRead) {
  Result<SpaceRecord> r = parse_record(valid().dump(), "x");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->grants.size(), 1u);
  EXPECT_EQ(r->code.history, "sent");
}

TEST(RecordReaderTest, AMemberNamedTwiceIsRefusedNotTheLastOneWins) {
  std::string text = valid().dump();
  text.insert(1, R"("mode":"open",)");
  EXPECT_NE(refusal(text).find("named twice"), std::string::npos);
  json grant_twice = valid();
  std::string inner = grant_twice.dump();
  const std::size_t at = inner.find(R"("id":"model")");
  ASSERT_NE(at, std::string::npos);
  inner.insert(at, R"("id":"other",)");
  EXPECT_NE(refusal(inner).find("named twice"), std::string::npos);
}

TEST(RecordReaderTest, NestingAtTheLimitIsReadAndOneDeeperIsRefused) {
  // A grant's members sit at depth 3; an array inside one reaches the limit's next level.
  json doc = valid();
  doc["grants"][0]["id"] = json::array({json::array({"x"})});
  EXPECT_NE(refusal(doc).find("nested deeper than"), std::string::npos);
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  EXPECT_NE(refusal("{\"version\":" + deep + "}").find("nested deeper than"), std::string::npos);
}

TEST(RecordReaderTest, ATruncatedRecordIsRefused) {
  const std::string text = valid().dump();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, text.size() / 2, text.size() - 1})
    EXPECT_NE(refusal(text.substr(0, n)).find("not a JSON object"), std::string::npos) << n;
}

TEST(RecordReaderTest, DomainsTheGatekeeperWouldRefuseAreRefused) {
  for (const char* name : {"*.example.com", "10.0.0.1", "exa mple.com", "example.com\n", "",
                           "-bad.example.com", "Example.COM", "example.com."}) {
    json doc = valid();
    doc["domains"] = {name};
    EXPECT_NE(refusal(doc).find("domains"), std::string::npos) << name;
  }
  json doc = valid();
  doc["domains"] = {"example.org", "example.org"};
  EXPECT_NE(refusal(doc).find("a name twice"), std::string::npos);
}

TEST(RecordReaderTest, GrantsNoGrantAddCouldHaveWrittenAreRefused) {
  auto with = [](const char* member, json value) {
    json doc = valid();
    doc["grants"][0][member] = std::move(value);
    return doc;
  };
  EXPECT_NE(refusal(with("id", "a/b")), "");
  EXPECT_NE(refusal(with("id", std::string(65, 'a'))), "");
  EXPECT_NE(refusal(with("upstream", "ftp://example.com/")), "");
  EXPECT_NE(refusal(with("upstream", "not a url")), "");
  EXPECT_NE(refusal(with("upstream", "HTTPS://API.example.com/v1")), "");
  EXPECT_NE(refusal(with("header", "x header")), "");
  EXPECT_NE(refusal(with("header", "content-length")), "");  // framing: never injectable
  EXPECT_NE(refusal(with("secret", false)).find("exactly when a secret"), std::string::npos);
  EXPECT_NE(refusal(with("header", "")).find("exactly when a secret"), std::string::npos);
  json twice = valid();
  twice["grants"].push_back(twice["grants"][0]);
  EXPECT_NE(refusal(twice).find("listed twice"), std::string::npos);
  // Just inside: an id of 64 characters, a grant without a secret.
  json ok = with("id", std::string(64, 'a'));
  ok["grants"].push_back(
      {{"id", "open"}, {"upstream", "https://example.org/"}, {"header", ""}, {"secret", false}});
  EXPECT_EQ(refusal(ok), "");
}

TEST(RecordReaderTest, CodeAndOutMembersThatAreNoPathsOrObjectIdsAreRefused) {
  auto with = [](const char* part, const char* member, json value) {
    json doc = valid();
    doc[part][member] = std::move(value);
    return doc;
  };
  EXPECT_NE(refusal(with("code", "repository", "relative/path")).find("code.repository"),
            std::string::npos);
  EXPECT_NE(refusal(with("code", "repository", "/home/u/pro\nject")).find("code.repository"),
            std::string::npos);
  EXPECT_NE(refusal(with("code", "repository", "/" + std::string(kMaxRecordPathBytes, 'a')))
                .find("code.repository"),
            std::string::npos);
  EXPECT_EQ(refusal(with("code", "repository", "/" + std::string(kMaxRecordPathBytes - 1, 'a'))),
            "");
  EXPECT_NE(refusal(with("code", "space_path", "/etc")).find("code.space_path"), std::string::npos);
  EXPECT_NE(refusal(with("code", "project_path", "/spaces/other")).find("code.project_path"),
            std::string::npos);
  EXPECT_NE(refusal(with("code", "base", "HEAD")).find("code.base"), std::string::npos);
  EXPECT_NE(refusal(with("code", "base", std::string(39, 'a'))).find("code.base"),
            std::string::npos);
  EXPECT_EQ(refusal(with("code", "base", std::string(64, 'a'))), "");
  EXPECT_NE(refusal(with("code", "history", "everything")).find("code.history"), std::string::npos);
  EXPECT_NE(refusal(with("out", "result", "--upload-pack=x")).find("out.result"),
            std::string::npos);
  EXPECT_NE(refusal(with("out", "start", "")).find("out.result"), std::string::npos);
}

TEST(RecordReaderTest, CreationMembersThatAreNoWordsOrTimesAreRefused) {
  auto with = [](const char* member, json value) {
    json doc = valid();
    doc["creation"][member] = std::move(value);
    return doc;
  };
  EXPECT_NE(refusal(with("step", "Creating Space")).find("creation.step"), std::string::npos);
  EXPECT_NE(refusal(with("step", std::string(kMaxRecordWordBytes + 1, 'a'))).find("creation.step"),
            std::string::npos);
  EXPECT_EQ(refusal(with("step", std::string(kMaxRecordWordBytes, 'a'))), "");
  EXPECT_NE(refusal(with("started", "yesterday")).find("creation.started"), std::string::npos);
  EXPECT_NE(refusal(with("failure_code", "\x1b[31m")).find("creation.failure_code"),
            std::string::npos);
  EXPECT_NE(refusal(with("failure_message", std::string(kMaxRecordMessageBytes + 1, 'm')))
                .find("creation.failure_message"),
            std::string::npos);
  EXPECT_EQ(refusal(with("failure_message", std::string(kMaxRecordMessageBytes, 'm'))), "");
}

// Regression: records took at most 200 domains while the gatekeeper takes 500, so a network set of
// 201 to 500 names succeeded and left a record no later command could read.
TEST(RecordReaderTest, ARecordHoldsEveryDomainTheGatekeeperAcceptsAndNotOneMore) {
  json doc = valid();
  doc["domains"] = json::array();
  for (std::size_t i = 0; i < policy::kMaxAllowlistDomains; ++i)
    doc["domains"].push_back("n" + std::to_string(i) + ".example.com");
  EXPECT_EQ(refusal(doc), "");
  doc["domains"].push_back("one-more.example.com");
  EXPECT_NE(refusal(doc).find("domains is not a list of at most 500 names"), std::string::npos);
}

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-records-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string path() const { return dir_ + "/spaces/" + kId + ".json"; }
  void put(const std::string& text) {
    std::filesystem::create_directories(dir_ + "/spaces", ec_);
    chmod((dir_ + "/spaces").c_str(), 0700);
    chmod(dir_.c_str(), 0700);
    std::ofstream(path(), std::ios::binary | std::ios::trunc) << text;
    chmod(path().c_str(), 0600);
  }
  std::string bytes() const {
    std::ifstream in(path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string dir_;
  std::error_code ec_;
};

TEST_F(RecordFileTest, ARecordAtTheSizeCapIsReadAndOneByteMoreIsRefused) {
  std::string text = valid().dump();
  text += std::string(kMaxRecordBytes - text.size(), ' ');
  put(text);
  EXPECT_TRUE(read_record(dir_, kId));
  put(text + " ");
  Result<SpaceRecord> r = read_record(dir_, kId);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kRecordUnreadable);
  EXPECT_NE(r.error().message.find("read " + path() + ": larger than"), std::string::npos)
      << r.error().message;
}

TEST_F(RecordFileTest, ALongFailureMessageIsCutOnWriteSoTheRecordStaysReadable) {
  SpaceRecord record;
  record.creation = {
      "failed", "creating_space", "2026-01-02T03:04:05Z", "command_failed",
      std::string(kMaxRecordMessageBytes * 2, '\xff')};  // invalid bytes grow when replaced
  ASSERT_TRUE(write_record(dir_, kId, record));
  Result<SpaceRecord> back = read_record(dir_, kId);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_LE(back->creation.failure_message.size(), kMaxRecordMessageBytes);
  EXPECT_FALSE(back->creation.failure_message.empty());
}

TEST_F(RecordFileTest, EveryRecordSpacectlWritesReadsBackTheSame) {
  Result<SpaceRecord> r = parse_record(valid().dump(), "x");
  ASSERT_TRUE(r);
  ASSERT_TRUE(write_record(dir_, kId, *r));
  Result<SpaceRecord> back = read_record(dir_, kId);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->domains, r->domains);
  EXPECT_EQ(back->grants.size(), 1u);
  EXPECT_EQ(back->code.base, r->code.base);
  EXPECT_EQ(back->out.result, r->out.result);
  // A record made by begin_create (repository, no space path yet) reads back too.
  SpaceRecord preparing;
  preparing.creation = {"preparing", "preparing", now_utc_iso(), "", ""};
  preparing.code.repository = "/home/u/project";
  ASSERT_TRUE(write_record(dir_, kId, preparing));
  EXPECT_TRUE(read_record(dir_, kId));
}

TEST_F(RecordFileTest, ARefusedRecordIsLeftByteForByte) {
  json doc = valid();
  doc["domains"] = {"*.example.com"};
  put(doc.dump());
  const std::string before = bytes();
  Result<SpaceRecord> r = read_record(dir_, kId);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kRecordUnreadable);
  EXPECT_EQ(bytes(), before);
  Result<bool> exists = record_exists(dir_, kId);
  ASSERT_TRUE(exists);
  EXPECT_TRUE(*exists);
}

}  // namespace
}  // namespace controller
