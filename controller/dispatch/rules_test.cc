// The dispatcher's pure rules: both sides of every boundary.
#include "controller/dispatch/rules.h"

#include <set>

#include <gtest/gtest.h>

namespace controller::dispatch {
namespace {

const std::string kId = "0123456789ab";
// "image" + "/" + subtype: written apart so no line reads like a path into the image/ folder.
std::string img(const std::string& subtype) { return std::string("image") + "/" + subtype; }

TEST(SpaceTargetTest, MapsThePrefixedPathToTheInnerApiPath) {
  auto t = parse_space_target("/api/spaces/0123456789ab/session?directory=%2Fspaces");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->id, kId);
  EXPECT_EQ(t->inner_path, "/api/session");
  EXPECT_EQ(t->query, "directory=%2Fspaces");
  auto root = parse_space_target("/api/spaces/0123456789ab/");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->inner_path, "/api/");
}

TEST(SpaceTargetTest, RefusesIdsThatAreNotTwelveLowercaseHex) {
  for (const char* t : {"/api/spaces/0123456789a/session", "/api/spaces/0123456789abc/session",
                        "/api/spaces/0123456789AB/session", "/api/spaces/0123456789ag/session",
                        "/api/spaces/0123456789ab", "/api/spaces/0123456789ab?x=/", "/api/spaces//session",
                        "/api/space/0123456789ab/session", "/API/spaces/0123456789ab/session"})
    EXPECT_FALSE(parse_space_target(t).has_value()) << t;
}

TEST(RouteClassTest, HostOnlyFamiliesMatchWholeSegmentsCaseInsensitively) {
  EXPECT_EQ(route_class("/api/provider"), RouteClass::kHostOnly);
  EXPECT_EQ(route_class("/api/Provider/x"), RouteClass::kHostOnly);
  EXPECT_EQ(route_class("/api/providers"), RouteClass::kHostOnly);
  EXPECT_EQ(route_class("/api/config/settings"), RouteClass::kHostOnly);
  EXPECT_EQ(route_class("/api/openchamber/tunnel/x"), RouteClass::kHostOnly);
  // Just outside: a longer segment and a sibling under /api/config.
  EXPECT_EQ(route_class("/api/providerx"), RouteClass::kForward);
  EXPECT_EQ(route_class("/api/config/agents"), RouteClass::kForward);
  EXPECT_EQ(route_class("/api/openchamber"), RouteClass::kForward);
}

TEST(RouteClassTest, RoutesAcrossTheBoundaryAreRefused) {
  EXPECT_EQ(route_class("/api/git/worktrees"), RouteClass::kRefusedAcrossBoundary);
  EXPECT_EQ(route_class("/api/fs/preview/a.html"), RouteClass::kRefusedAcrossBoundary);
  EXPECT_EQ(route_class("/api/FS/SERVE"), RouteClass::kRefusedAcrossBoundary);
  EXPECT_EQ(route_class("/api/preview/proxy"), RouteClass::kRefusedAcrossBoundary);
  EXPECT_EQ(route_class("/api/session/abc/move"), RouteClass::kRefusedAcrossBoundary);
  EXPECT_EQ(route_class("/api/session/abc/message"), RouteClass::kForward);
  EXPECT_EQ(route_class("/api/session/move"), RouteClass::kForward);
  EXPECT_EQ(route_class("/api/session"), RouteClass::kForward);
  EXPECT_EQ(route_class("/api/git/status"), RouteClass::kForward);
  EXPECT_EQ(route_class("/api/fs/raw"), RouteClass::kForward);
}

TEST(RouteClassTest, ZeroValueRefuses) { EXPECT_EQ(RouteClass{}, RouteClass::kRefusedAcrossBoundary); }

TEST(DirectoryGuardTest, InsideTheSpacePasses) {
  EXPECT_FALSE(directory_outside_space("directory=%2Fspaces%2F0123456789ab", {}, kId));
  EXPECT_FALSE(directory_outside_space("directory=/spaces/0123456789ab/project", {}, kId));
  EXPECT_FALSE(directory_outside_space("", {{"x-opencode-directory", "/spaces/0123456789ab/p"}}, kId));
  EXPECT_FALSE(directory_outside_space("other=/etc", {}, kId));
}

