// Images by digest, live (LABEL docker; skip locally without an engine, docker-registry or skopeo,
// fail under CI=true): Debian's docker-registry on a loopback port (its own config and storage in
// a temporary folder, plain HTTP on 127.0.0.1, which Docker treats as an insecure registry by
// default), `spacectl image push` into it, the pinned images deleted from the engine, and a
// create that must pull them by the recorded digest. A registry that serves another image under
// the same tag changes nothing (the pull is by digest); a record naming that other image is
// refused with image_mismatch.
//
// The test deletes the pinned images from the engine, so it runs only under the Docker tests'
// lock (ctest runs docker tests one at a time; helpers hold /tmp/gk-docker.lock) and always loads
// the archives again before it ends, whatever happened.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/image_ensure.h"
#include "controller/process.h"
#include "controller/testing/podman_pins.h"
#include "tests/support/environment.h"
#include "tests/support/loopback.h"

extern char** environ;

namespace controller {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";
const std::vector<std::string> kPins = {"gatekeeper-image", "gatekeeper-test-image", "space-image"};

bool exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

ProcessOutcome run(std::vector<std::string> argv, std::chrono::seconds timeout = std::chrono::seconds(300)) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.timeout = timeout;
  return run_process(r);
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool program_exists(const std::string& name) { return run({"sh", "-c", "command -v " + name}).succeeded(); }

// GET /v2/ on 127.0.0.1:port answers 200: the registry is up.
bool registry_answers(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string request = "GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[64] = {};
      const ssize_t n = read(fd, buffer, sizeof buffer - 1);
      ok = n > 12 && std::string(buffer, static_cast<std::size_t>(n)).find(" 200 ") != std::string::npos;
    }
  }
  close(fd);
  return ok;
}

class ImageRegistryLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    owner_ = "imgreg" + random_hex(6);
    char tmpl[] = "/tmp/spacectl-registry-XXXXXX";
    dir_ = mkdtemp(tmpl);
    state_ = dir_ + "/state";
    pins_ = dir_ + "/pins";
    fs::create_directories(state_);
    fs::create_directories(pins_);
    fs::create_directories(dir_ + "/storage");
  }

  void TearDown() override {
    if (registry_pid_ > 0) {
      kill(registry_pid_, SIGTERM);
      int status = 0;
      waitpid(registry_pid_, &status, 0);
    }
    if (deleted_ && gk_test::docker_engine_answers()) {
      // Whatever happened: the engine holds every pinned image again, from the build's archives.
      for (const std::string& pin : kPins) {
        const std::string id = first_line(kBin + "/" + pin + ".id");
        if (run({"docker", "image", "inspect", "--format", "{{.Id}}", id}).succeeded()) continue;
        const ProcessOutcome o = run({"docker", "load", "--input", kBin + "/" + pin + ".tar"});
        EXPECT_TRUE(o.succeeded()) << "restoring " << pin << ": " << o.describe();
        EXPECT_TRUE(run({"docker", "image", "inspect", id}).succeeded()) << pin << " " << id << " not restored";
      }
    }
    if (gk_test::docker_engine_answers()) {
      const ProcessOutcome o = run({"docker", "ps", "-aq", "--filter", "label=spacectl.space.owner=" + owner_});
      EXPECT_EQ(o.out, "") << "containers left behind for owner " << owner_;
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  bool ready() {
    if (!gk_test::docker_engine_answers() || !program_exists("docker-registry") || !program_exists("skopeo")) return false;
    for (const std::string& pin : kPins) {
      if (!exists(kBin + "/" + pin + ".id") || !exists(kBin + "/" + pin + ".tar")) return false;
    }
    return true;
  }

  // docker-registry on a free loopback port with a private config and storage under dir_.
  void start_registry() {
    port_ = gk_test::free_loopback_port();
    ASSERT_NE(port_, 0);
    const std::string config = dir_ + "/registry.yml";
    std::ofstream(config) << "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: " << dir_
                          << "/storage\nhttp:\n  addr: 127.0.0.1:" << port_ << "\n";
    const std::string log = dir_ + "/registry.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> args = {"docker-registry", "serve", config};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&registry_pid_, "docker-registry", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "posix_spawnp docker-registry";
    for (int i = 0; i < 100 && !registry_answers(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(registry_answers(port_)) << "docker-registry did not answer on 127.0.0.1:" << port_;
    registry_ = "127.0.0.1:" + std::to_string(port_) + "/gk-test";
  }

  // A private copy of the build's pins and archives: the records land here, not in the build.
  void copy_pins() {
    for (const std::string& pin : kPins) {
      for (const char* ext : {".id", ".tar"}) {
        fs::copy_file(kBin + "/" + pin + ext, pins_ + "/" + pin + ext);
      }
    }
  }

  ProcessOutcome spacectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {SPACECTL, "--json", "--owner", owner_, "--state-dir", state_,
                                     "--gatekeeper-image-file", pins_ + "/gatekeeper-image.id",
                                     "--space-image-file", pins_ + "/space-image.id"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }

  // Removes the pinned image (every tag and digest reference) from the engine.
  void delete_from_engine(const std::string& pin) {
    const std::string id = first_line(pins_ + "/" + pin + ".id");
    deleted_ = true;
    const ProcessOutcome o = run({"docker", "image", "rm", "--force", id});
    ASSERT_TRUE(o.succeeded() || o.err.find("No such image") != std::string::npos) << "docker image rm " << id << ": " << o.describe();
    ASSERT_FALSE(run({"docker", "image", "inspect", id}).succeeded()) << id << " is still in the engine";
  }

  std::vector<std::string> repo_digests(const std::string& id) {
    const ProcessOutcome o = run({"docker", "image", "inspect", "--format", "{{json .RepoDigests}}", id});
    const json d = json::parse(o.out, nullptr, false);
    std::vector<std::string> out;
    if (d.is_array()) {
      for (const json& e : d) {
        if (e.is_string()) out.push_back(e.get<std::string>());
      }
    }
    return out;
  }

  std::string create_space() {
    const ProcessOutcome o = spacectl({"space", "create", "--name", "by-digest", "--memory", "256m"});
    const json d = json::parse(o.out, nullptr, false);
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    return d.is_object() && d.contains("id") && d["id"].is_string() ? d["id"].get<std::string>() : std::string();
  }

  json push() {
    const ProcessOutcome o = spacectl({"image", "push", "--registry", registry_, "--test-gatekeeper-image-file",
                                       pins_ + "/gatekeeper-test-image.id"});
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    return json::parse(o.out, nullptr, false);
  }

  std::string owner_, dir_, state_, pins_, registry_;
  std::uint16_t port_ = 0;
  pid_t registry_pid_ = -1;
  bool deleted_ = false;
};

TEST_F(ImageRegistryLiveTest, CreatePullsThePinnedImagesByDigestFromTheRegistry) {
  GK_REQUIRE(ready(), "needs a Docker engine, docker-registry, skopeo and the built images (bin/*-image.{id,tar})");
  ASSERT_NO_FATAL_FAILURE(start_registry());
  ASSERT_NO_FATAL_FAILURE(copy_pins());
  const json pushed = push();
  ASSERT_TRUE(pushed.is_object() && pushed["images"].is_array()) << pushed.dump();
  ASSERT_EQ(pushed["images"].size(), 3u) << pushed.dump();
  for (const json& image : pushed["images"]) {
    const std::string name = image.value("name", "");
    const std::string pin = name == "space-default" ? "space-image" : name + "-image";
    EXPECT_EQ(image.value("id", ""), first_line(pins_ + "/" + pin + ".id")) << name;
    const std::string reference = image.value("reference", "");
    EXPECT_EQ(reference.rfind(registry_ + "/" + name + "@sha256:", 0), 0u) << reference;
    EXPECT_EQ(first_line(pins_ + "/" + pin + ".digest"), reference) << "the record next to the pin";
  }

  for (const char* pin : {"gatekeeper-image", "space-image"}) ASSERT_NO_FATAL_FAILURE(delete_from_engine(pin));
  const std::string id = create_space();
  ASSERT_FALSE(id.empty());
  for (const char* pin : {"gatekeeper-image", "space-image"}) {
    const std::string image = first_line(pins_ + "/" + pin + ".id");
    const std::vector<std::string> digests = repo_digests(image);
    EXPECT_NE(std::find(digests.begin(), digests.end(), first_line(pins_ + "/" + pin + ".digest")), digests.end())
        << image << " came back without the recorded digest reference; RepoDigests: " << ::testing::PrintToString(digests);
  }
  const ProcessOutcome verify = spacectl({"space", "verify", id});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(spacectl({"space", "remove", id}).exit_code, 0);
}

TEST_F(ImageRegistryLiveTest, AnotherImageUnderTheSameTagIsNeverPulledAndARecordNamingItIsRefused) {
  GK_REQUIRE(ready(), "needs a Docker engine, docker-registry, skopeo and the built images (bin/*-image.{id,tar})");
  ASSERT_NO_FATAL_FAILURE(start_registry());
  ASSERT_NO_FATAL_FAILURE(copy_pins());
  ASSERT_TRUE(push().is_object());
  const std::string pin = first_line(pins_ + "/gatekeeper-image.id");
  const std::string other = first_line(pins_ + "/gatekeeper-test-image.id");
  ASSERT_NE(pin, other);

  // The registry now serves the TEST-ONLY twin under the gatekeeper's repository and tag.
  const std::string tag = registry_ + "/gatekeeper:" + std::string(GK_PROJECT_VERSION);
  const ProcessOutcome moved = run({"skopeo", "copy", "--quiet", "--digestfile", dir_ + "/other.digest", "--dest-tls-verify=false",
                                    "docker-archive:" + pins_ + "/gatekeeper-test-image.tar", "docker://" + tag});
  ASSERT_TRUE(moved.succeeded()) << moved.describe();
  const std::string other_digest = first_line(dir_ + "/other.digest");

  // By digest, the moved tag is never looked at: the pinned gatekeeper arrives.
  ASSERT_NO_FATAL_FAILURE(delete_from_engine("gatekeeper-image"));
  const std::string id = create_space();
  ASSERT_FALSE(id.empty());
  const std::vector<std::string> digests = repo_digests(pin);
  EXPECT_NE(std::find(digests.begin(), digests.end(), first_line(pins_ + "/gatekeeper-image.digest")), digests.end())
      << ::testing::PrintToString(digests);
  EXPECT_EQ(spacectl({"space", "remove", id}).exit_code, 0);

  // A record that names what the tag now serves: pulled, found not to be the pin, refused.
  std::ofstream(pins_ + "/gatekeeper-image.digest") << registry_ << "/gatekeeper@" << other_digest << "\n";
  ASSERT_NO_FATAL_FAILURE(delete_from_engine("gatekeeper-image"));
  const ProcessOutcome refused = spacectl({"space", "create", "--name", "refused", "--memory", "256m"});
  const json d = json::parse(refused.out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << refused.out << refused.err;
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_EQ(d["error"]["code"], "image_mismatch") << refused.out;
  const std::string message = d["error"].value("message", "");
  EXPECT_NE(message.find(pin), std::string::npos) << "names the pin: " << message;
  EXPECT_NE(message.find(other), std::string::npos) << "names what the registry served: " << message;
  EXPECT_NE(message.find(other_digest), std::string::npos) << "names the reference pulled: " << message;
}

// With no registry configured the archive next to the pin is streamed through the engine's CLI;
// an archive that holds another image is refused the same way.
TEST_F(ImageRegistryLiveTest, WithoutARecordTheArchiveIsLoadedAndOneThatIsNotThePinIsRefused) {
  GK_REQUIRE(ready(), "needs a Docker engine, docker-registry, skopeo and the built images (bin/*-image.{id,tar})");
  ASSERT_NO_FATAL_FAILURE(copy_pins());
  const std::string pin = first_line(pins_ + "/gatekeeper-image.id");
  const std::string other = first_line(pins_ + "/gatekeeper-test-image.id");

  ASSERT_NO_FATAL_FAILURE(delete_from_engine("gatekeeper-image"));
  const std::string id = create_space();
  ASSERT_FALSE(id.empty());
  EXPECT_TRUE(run({"docker", "image", "inspect", pin}).succeeded()) << "loaded from " << pins_ << "/gatekeeper-image.tar";
  EXPECT_EQ(spacectl({"space", "remove", id}).exit_code, 0);

  fs::copy_file(pins_ + "/gatekeeper-test-image.tar", pins_ + "/gatekeeper-image.tar", fs::copy_options::overwrite_existing);
  ASSERT_NO_FATAL_FAILURE(delete_from_engine("gatekeeper-image"));
  const ProcessOutcome refused = spacectl({"space", "create", "--name", "refused", "--memory", "256m"});
  const json d = json::parse(refused.out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << refused.out << refused.err;
  EXPECT_EQ(d["error"]["code"], "image_mismatch") << refused.out;
  const std::string message = d["error"].value("message", "");
  EXPECT_NE(message.find(pin), std::string::npos) << message;
  EXPECT_NE(message.find(other), std::string::npos) << message;
}

// Podman pulls the pin by its recorded digest from the same loopback registry: told
// --tls-verify=false (the registry speaks plain HTTP, which Docker allows loopback by itself and
// Podman only when told), and only because the registry is on loopback.
TEST_F(ImageRegistryLiveTest, PodmanPullsThePinByDigestFromALoopbackRegistry) {
  GK_REQUIRE(
      ready(),
      "needs a Docker engine, docker-registry, skopeo and the built images (bin/*-image.{id,tar})");
  GK_REQUIRE(testing::podman_answers(),
             "no rootful Podman answers (podman --runtime runc info; .ci/setup installs it)");
  ASSERT_NO_FATAL_FAILURE(start_registry());
  ASSERT_NO_FATAL_FAILURE(copy_pins());
  ASSERT_TRUE(push().is_object());
  const std::string pin = first_line(pins_ + "/space-image.id");
  const std::string record = first_line(pins_ + "/space-image.digest");
  ASSERT_EQ(record.rfind(registry_ + "/space-default@sha256:", 0), 0u) << record;
  Engine podman;
  podman.kind = EngineKind::kPodman;
  const DockerCli cli(podman);
  // Every name off first (podman rmi refuses an image of several names), never --force (that
  // would remove containers using it).
  (void)run({"podman", "untag", pin});
  const ProcessOutcome removed = run({"podman", "--runtime", "runc", "image", "rm", pin});
  ASSERT_TRUE(removed.succeeded() || removed.err.find("image not known") != std::string::npos)
      << removed.describe();
  ASSERT_FALSE(run({"podman", "image", "exists", pin}).succeeded())
      << pin << " is still in Podman's store";

  const std::vector<std::string> flags = engine_pull_flags(EngineKind::kPodman, record);
  EXPECT_EQ(flags, std::vector<std::string>{"--tls-verify=false"});
  Result<EnsuredImage> pulled = ensure_pinned_image(cli, pins_ + "/space-image.id", flags);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_EQ(pulled->arrival, ImageArrival::kPulled);
  EXPECT_EQ(pulled->from, record);
  EXPECT_EQ(pulled->id, pin);
  const ProcessOutcome digests =
      run({"podman", "image", "inspect", "--format", "{{json .RepoDigests}}", pin});
  EXPECT_NE(digests.out.find(record), std::string::npos) << digests.out;
}

}  // namespace
}  // namespace controller