TEST(DirectoryGuardTest, OutsideAfterNormalisationIsRefused) {
  EXPECT_TRUE(directory_outside_space("directory=/spaces/0123456789ab/../ffffffffffff", {}, kId));
  EXPECT_TRUE(directory_outside_space("directory=/spaces/0123456789abc", {}, kId));  // a longer id
  EXPECT_TRUE(directory_outside_space("directory=/home/user", {}, kId));
  EXPECT_TRUE(directory_outside_space("location%5Bdirectory%5D=/etc", {}, kId));
  EXPECT_TRUE(directory_outside_space("directory=relative", {}, kId));
  EXPECT_TRUE(directory_outside_space("", {{"X-OpenCode-Directory", "%2Fhome%2Fuser"}}, kId));
  EXPECT_TRUE(directory_outside_space(
      "", {{"x-opencode-directory", "%2Fetc"}, {"x-opencode-directory-encoding", "uri"}}, kId));
  EXPECT_TRUE(directory_outside_space("", {{"x-opencode-directory", "\\spaces\\0123456789ab\\..\\x"}}, kId));
}

TEST(DirectoryGuardTest, UnprefixedRequestsNamingASpaceDirectoryNeedThePrefix) {
  EXPECT_TRUE(directory_needs_prefix("/api/session?directory=/spaces/0123456789ab", {}));
  EXPECT_TRUE(directory_needs_prefix("/api/x", {{"x-opencode-directory", "/spaces"}}));
  EXPECT_TRUE(directory_needs_prefix("/api/x?directory=/home/../spaces/a", {}));
  EXPECT_FALSE(directory_needs_prefix("/api/x?directory=/spacesx/a", {}));
  EXPECT_FALSE(directory_needs_prefix("/api/spaces/0123456789ab/x?directory=/spaces/0123456789ab", {}));
  EXPECT_FALSE(directory_needs_prefix("/health?directory=/spaces/a", {}));
}

TEST(QueryTest, CredentialParametersAreStripped) {
  EXPECT_EQ(strip_credential_query("a=1&oc_url_token=s&b=2&oc_client_token=t"), "a=1&b=2");
  EXPECT_EQ(strip_credential_query("oc%5Furl%5Ftoken=s"), "");
  EXPECT_EQ(strip_credential_query("oc_url_tokenx=1"), "oc_url_tokenx=1");
}

TEST(HeaderRulesTest, CredentialAndHopByHopRequestHeadersAreDropped) {
  for (const char* h : {"Cookie", "authorization", "Proxy-Authorization", "Host", "Connection", "Keep-Alive",
                        "Transfer-Encoding", "TE", "Trailer", "Upgrade", "Expect", "Origin", "Referer",
                        "Accept-Encoding", "Proxy-Connection", "X-Forwarded-For", "Forwarded", "Sec-WebSocket-Key"})
    EXPECT_TRUE(request_header_dropped(h)) << h;
  for (const char* h : {"content-type", "content-length", "accept", "x-opencode-directory", "user-agent", "cookies"})
    EXPECT_FALSE(request_header_dropped(h)) << h;
}

TEST(HeaderRulesTest, OnlyAllowListedAnswerHeadersPass) {
  for (const char* h : {"Content-Type", "content-length", "ETag", "x-next-cursor", "Date"})
    EXPECT_TRUE(response_header_allowed(h)) << h;
  for (const char* h : {"Set-Cookie", "Clear-Site-Data", "Refresh", "Location", "WWW-Authenticate", "Connection",
                        "Transfer-Encoding", "Content-Security-Policy", "Access-Control-Allow-Origin"})
    EXPECT_FALSE(response_header_allowed(h)) << h;
}

TEST(ContentTypeTest, PageRenderingTypesAreServedAsText) {
  for (const std::string& t : {std::string("text/html"), std::string("Text/HTML; charset=utf-8"),
                               std::string("application/xhtml+xml"), img("svg+xml"), std::string("text/xml"),
                               std::string("application/xml"), std::string("application/pdf"), std::string()})
    EXPECT_EQ(served_content_type("/api/file", t).content_type, "text/plain; charset=utf-8") << t;
  EXPECT_EQ(served_content_type("/api/file", "application/json").content_type, "application/json");
  EXPECT_EQ(served_content_type("/api/file", "text/event-stream").content_type, "text/event-stream");
}

TEST(ContentTypeTest, RawFilesKeepOnlyImagesAudioAndVideo) {
  EXPECT_EQ(served_content_type("/api/fs/raw", img("png")).content_type, img("png"));
  EXPECT_FALSE(served_content_type("/api/fs/raw", img("png")).attachment);
  EXPECT_EQ(served_content_type("/api/fs/raw", img("x-icon")).content_type, img("x-icon"));
  EXPECT_EQ(served_content_type("/api/FS/raw", "video/mp4").content_type, "video/mp4");
  for (const std::string& t : {img("svg+xml"), std::string("text/html"), std::string("application/javascript"),
                               std::string(), std::string("video/"), img("pngx")}) {
    const ServedType s = served_content_type("/api/fs/raw", t);
    EXPECT_EQ(s.content_type, "application/octet-stream") << t;
    EXPECT_TRUE(s.attachment) << t;
  }
}

TEST(RedirectTest, EveryThreeHundredExceptNotModifiedIsRefused) {
  for (int s : {300, 301, 302, 303, 307, 308, 399}) EXPECT_TRUE(redirect_refused(s)) << s;
  for (int s : {200, 204, 299, 304, 400, 401}) EXPECT_FALSE(redirect_refused(s)) << s;
}

TEST(WebSocketRulesTest, OnlyTheFourSocketPathsOpen) {
  for (const char* p : {"/api/terminal/ws", "/api/dev-tunnel", "/api/event/ws", "/api/global/event/ws"})
    EXPECT_TRUE(websocket_path_allowed(p)) << p;
  for (const char* p : {"/api/terminal/ws/x", "/api/terminal", "/api/event", "/api/session"})
    EXPECT_FALSE(websocket_path_allowed(p)) << p;
  EXPECT_TRUE(websocket_answer_header_allowed("Sec-WebSocket-Accept"));
  EXPECT_FALSE(websocket_answer_header_allowed("Set-Cookie"));
  EXPECT_TRUE(header_value_unsafe("a\r\nb"));
  EXPECT_TRUE(header_value_unsafe(std::string("a\0b", 3)));
  EXPECT_FALSE(header_value_unsafe("a b"));
}

TEST(TokenTest, MadeTokensAre43Base64UrlCharactersAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    const std::string t = make_space_token();
    EXPECT_EQ(t.size(), 43u);
    EXPECT_TRUE(token_well_formed(t)) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 64u);
}

TEST(TokenTest, ReadBackAcceptsOnlyTheTokenAlphabetAt32To128) {
  EXPECT_TRUE(token_well_formed(std::string(32, 'a')));
  EXPECT_TRUE(token_well_formed(std::string(128, '-')));
  EXPECT_FALSE(token_well_formed(std::string(31, 'a')));
  EXPECT_FALSE(token_well_formed(std::string(129, 'a')));
  EXPECT_FALSE(token_well_formed(std::string(42, 'a') + "\n"));
  EXPECT_FALSE(token_well_formed(std::string(42, 'a') + "="));
}

TEST(SessionCookieTest, TakesTheFirstPairAndItsMaxAge) {
  auto s = parse_session_cookie("oc_ui_session_27600=abc.def; Path=/; HttpOnly; Max-Age=3600");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cookie, "oc_ui_session_27600=abc.def");
  EXPECT_EQ(s->max_age_s, 3600u);
  EXPECT_EQ(renew_after_ms(3600), 3'240'000u);  // 90 %
  auto d = parse_session_cookie("a=b");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->max_age_s, kDefaultSessionSeconds);
}

TEST(SessionCookieTest, RefusesPairsThatCouldEndTheCookieLine) {
  EXPECT_FALSE(parse_session_cookie("=b").has_value());
  EXPECT_FALSE(parse_session_cookie("a").has_value());
  EXPECT_FALSE(parse_session_cookie("a=b\r\nx: y").has_value());
  EXPECT_FALSE(parse_session_cookie("a=b,c").has_value());
}

TEST(RefusalTest, EveryRefusalHasAStableWordAndStatus) {
  EXPECT_EQ(refusal_word(Refusal{}), "space_unreachable");
  EXPECT_EQ(refusal_status(Refusal::kSpaceNotFound), 404);
  EXPECT_EQ(refusal_status(Refusal::kHostOnlyRoute), 403);
  EXPECT_EQ(refusal_status(Refusal::kSpaceSessionExpired), 503);
  EXPECT_EQ(refusal_body(Refusal::kSpaceRedirected),
            "{\"error\":{\"code\":\"space_redirected\",\"message\":\"the space answered with a redirect, which is refused\"}}");
  const std::string a = refusal_answer(Refusal::kSpaceNotFound, true);
  EXPECT_EQ(a.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  EXPECT_NE(a.find("X-Content-Type-Options: nosniff\r\n"), std::string::npos);
}

}  // namespace
}  // namespace controller::dispatch
